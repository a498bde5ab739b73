import Dispatch
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge
@testable import Messaging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// Models that the tests of several synthetic-property promises share (as PathModel.swift is
// for paths).

/// EBN's chain: fullName ← first, last; address ← fullName + four fields.
final class Contact: SyntheticPropertyOwner {
    @ObservableVar var first = "Ada"
    @ObservableVar var last = "Lovelace"
    @ObservableVar var street = "1 Main St"
    @ObservableVar var city = "London"
    @ObservableVar var state = "LDN"
    @ObservableVar var zip = "N1"
    @ObservableVar var nickname: String? = nil

    @Synthetic({ (contact: Contact) in contact.first + " " + contact.last })
    var fullName: String

    @Synthetic({ (contact: Contact) in
        [contact.fullName, contact.street, contact.city + ", " + contact.state, contact.zip]
            .joined(separator: "\n")
    })
    var address: String

    @Synthetic({ (contact: Contact) in contact.nickname })
    var shortName: String?
}

/// A diamond: left and right over one source, both over both.
final class Diamond {
    @ObservableVar var source = 1
    @Synthetic({ (d: Diamond) in d.source + 1 }) var left: Int
    @Synthetic({ (d: Diamond) in d.source * 10 }) var right: Int
    @Synthetic({ (d: Diamond) in "\(d.left)/\(d.right)" }) var both: String
}

/// Declared paths: a value read outside Herald, and a path unreachable at first.
final class DisplaySettings {
    @ObservableVar var separator = " "
}

final class Declared {
    @ObservableVar var settings: DisplaySettings? = nil
    nonisolated(unsafe) var plainSuffix = "!"
    @Synthetic(
        dependsOn: [.path(PropertyPath(\Declared.$settings).appending(\.$separator))],
        { (d: Declared) in "x" + (d.settings.map { _ in "+" } ?? "-") + d.plainSuffix })
    var typed: String
    @Synthetic(dependsOn: [.path("settings.separator")], { (d: Declared) in d.plainSuffix })
    var text: String
}

/// A variable and a synthetic property over it.
final class Tens: @unchecked Sendable {
    @ObservableVar var a = 0
    @Synthetic({ (t: Tens) in t.a * 10 }) var tenfold: Int
}

/// Two variables, each with a synthetic property over it.
final class PairOfSources: @unchecked Sendable {
    @ObservableVar var x = 1
    @ObservableVar var y = 1
    @Synthetic({ (m: PairOfSources) in m.x * 10 }) var tenfold: Int
    @Synthetic({ (m: PairOfSources) in m.y * 100 }) var hundredfold: Int
}

/// Synthetic properties on two objects that depend on each other's (no cycle among properties).
final class Partner: @unchecked Sendable {
    @ObservableVar var base = 0
    nonisolated(unsafe) var other: Partner?
    @Synthetic({ (p: Partner) in p.base + 1 }) var own: Int
    @Synthetic({ (p: Partner) in p.own + (p.other?.own ?? 0) }) var withOther: Int
}

/// A synthetic property whose function can be held at a gate, and counts how many runs overlap.
final class Gated: @unchecked Sendable {
    @ObservableVar var input = 1
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let holdAtGate = Atomic<Bool>(false)
    let running = Atomic<Int>(0)
    let mostRunning = Atomic<Int>(0)

    @Synthetic({ (g: Gated) in
        let now = g.running.add(1, ordering: .sequentiallyConsistent).newValue
        g.mostRunning.max(now, ordering: .sequentiallyConsistent)
        let value = g.input * 2
        if g.holdAtGate.load(ordering: .sequentiallyConsistent) {
            g.entered.signal()
            g.gate.wait()
        }
        g.running.subtract(1, ordering: .sequentiallyConsistent)
        return value
    })
    var doubled: Int
}

/// A gate that an evaluation passes, or waits at while `hold` is set.
final class HoldingGate: Sendable {
    let hold = Atomic<Bool>(false)
    /// Signalled when an evaluation waits at the gate.
    let entered = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)

    func pass() {
        guard hold.load(ordering: .sequentiallyConsistent) else { return }
        entered.signal()
        opened.wait()
    }

    /// Stops holding, and lets the evaluation that waits go on.
    func open() {
        hold.store(false, ordering: .sequentiallyConsistent)
        opened.signal()
    }
}

