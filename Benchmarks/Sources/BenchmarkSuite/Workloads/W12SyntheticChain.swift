import KeyPathBridge
import Observation
import OpenCombine

/// W12 synthetic property chain (EBN's LazyLoader example): fullName ← first, last; address ←
/// fullName + street, city, state, zip. 100,000 dependency changes, rotating over the six
/// fields, each a change. The checksum is the number of times the two functions ran, which the
/// report checks against the least that is correct: fullName and address once for a name
/// change, address once for another field.
///
/// - W12-lazy: no observer; address is read after each change.
/// - W12-observed: an observer of address, which runs once per change (each changes it).
func w12SyntheticChain(observed: Bool) -> Workload {
    let changes = 100_000
    let calls = W12.leastCalls(changes: changes)
    return Workload(
        id: observed ? "W12-observed" : "W12-lazy",
        summary: observed
            ? "synthetic chain, address observed (function calls)"
            : "synthetic chain, address read after each change (function calls)",
        operations: changes, unit: "change",
        notApplicable: observed
            ? [:]
            : [.openCombine: "OpenCombine has no lazy values: a pipeline computes on every send"],
        targets: [.time(atMost: 3, of: .raw), .time(atMost: 0.5, of: .observation)]
            + (observed ? [.time(atMost: 0.5, of: .openCombine)] : []),
        notifications: calls,
        cases: [
            Case(.raw) {
                let calls = Counter()
                let effects = Counter()
                let person = RawPerson(calls: calls)
                if observed { person.observer = { _ in effects.value &+= 1 } }
                _ = person.address
                calls.value = 0
                return {
                    for change in 0..<changes {
                        person.change(field: change % 6, to: change + 1)
                        if !observed { _ = person.address }
                    }
                    W12.check(
                        "RAW", calls: calls.value, expected: W12.leastCalls(changes: changes),
                        effects: effects.value, observed)
                    return calls.value
                }
            },
            Case(.herald) {
                let calls = Counter()
                let effects = Counter()
                let person = HeraldPerson(calls: calls)
                let observer = HeraldObserver()
                if observed { observer.observe(person.$address) { _ in effects.value &+= 1 } }
                _ = person.address
                calls.value = 0
                return {
                    for change in 0..<changes {
                        person.change(field: change % 6, to: change + 1)
                        if !observed { _ = person.address }
                    }
                    withExtendedLifetime(observer) {}
                    W12.check(
                        "Herald", calls: calls.value, expected: W12.leastCalls(changes: changes),
                        effects: effects.value, observed)
                    return calls.value
                }
            },
            Case(.openCombine) {
                let calls = Counter()
                let person = CombinePerson(calls: calls)
                let observer = CombineObserver()
                person.address.sink { _ in }.store(in: &observer.cancellables)
                calls.value = 0
                return {
                    for change in 0..<changes { person.change(field: change % 6, to: change + 1) }
                    withExtendedLifetime(observer) {}
                    return calls.value
                }
            },
            Case(.observation) {
                let calls = Counter()
                let person = ObservedPerson(calls: calls)
                let effects = Counter()
                let observer = ContinuousAddressObserver(person, effects: effects)
                if observed { observer.arm() }
                calls.value = 0
                return {
                    for change in 0..<changes {
                        person.change(field: change % 6, to: change + 1)
                        if !observed { _ = person.address }
                    }
                    withExtendedLifetime(observer) {}
                    return calls.value
                }
            },
        ])
}

enum W12 {
    /// The least number of function calls for `changes` changes rotating over the six fields
    /// (first, last, street, city, state, zip): 2 for a name, 1 for another field.
    static func leastCalls(changes: Int) -> Int {
        (0..<changes).reduce(0) { $0 + ($1 % 6 < 2 ? 2 : 1) }
    }

    /// Stops the run if a system that must be exact was not.
    static func check(_ system: String, calls: Int, expected: Int, effects: Int, _ observed: Bool) {
        guard calls == expected, !observed || effects == 100_000 else {
            fatalError(
                "W12: \(system) ran the functions \(calls) times (least: \(expected)) and the "
                    + "observer \(effects) times")
        }
    }

    static func fullName(_ first: Int, _ last: Int, _ calls: Counter) -> Int {
        calls.value &+= 1
        return first &* 31 &+ last
    }

    static func address(_ fullName: Int, _ fields: (Int, Int, Int, Int), _ calls: Counter) -> Int {
        calls.value &+= 1
        return fullName &+ fields.0 &* 3 &+ fields.1 &* 5 &+ fields.2 &* 7 &+ fields.3 &* 11
    }
}

