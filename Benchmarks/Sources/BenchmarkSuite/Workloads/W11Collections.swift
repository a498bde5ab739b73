import KeyPathBridge
import Observation
import OpenCombine

/// A model holding observable collections, for paths into them.
final class HeraldLists {
    let numbers: ObservableArray<Int>
    let table: ObservableDictionary<Int, Int>

    init(numbers: [Int] = [], table: [Int: Int] = [:]) {
        self.numbers = ObservableArray(numbers)
        self.table = ObservableDictionary(table)
    }
}

/// The Observation peer's model: an `@Observable` class holding plain collections.
@Observable final class ObservedLists {
    var numbers: [Int]
    var table: [Int: Int]

    init(numbers: [Int] = [], table: [Int: Int] = [:]) {
        self.numbers = numbers
        self.table = table
    }
}

/// Re-arms `withObservationTracking` in `onChange` (the usual continuous observer): `read` is
/// what it tracks, `changed` what it does for each change.
final class RearmingObserver: @unchecked Sendable {
    private let read: () -> Void
    private let changed: () -> Void

    init(read: @escaping () -> Void, changed: @escaping () -> Void) {
        self.read = read
        self.changed = changed
        arm()
    }

    private func arm() {
        withObservationTracking(read) { [weak self] in
            guard let self else { return }
            changed()
            arm()
        }
    }
}

/// A seeded operation stream, the same for every system.
private func seededOperations(_ count: Int, seed: UInt64, _ make: (inout SplitMix) -> Int)
    -> [Int]
{
    var random = SplitMix(seed: seed)
    return (0..<count).map { _ in make(&random) }
}

/// SplitMix64: a deterministic generator, so that every system runs the same operations.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// W11: an observable array of 100,000 Ints with 100 index-following observations, 10,000
/// seeded random insert/remove/replace operations. Each observation counts the changes of the
/// element at its index (RAW: the same check by hand after each mutation).
func w11Collections() -> Workload {
    let size = 100_000
    let watched = (0..<100).map { $0 * 997 % size }
    let operationCount = 10_000
    // Each operation: kind (0 insert, 1 remove, 2 replace) and a position.
    let operations = seededOperations(operationCount, seed: 11) { random in
        Int.random(in: 0..<3, using: &random) << 32 | Int.random(in: 0..<size, using: &random)
    }
    func apply(_ operation: Int, to numbers: inout [Int], value: Int) {
        let position = (operation & 0xFFFF_FFFF) % max(numbers.count, 1)
        switch operation >> 32 {
        case 0: numbers.insert(value, at: position)
        case 1: numbers.remove(at: position)
        default: numbers[position] = value
        }
    }
    return Workload(
        id: "W11", summary: "array of 100,000, 100 index observers, 10,000 random edits",
        operations: operationCount, unit: "edit",
        targets: [
            .time(atMost: 3, of: .raw), .time(atMost: 0.5, of: .openCombine),
            .time(atMost: 0.5, of: .observation),
        ],
        cases: [
            Case(.raw) {
                let counter = Counter()
                var numbers = Array(0..<size)
                var last = watched.map { numbers[$0] }
                let observers: [(Int) -> Void] = watched.indices.map { slot in
                    { _ in counter.value &+= 1 }
                }
                return {
                    for (step, operation) in operations.enumerated() {
                        apply(operation, to: &numbers, value: -step)
                        for (slot, index) in watched.enumerated() {
                            let now = numbers[index]
                            if now != last[slot] {
                                last[slot] = now
                                observers[slot](now)
                            }
                        }
                    }
                    return counter.value
                }
            },
            Case(.herald) {
                let counter = Counter()
                let lists = HeraldLists(numbers: Array(0..<size))
                let observer = HeraldObserver()
                for index in watched {
                    observer.observe(
                        lists, PropertyPath(\HeraldLists.numbers).appendingElement(at: index)
                    ) { _ in counter.value &+= 1 }
                }
                return {
                    for (step, operation) in operations.enumerated() {
                        let numbers = lists.numbers
                        let position = (operation & 0xFFFF_FFFF) % max(numbers.count, 1)
                        switch operation >> 32 {
                        case 0: numbers.insert(-step, at: position)
                        case 1: numbers.remove(at: position)
                        default: numbers[position] = -step
                        }
                    }
                    withExtendedLifetime(observer) {}
                    return counter.value
                }
            },
            Case(.openCombine) {
                let counter = Counter()
                let subject = CurrentValueSubject<[Int], Never>(Array(0..<size))
                var subscriptions: [AnyCancellable] = []
                for index in watched {
                    subscriptions.append(
                        subject.map { index < $0.count ? $0[index] : nil }.removeDuplicates()
                            .dropFirst().sink { _ in counter.value &+= 1 })
                }
                return {
                    for (step, operation) in operations.enumerated() {
                        apply(operation, to: &subject.value, value: -step)
                    }
                    withExtendedLifetime(subscriptions) {}
                    return counter.value
                }
            },
            Case(.observation) {
                let counter = Counter()
                let lists = ObservedLists(numbers: Array(0..<size))
                let observers = watched.map { index in
                    RearmingObserver(read: { _ = lists.numbers[index] }) {
                        counter.value &+= 1
                    }
                }
                return {
                    for (step, operation) in operations.enumerated() {
                        apply(operation, to: &lists.numbers, value: -step)
                    }
                    withExtendedLifetime(observers) {}
                    return counter.value
                }
            },
        ])
}