/// `p` declares a path through `q`, which reads `p` and can be held at a gate while computed.
final class BoundThroughReader: @unchecked Sendable {
    @ObservableVar var base = 1
    let gate = HoldingGate()
    @Synthetic(dependsOn: [.path(\BoundThroughReader.$q)], { (m: BoundThroughReader) in m.base })
    var p: Int
    @Synthetic({ (m: BoundThroughReader) in
        m.gate.pass()
        return m.p + 1
    })
    var q: Int
}

/// `label` reads the synthetic `positive`, whose function can be held at a gate.
final class HeldCheck: @unchecked Sendable {
    @ObservableVar var input = 1
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let hold = Atomic<Bool>(false)
    @Synthetic({ (s: HeldCheck) in
        let positive = s.input > 0
        if s.hold.load(ordering: .sequentiallyConsistent) {
            s.entered.signal()
            s.gate.wait()
        }
        return positive
    })
    var positive: Bool
    @Synthetic({ (s: HeldCheck) in s.positive ? "yes" : "no" }) var label: String
}

/// `p` = flag ? 0 : `s` + 1 (or `q` + 1), `q` = `s` + 1, `s` = base > 3 && flag ? `p` : base,
/// where `s` can be held at a gate before it reads anything (it reads flag only once base is
/// above 3, so that flag's first change does not mark it, unless `sReadsFlagAlways`).
final class Switching: @unchecked Sendable {
    @ObservableVar var flag = false
    @ObservableVar var base = 1
    let gate = HoldingGate()
    let results = Recording<String>()
    nonisolated(unsafe) var readThroughQ = false
    nonisolated(unsafe) var sReadsFlagAlways = false
    nonisolated(unsafe) var selfReading = false
    @Synthetic({ (m: Switching) in
        m.flag ? (m.selfReading ? m.p : 0) : (m.readThroughQ ? m.q : m.s) + 1
    })
    var p: Int
    @Synthetic({ (m: Switching) in m.s + 1 }) var q: Int
    @Synthetic({ (m: Switching) in
        m.gate.pass()
        return (m.sReadsFlagAlways || m.base > 3) && m.flag ? m.p : m.base
    })
    var s: Int
}

/// `p` = flag ? 0 : `s` + 1, held at a gate when flag is set; `s` = flag ? `p` : base.
final class Ring: @unchecked Sendable {
    @ObservableVar var flag = false
    @ObservableVar var base = 1
    let gate = HoldingGate()
    let results = Recording<String>()
    @Synthetic({ (m: Ring) in
        guard m.flag else { return m.s + 1 }
        m.gate.pass()
        return 0
    })
    var p: Int
    @Synthetic({ (m: Ring) in m.flag ? m.p : m.base }) var s: Int
}

/// A reusable barrier for a fixed number of threads (spins, yielding).
final class PCBarrier: Sendable {
    private let parties: Int
    private let count = Atomic<Int>(0)
    private let generation = Atomic<Int>(0)
    init(parties: Int) { self.parties = parties }
    func wait() {
        let seen = generation.load(ordering: .acquiring)
        if count.add(1, ordering: .acquiringAndReleasing).newValue == parties {
            count.store(0, ordering: .relaxed)
            generation.add(1, ordering: .releasing)
        } else {
            while generation.load(ordering: .acquiring) == seen { sched_yield() }
        }
    }
}

/// Counts events (deinits, mostly).
final class PCCounter: Sendable {
    private let value = Atomic<Int>(0)
    func add() { value.add(1, ordering: .sequentiallyConsistent) }
    var count: Int { value.load(ordering: .sequentiallyConsistent) }
}

/// The sources a branchy synthetic can read.
enum PCSource: CaseIterable, Hashable {
    case flag, a, b, c, d, twiceA, bc, parityA

    static let base: [PCSource] = [.flag, .a, .b, .c, .d]
    static let synthetic: [PCSource] = [.twiceA, .bc, .parityA]

    /// The base variables a synthetic source is computed from.
    var inputs: Set<PCSource> {
        switch self {
        case .twiceA, .parityA: [.a]
        case .bc: [.b, .c]
        default: [self]
        }
    }
}

