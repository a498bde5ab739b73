import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Seeded stress of dependencies that switch while threads compute (from the adversarial round
/// of the give-way change, which found with it two markings chasing each other round a circle
/// of what properties read last): readers read random properties while writers switch which
/// properties read which, change a variable, and invalidate or set properties. No state of the
/// program has a cycle, so none may be reported; once the threads are done, no function ran
/// concurrently with itself, and every value is the one computed from scratch.
@Suite("Synthetic properties: switching dependencies under stress (concurrency)", .serialized)
struct SyntheticSwitchingStressConcurrencyTests {
    @Test(
        "threads: values as from scratch, and no cycle reported, while dependencies switch",
        arguments: [(false, false, 0), (true, false, 0), (false, true, 0), (true, true, 2)])
    func switchingUnderStress(invalidations: Bool, sets: Bool, observed: Int) {
        for seed in UInt64(1)...4 {
            Self.stress(
                seed: seed, invalidations: invalidations, sets: sets, observed: observed)
        }
    }

    static func stress(seed: UInt64, invalidations: Bool, sets: Bool, observed: Int) {
        let (readers, writers, rounds) = (3, 2, 3_000)
        let graph = SwitchGraph(count: 8, modes: 3, seed: seed)
        // Every property gets a value in every mode (a circle through one that has none is a
        // documented limit).
        for mode in 0..<graph.modes {
            graph.mode = mode
            _ = graph.properties.map(\.value)
        }
        graph.mode = 0
        let observer = TestObserver()
        for property in graph.properties.prefix(observed) { observer.observe(property) { _ in } }
        let box = UncheckedBox(graph)
        let writersDone = Atomic<Int>(0)
        concurrently(threads: readers + writers) { index in
            let graph = box.value
            var random = SeededGenerator(seed: seed &* 31 &+ UInt64(index))
            let count = graph.properties.count
            guard index >= readers else {
                while writersDone.load(ordering: .relaxed) < writers {
                    _ = graph.properties[Int.random(in: 0..<count, using: &random)].value
                }
                return
            }
            for _ in 0..<rounds {
                let property = graph.properties[Int.random(in: 0..<count, using: &random)]
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<4: graph.mode = Int.random(in: 0..<graph.modes, using: &random)
                case 4..<6: graph.flags = Int.random(in: 0..<(1 << count), using: &random)
                case 6: graph.base = Int.random(in: 0..<100, using: &random)
                case 7 where invalidations: property.invalidate()
                case 8 where sets:
                    property.set(Int.random(in: 0..<1_000, using: &random), as: graph.properties[0])
                default: _ = property.value
                }
            }
            writersDone.add(1, ordering: .relaxed)
        }
        // A change above every property: no set value outlasts it.
        if sets { graph.base += 1_000 }
        let expected = graph.fromScratch()
        #expect(graph.properties.map(\.value) == expected, "seed \(seed)")
        withExtendedLifetime(observer) {}
    }
}

/// `count` synthetic properties whose dependencies switch with `mode`: in each mode a seeded
/// permutation ranks them, and a property reads (after `mode`, and its bit of `flags`, which
/// picks one of two seeded subsets) only lower-ranked ones, so that no state has a cycle, while
/// a change of mode reverses reads, and makes threads wait for each other in circles.
final class SwitchGraph: @unchecked Sendable {
    @ObservableVar var mode = 0
    @ObservableVar var base = 1
    @ObservableVar var flags = 0
    let modes: Int
    /// `ranks[mode][i]`.
    private let ranks: [[Int]]
    /// `reads[mode][flag][i]`: bit `j` set if `i` reads `j` (when `j` ranks lower).
    private let reads: [[[UInt64]]]
    /// How many evaluations of each property are running.
    private let running: [RunningCount]
    /// How many times a function found itself already running.
    let overlaps = Atomic<Int>(0)
    private let steps = Atomic<Int>(0)
    var properties: [Synthetic<SwitchGraph, Int>] = []
    private static let modulus = 1_000_003

    init(count: Int, modes: Int, seed: UInt64) {
        self.modes = modes
        var random = SeededGenerator(seed: seed)
        ranks = (0..<modes).map { _ in
            var rank = [Int](repeating: 0, count: count)
            for (position, i) in Array(0..<count).shuffled(using: &random).enumerated() {
                rank[i] = position
            }
            return rank
        }
        reads = (0..<modes).map { _ in (0..<2).map { _ in (0..<count).map { _ in random.next() } } }
        running = (0..<count).map { _ in RunningCount() }
        for i in 0..<count {
            properties.append(
                Synthetic(owner: self, name: "q\(i)") { (graph: SwitchGraph) in graph.compute(i) })
        }
    }

    /// What `i` reads in `mode` with its flag `flag`, in an order that differs from the ranks.
    private func sources(of i: Int, mode: Int, flag: Int) -> [Int] {
        let (rank, mask, count) = (ranks[mode], reads[mode][flag][i], properties.count)
        return (0..<count).filter { rank[$0] < rank[i] && (mask >> UInt64($0)) & 1 == 1 }
            .sorted { (rank[$0] * 7 + $0) % count < (rank[$1] * 7 + $1) % count }
    }

    /// Lets other threads in now and then, so that switches land inside evaluations.
    private func pause() {
        if steps.add(1, ordering: .relaxed).newValue % 3 == 0 { sched_yield() }
    }

    private func compute(_ i: Int) -> Int {
        if running[i].count.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
            overlaps.add(1, ordering: .sequentiallyConsistent)
        }
        defer { running[i].count.subtract(1, ordering: .sequentiallyConsistent) }
        let mode = self.mode % modes
        pause()
        let flag = (flags >> i) & 1
        pause()
        var value = (mode * 7 + i * 13 + base) % Self.modulus
        for j in sources(of: i, mode: mode, flag: flag) {
            value = (value + properties[j].value * 3) % Self.modulus
            pause()
        }
        return value
    }

    /// Every property's value computed from scratch in the current state.
    func fromScratch() -> [Int] {
        let (mode, flags, base) = (self.mode % modes, self.flags, self.base)
        var known = [Int?](repeating: nil, count: properties.count)
        func value(_ i: Int) -> Int {
            if let result = known[i] { return result }
            var result = (mode * 7 + i * 13 + base) % Self.modulus
            for j in sources(of: i, mode: mode, flag: (flags >> i) & 1) {
                result = (result + value(j) * 3) % Self.modulus
            }
            known[i] = result
            return result
        }
        return (0..<properties.count).map(value)
    }
}

/// A count that threads share.
final class RunningCount: Sendable {
    let count = Atomic<Int>(0)
}