/// W11-append: 100,000 appends to an observable array with one any-mutation observer and one
/// count observer.
func w11Append() -> Workload {
    let appends = 100_000
    return Workload(
        id: "W11-append", summary: "100,000 appends, an any-mutation and a count observer",
        operations: appends, unit: "append",
        notApplicable: [
            .openCombine:
                "not run: a `CurrentValueSubject` of the whole array copies it on every append; "
                + "one trial took 16.2 s (162 µs per append, `--rounds 1 --warmup 0`, "
                + "2026-11-23), 14 trials would take minutes"
        ],
        targets: [.time(atMost: 3, of: .raw), .time(atMost: 0.5, of: .observation)],
        cases: [
            Case(.raw) {
                let counter = Counter()
                var numbers: [Int] = []
                let anyMutation: () -> Void = { counter.value &+= 1 }
                let countChanged: (Int) -> Void = { counter.value &+= $0 & 1 }
                return {
                    for value in 0..<appends {
                        let before = numbers.count
                        numbers.append(value)
                        anyMutation()
                        if numbers.count != before { countChanged(numbers.count) }
                    }
                    return counter.value
                }
            },
            Case(.herald) {
                let counter = Counter()
                let lists = HeraldLists()
                let observer = HeraldObserver()
                observer.observe(lists.numbers) { _ in counter.value &+= 1 }
                observer.observe(lists, PropertyPath(\HeraldLists.numbers).appendingCount()) {
                    counter.value &+= ($0 ?? 0) & 1
                }
                return {
                    let numbers = lists.numbers
                    for value in 0..<appends { numbers.append(value) }
                    withExtendedLifetime(observer) {}
                    return counter.value
                }
            },
            Case(.observation) {
                let counter = Counter()
                let lists = ObservedLists()
                let any = RearmingObserver(read: { _ = lists.numbers }) { counter.value &+= 1 }
                let count = RearmingObserver(read: { _ = lists.numbers.count }) {
                    counter.value &+= 1
                }
                return {
                    for value in 0..<appends { lists.numbers.append(value) }
                    withExtendedLifetime((any, count)) {}
                    return counter.value
                }
            },
        ])
}

/// W11-dict: an observable dictionary of 10,000 keys, 1,000 key observers (500 of them on absent
/// keys), 100,000 seeded random sets and removals.
func w11Dictionary() -> Workload {
    let keys = 10_000
    let operationCount = 100_000
    let observedKeys = (0..<500).map { $0 * 19 % keys } + (0..<500).map { keys + $0 * 3 }
    let operations = seededOperations(operationCount, seed: 12) { random in
        // A key among the present and the observed absent ones; negative: a removal.
        let key = Int.random(in: 0..<(keys + 1_500), using: &random)
        return Bool.random(using: &random) ? key : -key - 1
    }
    let initial = Dictionary(uniqueKeysWithValues: (0..<keys).map { ($0, $0) })
    return Workload(
        id: "W11-dict", summary: "dictionary of 10,000 keys, 1,000 key observers, 100,000 edits",
        operations: operationCount, unit: "edit",
        notApplicable: [
            .openCombine:
                "not run: a `CurrentValueSubject` of the whole dictionary copies it on every edit "
                + "and runs all 1,000 key subscribers; one trial did not finish in 100 s "
                + "(> 1 ms per edit, 2026-11-23)",
            .observation:
                "not run: every edit of the `@Observable` dictionary property fires and re-arms "
                + "all 1,000 observers; one trial did not finish in 100 s (> 1 ms per edit, "
                + "2026-11-23)",
        ],
        targets: [.time(atMost: 3, of: .raw)],
        cases: [
            Case(.raw) {
                // A closure call per observer and mutation, each checking its key.
                let counter = Counter()
                var table = initial
                var last = observedKeys.map { table[$0] }
                return {
                    for (step, operation) in operations.enumerated() {
                        let key = operation >= 0 ? operation : -operation - 1
                        table[key] = operation >= 0 ? step : nil
                        for (slot, observed) in observedKeys.enumerated() where observed == key {
                            if table[observed] != last[slot] {
                                last[slot] = table[observed]
                                counter.value &+= 1
                            }
                        }
                    }
                    return counter.value
                }
            },
            Case(.herald) {
                let counter = Counter()
                let lists = HeraldLists(table: initial)
                let observer = HeraldObserver()
                for key in observedKeys {
                    observer.observe(
                        lists, PropertyPath(\HeraldLists.table).appendingValue(forKey: key)
                    ) { _ in counter.value &+= 1 }
                }
                return {
                    let table = lists.table
                    for (step, operation) in operations.enumerated() {
                        if operation >= 0 {
                            table[operation] = step
                        } else {
                            table[-operation - 1] = nil
                        }
                    }
                    withExtendedLifetime(observer) {}
                    return counter.value
                }
            },
        ])
}

/// W11-index-memory: memory per index-following observation, `observe(lists, numbers.#i)`
/// (typed): 10,000 observations of distinct indices of one array of 10,000 Ints start. Reported
/// as W7 is: bytes per observation (net allocated while the observations start), mallocs and
/// ns per observation start. The issue asks for the figure, with no target.
func w11IndexMemory() -> Workload {
    let observations = 10_000
    return Workload(
        id: "W11-index-memory", summary: "memory per index-following observation (10,000)",
        operations: observations, unit: "observation", reportsBytes: true,
        notApplicable: [
            .raw: "no hand-written reference: the figure is a number of bytes",
            .openCombine: "OpenCombine has no path into a collection",
            .observation: "Observation has no lasting observation to count",
        ],
        cases: [
            Case(.herald) {
                let counter = Counter()
                let lists = HeraldLists(numbers: Array(0..<observations))
                let observer = HeraldObserver()
                return {
                    for index in 0..<observations {
                        observer.observe(
                            lists, PropertyPath(\HeraldLists.numbers).appendingElement(at: index)
                        ) { counter.value &+= $0 ?? 0 }
                    }
                    return lists.numbers.observationCount
                }
            }
        ])
}