/// Plain values of the base variables, with the synthetic ones computed from scratch.
struct PCValues: Hashable {
    var flag = 0, a = 1, b = 2, c = 3, d = 4
    func read(_ source: PCSource) -> Int {
        switch source {
        case .flag: flag
        case .a: a
        case .b: b
        case .c: c
        case .d: d
        case .twiceA: a * 2
        case .bc: b + c
        case .parityA: a % 2
        }
    }
    subscript(_ source: PCSource) -> Int {
        get { read(source) }
        set {
            switch source {
            case .flag: flag = newValue
            case .a: a = newValue
            case .b: b = newValue
            case .c: c = newValue
            case .d: d = newValue
            default: preconditionFailure()
            }
        }
    }
    /// `branch` from scratch, and what it reads.
    var branch: (value: Int, read: Set<PCSource>) {
        var read: Set<PCSource> = []
        let value = PCBranchy.formula { source in
            read.insert(source)
            return self.read(source)
        }
        return (value, read)
    }
    var top: Int { branch.value + a * 2 }
}

/// A model whose `branch` reads different sources, in different orders, some several times,
/// depending on `flag` (and on `a`'s parity): every evaluation may keep, drop, reorder, diverge
/// from and converge back onto what the last one read.
final class PCBranchy: @unchecked Sendable {
    @ObservableVar var flag = 0
    @ObservableVar var a = 1
    @ObservableVar var b = 2
    @ObservableVar var c = 3
    @ObservableVar var d = 4
    @Synthetic({ (m: PCBranchy) in m.a * 2 }) var twiceA: Int
    @Synthetic({ (m: PCBranchy) in m.b + m.c }) var bc: Int
    @Synthetic({ (m: PCBranchy) in m.a % 2 }) var parityA: Int
    @Synthetic({ (m: PCBranchy) in PCBranchy.formula { m.read($0) } }) var branch: Int
    /// A diamond over `a` (through `branch` and `twiceA`).
    @Synthetic({ (m: PCBranchy) in m.branch + m.twiceA }) var top: Int

    static func formula(_ read: (PCSource) -> Int) -> Int {
        switch read(.flag) % 5 {
        case 0:  // `a` many times, between the others
            return read(.a) + read(.b) * 3 + read(.a) + read(.a) + read(.c) * 5 + read(.a)
        case 1:  // synthetic sources, `twiceA` twice and not in a row
            return read(.twiceA) + read(.d) * 7 + read(.bc) + read(.twiceA) + read(.parityA) * 11
        case 2:  // diverges from case 0 after `a`, then converges onto its `b`, `c`
            return read(.a) + read(.d) * 13 + read(.b) * 3 + read(.c) * 5
        case 3:  // case 0's sources in reverse, and a synthetic one
            return read(.c) * 5 + read(.b) * 3 + read(.a) + read(.parityA) * 17
        default:  // a branch inside: one synthetic source picks the variable
            return read(.parityA) == 0 ? read(.b) : read(.d) * 19
        }
    }

    func read(_ source: PCSource) -> Int {
        switch source {
        case .flag: flag
        case .a: a
        case .b: b
        case .c: c
        case .d: d
        case .twiceA: twiceA
        case .bc: bc
        case .parityA: parityA
        }
    }

    func write(_ source: PCSource, _ value: Int) {
        switch source {
        case .flag: flag = value
        case .a: a = value
        case .b: b = value
        case .c: c = value
        case .d: d = value
        default: preconditionFailure()
        }
    }

    var values: PCValues { PCValues(flag: flag, a: a, b: b, c: c, d: d) }

    func variable(_ source: PCSource) -> Variable<Int> {
        switch source {
        case .flag: $flag
        case .a: $a
        case .b: $b
        case .c: $c
        case .d: $d
        default: preconditionFailure()
        }
    }

    func synthetic(_ source: PCSource) -> Synthetic<PCBranchy, Int> {
        switch source {
        case .twiceA: $twiceA
        case .bc: $bc
        case .parityA: $parityA
        default: preconditionFailure()
        }
    }

    var evaluationCounts: [Int] {
        [$twiceA, $bc, $parityA, $branch, $top].map(\.evaluationCount)
    }
}