/// The six fields of W12's person, set by index (the same for Herald and Observation).
protocol W12Fields: AnyObject {
    var first: Int { get set }
    var last: Int { get set }
    var street: Int { get set }
    var city: Int { get set }
    var state: Int { get set }
    var zip: Int { get set }
}

extension W12Fields {
    func change(field: Int, to value: Int) {
        switch field {
        case 0: first = value
        case 1: last = value
        case 2: street = value
        case 3: city = value
        case 4: state = value
        default: zip = value
        }
    }
}

/// RAW: stored fields whose `didSet` clears hand-written dirty flags; lazy getters; the observer
/// told when address is recomputed after a change. The fields are one flat buffer and the
/// stored properties are unchecked, so that no access pays a dynamic exclusivity check (or an
/// array's uniqueness check on each write).
final class RawPerson {
    let calls: Counter
    @exclusivity(unchecked) var observer: ((Int) -> Void)?
    private let fields = UnsafeMutableBufferPointer<Int>.filled(0, 6)
    @exclusivity(unchecked) private var cachedFullName = 0
    @exclusivity(unchecked) private var fullNameValid = false
    @exclusivity(unchecked) private var cachedAddress = 0
    @exclusivity(unchecked) private var addressValid = false

    init(calls: Counter) { self.calls = calls }

    deinit { fields.deallocate() }

    func change(field: Int, to value: Int) {
        fields[field] = value
        if field < 2 { fullNameValid = false }
        addressValid = false
        if let observer { observer(address) }
    }

    var fullName: Int {
        if !fullNameValid {
            cachedFullName = W12.fullName(fields[0], fields[1], calls)
            fullNameValid = true
        }
        return cachedFullName
    }

    var address: Int {
        if !addressValid {
            cachedAddress = W12.address(
                fullName, (fields[2], fields[3], fields[4], fields[5]), calls)
            addressValid = true
        }
        return cachedAddress
    }
}

/// Herald: the chain as synthetic properties over `@ObservableVar`s.
final class HeraldPerson: W12Fields {
    let calls: Counter
    @ObservableVar var first = 0
    @ObservableVar var last = 0
    @ObservableVar var street = 0
    @ObservableVar var city = 0
    @ObservableVar var state = 0
    @ObservableVar var zip = 0
    @Synthetic({ (p: HeraldPerson) in W12.fullName(p.first, p.last, p.calls) })
    var fullName: Int
    @Synthetic({ (p: HeraldPerson) in
        W12.address(p.fullName, (p.street, p.city, p.state, p.zip), p.calls)
    })
    var address: Int

    init(calls: Counter) { self.calls = calls }

}

/// Observation: stored properties, and computed properties that compute on every read (it
/// caches nothing).
@Observable
final class ObservedPerson: W12Fields {
    @ObservationIgnored let calls: Counter
    var first = 0
    var last = 0
    var street = 0
    var city = 0
    var state = 0
    var zip = 0
    var fullName: Int { W12.fullName(first, last, calls) }
    var address: Int { W12.address(fullName, (street, city, state, zip), calls) }

    init(calls: Counter) { self.calls = calls }

}

/// Observation's continuous observer of address: re-armed in `onChange`, reading address.
final class ContinuousAddressObserver: @unchecked Sendable {
    let person: ObservedPerson
    let effects: Counter

    init(_ person: ObservedPerson, effects: Counter) {
        self.person = person
        self.effects = effects
    }

    func arm() {
        _ = withObservationTracking {
            person.address
        } onChange: { [weak self] in
            guard let self else { return }
            self.effects.value &+= 1
            self.arm()
        }
    }
}

/// OpenCombine: a subject per field; fullName and address as `CombineLatest` and `map`.
final class CombinePerson {
    let fields = (0..<6).map { _ in CurrentValueSubject<Int, Never>(0) }
    let address: AnyPublisher<Int, Never>
    private var combiners: [AnyObject] = []

    init(calls: Counter) {
        let fullName = fields[0].combineLatest([fields[1].eraseToAnyPublisher()], keep: &combiners)
            .map { W12.fullName($0[0], $0[1], calls) }
            .share()
        address = fullName.combineLatest(
            fields[2...].map { $0.eraseToAnyPublisher() }, keep: &combiners
        )
        .map { W12.address($0[0], ($0[1], $0[2], $0[3], $0[4]), calls) }
        .eraseToAnyPublisher()
    }

    func change(field: Int, to value: Int) { fields[field].value = value }
}