/// Runs `body` on `threads` new POSIX threads that start together, passing each its index, and
/// returns once all have ended (so what their closures captured is released by then, unlike
/// `concurrently`, whose threads may still be exiting).
func pcConcurrently(threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let ready = PCBarrier(parties: threads)
    let started = (0..<threads).map { index in
        JoinableThread {
            ready.wait()
            body(index)
        }
    }
    for thread in started { thread.join() }
}

/// A synthetic property whose function can be held at a gate partway through, after reading
/// `x` and before reading `y` or `z` (which one depends on `useZ`).
final class PCGated: @unchecked Sendable {
    let deaths: PCCounter
    @ObservableVar var x = 1
    @ObservableVar var y = 10
    @ObservableVar var z = 100
    @ObservableVar var useZ = false
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let hold = Atomic<Bool>(false)
    @Synthetic({ (g: PCGated) in
        let x = g.x
        if g.hold.exchange(false, ordering: .sequentiallyConsistent) {
            g.entered.signal()
            g.gate.wait()
        }
        return x + (g.useZ ? g.z : g.y)
    })
    var slow: Int
    init(deaths: PCCounter) { self.deaths = deaths }
    deinit { deaths.add() }
}

/// The test's thread-local key (a C destructor cannot capture it).
nonisolated(unsafe) var globalPCKey = pthread_key_t()

// The objects under attack in the lifetime tests have no `weak` references: they keep inline
// reference counts, so NativeWeak's swift_tryRetain works on them without a side table.

/// Counts deinits.
final class LACounter: Sendable {
    let value = Atomic<Int>(0)
    func add() { value.add(1, ordering: .sequentiallyConsistent) }
    var count: Int { value.load(ordering: .sequentiallyConsistent) }
}

/// An owner of synthetic properties made at run time over a shared source.
final class LAHolder: @unchecked Sendable {
    let source: Variable<Int>
    let deaths: LACounter
    nonisolated(unsafe) var kept: [AnyObject] = []
    init(source: Variable<Int>, deaths: LACounter) {
        self.source = source
        self.deaths = deaths
    }
    deinit { deaths.add() }
}

/// The frame open on this thread, as reads find it (the C thread-local variable).
func openFrame() -> UnsafeMutableRawPointer? { DependencyTracking.currentFrame?.toOpaque() }

/// A chain and a diamond under one outer property, which reads `c` after the inner ones end.
final class OFNest: @unchecked Sendable {
    let problems = Recording<String>()
    @ObservableVar var a = 1
    @ObservableVar var b = 10
    @ObservableVar var c = 100
    @Synthetic({ (m: OFNest) in m.a + 1 }) var inner: Int
    @Synthetic({ (m: OFNest) in m.inner + m.b }) var middle: Int
    @Synthetic({ (m: OFNest) in m.inner * 2 }) var side: Int
    @Synthetic({ (m: OFNest) in
        let mine = openFrame()
        let value = m.middle + m.side
        if mine == nil || mine != openFrame() { m.problems.append("outer lost its frame") }
        return value + m.c
    })
    var outer: Int
}

/// What the sources of a `PCBranchy` list as their dependents (a variable's list, and a synthetic
/// property's `state`).
extension PCBranchy {
    /// The live dependents of `source`, by identity.
    func dependents(of source: PCSource) -> Set<ObjectIdentifier> {
        let list: DependentList?
        if PCSource.base.contains(source) {
            let core = variable(source).core
            list = core.lock.withLock { core.dependents }
        } else {
            let property = synthetic(source)
            list = property.core.lock.withLock { property.state.dependents }
        }
        return Set((list?.entries ?? []).filter(\.isLive).map(\.identity))
    }
}

/// A property whose function pauses at a gate on the evaluations `stops` names (see `RunGate`),
/// and one that reads it: for tests of who waits and of values computed aside.
final class GatedSlow: @unchecked Sendable {
    let gate: RunGate
    init(stops: [Int]) { gate = RunGate(stops: stops) }
    @ObservableVar var base = 1
    @Synthetic({ (model: GatedSlow) in
        let value = model.base * 10
        model.gate.pass()
        return value
    })
    var slow: Int
    @Synthetic({ (model: GatedSlow) in model.slow + 1 }) var reader: Int
}
