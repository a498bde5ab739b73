import Dispatch
import Foundation
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

/// The frame open on this thread, as reads find it (the C thread-local variable).
private func openFrame() -> UnsafeMutableRawPointer? { DependencyTracking.currentFrame?.toOpaque() }

/// A chain and a diamond under one outer property, which reads `c` after the inner ones end.
private final class OFNest: @unchecked Sendable {
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

/// A function that reads on other threads (which must not count) and on its own (which must).
private final class OFThreads: @unchecked Sendable {
    let sawFrame = Recording<Bool>()  // whether the other thread found a frame open
    let list = ObservableArray<Int>([1])
    @ObservableVar var mine = 1
    @ObservableVar var theirs = 2
    @ObservableVar var viaQueue = 3
    @Synthetic({ (m: OFThreads) in m.theirs * 10 }) var theirSynthetic: Int
    @Synthetic({ (m: OFThreads) in
        let got = Recording<Int>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            m.sawFrame.append(openFrame() != nil)
            got.append(m.theirs + m.theirSynthetic + m.list.count)
            done.signal()
        }.start()
        done.wait()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { got.append(m.viaQueue) }
        group.wait()
        return got.elements.reduce(0, +) + m.mine
    })
    var total: Int
}

/// A function that starts an observation, sets a variable (observed, with an observed dependent)
/// and invalidates, then reads `after`.
private final class OFObserving: @unchecked Sendable {
    let observer = TestObserver()
    let problems = Recording<String>()
    nonisolated(unsafe) var runs = 0
    @ObservableVar var watchedSource = 1
    @ObservableVar var log = 0
    @ObservableVar var readByLogObserver = 0
    @ObservableVar var readByDependentObserver = 0
    @ObservableVar var viaKeyPath = 5
    @ObservableVar var after = 7
    @Synthetic({ (m: OFObserving) in
        if DependencyTracking.currentFrame?.takeUnretainedValue().parent != nil {
            m.problems.append("watched sees a parent frame")
        }
        return m.watchedSource * 2
    })
    var watched: Int
    @Synthetic({ (m: OFObserving) in m.log + 1 }) var fromLog: Int
    @Synthetic({ (m: OFObserving) in m.after - 1 }) var invalidatedInside: Int
    @Synthetic({ (m: OFObserving) in
        let mine = openFrame()
        m.observer.observe(m.$watched) { _ in }  // evaluates `watched`, the frames hidden
        m.runs += 1
        m.log = m.runs  // its observer runs here; its dependent's observer after the evaluation
        m.$invalidatedInside.invalidate()
        m.observer.stopObserving(m.$watched)
        if mine != openFrame() { m.problems.append("host's frame not restored") }
        return m[keyPath: \OFObserving.viaKeyPath] + m.after
    })
    var host: Int
}

/// How many rounds of thread-local destructors `destructorAfterHeraldsUsesHerald` uses Herald in
/// (PC_DESTRUCTOR_ROUNDS, default 2; 3 crashes the thread sanitizer, 4 leaks).
let pcDestructorRounds = Int(ProcessInfo.processInfo.environment["PC_DESTRUCTOR_ROUNDS"] ?? "") ?? 2

/// `d` ← `a` ← `b`, where `b` and `a` wait at a gate while computed.
final class ThreeWay: @unchecked Sendable {
    @ObservableVar var base = 1
    let enteredB = DispatchSemaphore(value: 0)
    let gateB = DispatchSemaphore(value: 0)
    let enteredA = DispatchSemaphore(value: 0)
    let gateA = DispatchSemaphore(value: 0)
    @Synthetic({ (m: ThreeWay) in
        m.enteredB.signal()
        m.gateB.wait()
        return m.base
    })
    var b: Int
    @Synthetic({ (m: ThreeWay) in
        let value = m.b + 1
        m.enteredA.signal()
        m.gateA.wait()
        return value
    })
    var a: Int
    @Synthetic({ (m: ThreeWay) in m.a + 1 }) var d: Int
}

/// flag false: `x` = `w`, `w` = base; flag true: `x` = `n` + 1, `w` = `x`. k true: `n` = `q` + 1,
/// else base. `q` = `x` + 1. `o` = `x` × 100. No state has a cycle (x → n → q → x needs flag and k).
final class GiveWayInsideCheck: @unchecked Sendable {
    @ObservableVar var flag = false
    @ObservableVar var k = false
    @ObservableVar var base = 1
    let gateW = HoldingGate()
    let gateN = HoldingGate()
    let gateM = HoldingGate()
    let xRuns = Atomic<Int>(0)
    @Synthetic({ (s: GiveWayInsideCheck) in
        s.xRuns.add(1, ordering: .sequentiallyConsistent)
        return s.flag ? s.n + 1 : s.w
    })
    var x: Int
    @Synthetic({ (s: GiveWayInsideCheck) in
        s.gateW.pass()
        return s.flag ? s.x : s.base
    })
    var w: Int
    @Synthetic({ (s: GiveWayInsideCheck) in s.x * 100 }) var o: Int
    @Synthetic({ (s: GiveWayInsideCheck) in
        let k = s.k
        s.gateN.pass()
        return k ? s.q + 1 : s.base
    })
    var n: Int
    @Synthetic({ (s: GiveWayInsideCheck) in
        s.gateM.pass()
        return s.x + 1
    })
    var q: Int
}

/// k true: `n` = `q` + 1, else base; `x` = `w` = `n`; `q` = `x` + 1 (a circle only if k).
final class GiveWayCheck: @unchecked Sendable {
    @ObservableVar var k = false
    @ObservableVar var base = 1
    let gateN = HoldingGate()
    let gateM = HoldingGate()
    let xRuns = Atomic<Int>(0)
    let wRuns = Atomic<Int>(0)
    @Synthetic({ (s: GiveWayCheck) in
        s.xRuns.add(1, ordering: .sequentiallyConsistent)
        return s.w
    })
    var x: Int
    @Synthetic({ (s: GiveWayCheck) in
        s.wRuns.add(1, ordering: .sequentiallyConsistent)
        return s.n
    })
    var w: Int
    @Synthetic({ (s: GiveWayCheck) in
        let k = s.k
        s.gateN.pass()
        return k ? s.q + 1 : s.base
    })
    var n: Int
    @Synthetic({ (s: GiveWayCheck) in
        s.gateM.pass()
        return s.x + 1
    })
    var q: Int
}

/// Marks one thread, so that a hook can tell whether it runs on it.
final class ThreadMark: Sendable {
    private let id = Atomic<UInt>(0)
    func mark() { id.store(UInt(pthread_self()), ordering: .sequentiallyConsistent) }
    var isThisThread: Bool { id.load(ordering: .sequentiallyConsistent) == UInt(pthread_self()) }
}

/// A gate a hook passes: while held, it blocks there until released.
final class Slow: Sendable {
    private let held = Atomic<Bool>(false)
    private let released = DispatchSemaphore(value: 0)
    func hold() { held.store(true, ordering: .sequentiallyConsistent) }
    func release() {
        held.store(false, ordering: .sequentiallyConsistent)
        released.signal()
    }
    func pass() {
        guard held.load(ordering: .sequentiallyConsistent) else { return }
        released.wait()
        released.signal()
    }
}

/// See `owedWaitWhileHoldingAnOuterPropertyIsNoCycle`. `p` can be held at gateA
/// after it read mode, and at gateB after it read `s`.
final class ModeRing: @unchecked Sendable {
    @ObservableVar var mode = 0
    @ObservableVar var base = 1
    let gateA = HoldingGate()
    let gateB = HoldingGate()
    let pRuns = Atomic<Int>(0)
    @Synthetic({ (m: ModeRing) in
        m.pRuns.add(1, ordering: .sequentiallyConsistent)
        let mode = m.mode
        m.gateA.pass()
        if mode == 2 { return m.o }
        if mode == 1 { return 0 }
        let v = m.s + 1
        m.gateB.pass()
        return v
    })
    var p: Int
    @Synthetic({ (m: ModeRing) in m.mode == 1 ? m.p : m.base }) var s: Int
    @Synthetic({ (m: ModeRing) in m.s + 100 }) var o: Int
}

/// `p` = `q` ? 0 : `s` + 1, `s` = base > 3 && `q` ? `p` : base, where `q` is set by hand (a
/// hybrid) and `s` can be held at a gate before it reads anything.
final class SetSwitching: @unchecked Sendable {
    @ObservableVar var base = 1
    let gate = HoldingGate()
    let results = Recording<String>()
    @Synthetic({ (_: SetSwitching) in false }) var q: Bool
    @Synthetic({ (m: SetSwitching) in m.q ? 0 : m.s + 1 }) var p: Int
    @Synthetic({ (m: SetSwitching) in
        m.gate.pass()
        return m.base > 3 && m.q ? m.p : m.base
    })
    var s: Int
}

/// flag false: `x` = `w`, `w` = base, `y` = `x` + 1; flag true: `x` = `y` + 1, `y` = base,
/// `w` = `x` (no cycle in either state); `o` = `x` × 100. `w` can be held at gateW, and `y`
/// at gateY after it read flag.
final class InsideCheck: @unchecked Sendable {
    @ObservableVar var flag = false
    @ObservableVar var base = 1
    let gateW = HoldingGate()
    let gateY = HoldingGate()
    /// How many times `x` was computed.
    let xRuns = Atomic<Int>(0)
    @Synthetic({ (m: InsideCheck) in
        m.xRuns.add(1, ordering: .sequentiallyConsistent)
        return m.flag ? m.y + 1 : m.w
    })
    var x: Int
    @Synthetic({ (m: InsideCheck) in
        m.gateW.pass()
        return m.flag ? m.x : m.base
    })
    var w: Int
    @Synthetic({ (m: InsideCheck) in
        let flag = m.flag
        m.gateY.pass()
        return flag ? m.base : m.x + 1
    })
    var y: Int
    @Synthetic({ (m: InsideCheck) in m.x * 100 }) var o: Int
}

/// flag true: `p` = 0 and `s` = `p`; flag false: `p` = `s` + 1 and `s` = base. `p` can be held
/// at gateP after it read flag.
final class LateRing: @unchecked Sendable {
    @ObservableVar var flag = true
    @ObservableVar var base = 1
    let gateP = HoldingGate()
    @Synthetic({ (m: LateRing) in
        let flag = m.flag
        m.gateP.pass()
        return flag ? 0 : m.s + 1
    })
    var p: Int
    @Synthetic({ (m: LateRing) in m.flag ? m.p : m.base }) var s: Int
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

/// Tests of the synthetic-property algorithm that is being replaced: each drives an interleaving
/// through its hooks (`SyntheticCycle.TestHooks`) or reads its internals (`SyntheticState`,
/// `Synthetic.state`, `DependencyTracking`, the open `EvaluationFrame`). A `// PROMISE:` line above
/// each says which user-visible promise it protects, or that it pins the old algorithm only.
@Suite(
    "Synthetic properties: what an evaluation reads, on which thread; sets over stale sources",
    .serialized)
struct SyntheticTrackingConcurrencyTests {
    /// A thread started before it is given its work, so that its identity (which decides
    /// which thread of a circle gives way) is known first.
    final class Worker: @unchecked Sendable {
        let started = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var body: () -> Void = {}
        var thread: JoinableThread!
        var identity: ObjectIdentifier!
        init() {
            thread = JoinableThread { [self] in
                identity = DependencyTracking.thisThread
                started.signal()
                go.wait()
                body()
            }
            started.wait()
        }
        func run(_ body: @escaping () -> Void) {
            self.body = body
            go.signal()
        }
    }

    final class Token {}

    /// A state that was computed and has a dependent.
    private static func computedWithADependent() -> SyntheticState {
        var state = SyntheticState()
        _ = state.beginRead(by: ObjectIdentifier(Token()), knownNotReentering: true)
        _ = state.finishEvaluation(changed: true, tainted: false, since: 0)
        state.dependents = DependentList.adding(
            Synthetic<Token, Int>({ _ in 0 }), to: nil, of: Token())
        return state
    }

    /// What happened during an interrupted check, and what it may do.
    struct Interruption: Sendable, CustomTestStringConvertible {
        enum Meanwhile: Sendable { case nothing, invalidated, markedMayBeStale, set }
        enum Outcome: Sendable { case leftUndone, evaluate, valid }
        let meanwhile: Meanwhile
        let mayLeaveUndone: Bool
        let outerCheckOvertaken: Bool
        let outcome: Outcome
        var testDescription: String {
            "\(meanwhile), mayLeaveUndone \(mayLeaveUndone), outer overtaken "
                + "\(outerCheckOvertaken) → \(outcome)"
        }
    }

    enum Reader { case p, q }

    /// Both threads got 0, and both properties are 0 now.
    static func expectSwitched(_ model: Switching) {
        #expect(model.results.elements.sorted() == ["p 0", "s 0"])
        #expect(model.p == 0)
        #expect(model.s == 0)
    }

    /// `Switching` with `p` = `s` + 1 = 2 and `s` = base = 1 computed, then base 5 (`s` invalid)
    /// and `p` invalidated: the next read of `p` computes it, and `s` if no other thread does.
    static func computedOnce() -> Switching {
        let model = Switching()
        #expect(model.p == 2)
        model.base = 5
        model.$p.invalidate()
        return model
    }

    // Promise: a cycle's message names the properties of the cycle, in order
    @Test("the cycle message names the properties of the cycle")
    func cycleMessage() {
        let message = SyntheticCycle.message(cycle: ["A.b", "A.c", "A.b"])
        #expect(message.hasPrefix("Herald: synthetic property cycle: A.b → A.c → A.b."))
    }

    // Promise: a property runs exactly when what it read changed; depends on what it last read
    /// After each batch of writes, `branch` (or `top`) must equal its value computed from
    /// scratch, must have run exactly when a source it read changed (directly, or through a
    /// synthetic source whose value changed), and every source's dependents list must hold
    /// `branch` exactly when the last evaluation read it.
    @Test("branchy dependencies: values, exact evaluation counts and dependents lists")
    func branchyExact() {
        let model = PCBranchy()
        var random = SeededGenerator(seed: 0xB4A_17C4)
        let branch = ObjectIdentifier(model.$branch)
        let top = ObjectIdentifier(model.$top)
        var values = model.values
        #expect(model.branch == values.branch.value)
        #expect(model.top == values.top)
        for step in 0..<3000 {
            let before = values
            let counts = model.evaluationCounts
            var written: Set<PCSource> = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let source = PCSource.base.randomElement(using: &random)!
                let value = Int.random(in: 0...(source == .flag ? 9 : 5), using: &random)
                guard value != values[source] else { continue }
                values[source] = value
                written.insert(source)
                model.write(source, value)
            }
            // `top` is read every step (so that its baseline is the last step), before or after
            // `branch`.
            let readTop = true
            let expected = values.branch
            if step % 2 == 0 {
                #expect(model.top == values.top, "step \(step)")
                #expect(model.branch == expected.value, "step \(step)")
            } else {
                #expect(model.branch == expected.value, "step \(step)")
                #expect(model.top == values.top, "step \(step)")
            }
            // `branch` ran iff a variable it read was written or a synthetic source it read
            // changed its value.
            let read = before.branch.read
            let mustRun =
                !read.intersection(written).isEmpty
                || read.contains { PCSource.synthetic.contains($0) && before[$0] != values[$0] }
            let ran = model.$branch.evaluationCount - counts[3]
            #expect(ran == (mustRun ? 1 : 0), "step \(step): read \(read), wrote \(written)")
            if readTop {
                let topMustRun =
                    before.branch.value != expected.value || before.a * 2 != values.a * 2
                #expect(
                    model.$top.evaluationCount - counts[4] == (topMustRun ? 1 : 0), "step \(step)")
            }
            // The dependents lists agree with what the last evaluation read.
            for source in PCSource.allCases {
                let dependents = model.dependents(of: source)
                #expect(
                    dependents.contains(branch) == expected.read.contains(source),
                    "step \(step): \(source) \(expected.read)")
                if source == .twiceA && readTop { #expect(dependents.contains(top)) }
            }
        }
    }

    // Promise: under threads: values as from scratch, observers told, dependents as last read
    /// Threads write, read, observe and stop observing, invalidate and set (hybrid) the
    /// properties of one branchy model at once; then, with the variables still, every property
    /// equals its value from scratch, ran at most once more, its steady observers last heard that
    /// value, and every dependents list matches what the last evaluation read.
    @Test("branchy dependencies under threads: values, counts, observers, dependents")
    func branchyThreads() {
        let model = PCBranchy()
        let threads = 4
        let phases = 120
        let barrier = PCBarrier(parties: threads)
        let steady = TestObserver()
        let lastBranch = Mutex<Int>(model.branch)
        let lastTop = Mutex<Int>(model.top)
        steady.observe(model.$branch) { update in lastBranch.withLock { $0 = update.new } }
        steady.observe(model.$top) { update in lastTop.withLock { $0 = update.new } }
        let countsBefore = Mutex<[Int]>([])
        let failures = Recording<String>()
        pcConcurrently(threads: threads) { index in
            var random = SeededGenerator(seed: 0x5EED_0000 + UInt64(index))
            let churn = TestObserver()
            let branch = ObjectIdentifier(model.$branch)
            for phase in 0..<phases {
                // Phase A: everything at once.
                for _ in 0..<12 {
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0...3:
                        let source = PCSource.base.randomElement(using: &random)!
                        model.write(
                            source, Int.random(in: 0...(source == .flag ? 9 : 5), using: &random))
                    case 4: _ = model.branch
                    case 5: _ = model.top
                    case 6: churn.observe(model.$branch) { _ in _ = model.top }
                    case 7: churn.stopObserving()
                    case 8:
                        [model.$twiceA, model.$bc, model.$branch].randomElement(using: &random)!
                            .invalidate()
                    default:
                        model.$bc.set(Int.random(in: 0...9, using: &random), as: model.$bc)
                    }
                }
                barrier.wait()
                // Undo the hybrid sets; then nobody writes.
                if index == 0 {
                    model.$bc.invalidate()
                    model.$twiceA.invalidate()
                    countsBefore.withLock { $0 = model.evaluationCounts }
                }
                barrier.wait()
                // Phase B: everyone reads.
                let values = model.values
                let expected = values.branch
                for _ in 0..<3 {
                    let branchValue = model.branch
                    let topValue = model.top
                    if branchValue != expected.value || topValue != values.top {
                        failures.append(
                            "phase \(phase): branch \(branchValue) top \(topValue), expected \(expected.value) \(values.top) for \(values)"
                        )
                    }
                }
                barrier.wait()
                if index == 0 {
                    let before = countsBefore.withLock { $0 }
                    let after = model.evaluationCounts
                    for (old, new) in zip(before, after) where new - old > 1 {
                        failures.append(
                            "phase \(phase): ran \(new - old) times (\(before) → \(after))")
                    }
                    let heard = (lastBranch.withLock { $0 }, lastTop.withLock { $0 })
                    if heard != (expected.value, values.top) {
                        failures.append(
                            "phase \(phase): steady observers last heard \(heard), value \((expected.value, values.top))"
                        )
                    }
                    for source in PCSource.allCases
                    where model.dependents(of: source).contains(branch)
                        != expected.read.contains(source)
                    {
                        failures.append(
                            "phase \(phase): \(source) dependents \(model.dependents(of: source).contains(branch)), read \(expected.read)"
                        )
                    }
                }
                barrier.wait()
            }
            churn.stopObserving()
        }
        #expect(failures.elements.isEmpty, "\(failures.elements.prefix(10))")
    }

    // Promise: setters of hybrid sets and dependents lists are freed on every marking path
    /// The setter of a hybrid set (the `released` of a marking) and the dependents lists that
    /// marking hands over are freed on every marking path: a variable's change (kept alive
    /// under its lock), a manual invalidation, and nested marking below it.
    @Test("marking hands over setters and dependents lists once: all freed")
    func markingReleasesWhatItHandsOver() {
        let authors = PCCounter()
        weak var list: DependentList?
        weak var nestedList: DependentList?
        do {
            let model = PCBranchy()
            let observer = TestObserver()
            model.flag = 1  // branch reads twiceA, d, bc, parityA
            observer.observe(model.$top) { _ in }
            observer.observe(model.$branch) { _ in }
            observer.observe(model.$bc) { _ in }
            list = model.$d.core.lock.withLock { model.$d.core.dependents }
            nestedList = model.$bc.core.lock.withLock { model.$bc.state.dependents }
            #expect(list != nil && nestedList != nil)
            for round in 0..<50 {
                // Setters on observed properties are kept until the next marking releases them.
                model.$bc.set(
                    500 + round, as: OnDeinit { authors.add() })
                model.$branch.set(
                    900 + round, as: OnDeinit { authors.add() })
                switch round % 4 {
                case 0: model.b += 1  // marks bc (definitely), branch and top (maybe)
                case 1: model.$bc.invalidate()  // marks bc, then nested: branch, top
                case 2: model.$twiceA.invalidate()  // nested marking reaches branch's setter
                default: model.d += 1
                }
            }
            model.$bc.invalidate()
            model.$branch.invalidate()
            #expect(model.top == model.values.top)
            observer.stopObserving()
        }
        #expect(authors.count == 100)
        #expect(list == nil)
        #expect(nestedList == nil)
    }

    // Promise: code in a thread-local destructor run after Herald's may use Herald
    /// A thread-local value of the test's own, whose destructor runs after Herald's has let the
    /// thread's context go (a key made later is destroyed later), and again in the next round of
    /// destructors: its deinit reads synthetic properties (evaluating them), sets a variable
    /// whose observed synthetic dependents propagate, invalidates and sets (hybrid). It gets
    /// fresh contexts, which are freed too, and observers hear the right values.
    @Test("deinit code run by a thread-local destructor after Herald's uses Herald")
    func destructorAfterHeraldsUsesHerald() {
        _ = DependencyTracking.thisThread  // Herald's key exists first
        final class Trace: @unchecked Sendable {
            let lock = NSLock()
            var log: [String] = []
            var contexts: [WeakBox<ThreadContext>] = []
            var hadContextOnEntry: [Bool] = []
            var temporaries: [WeakBox<PCBranchy>] = []
            func add(_ line: String) {
                lock.lock()
                log.append(line)
                lock.unlock()
            }
        }
        let trace = Trace()
        let model = PCBranchy()
        let observer = TestObserver()
        observer.observe(model.$top) { trace.add("top \($0.new)") }
        observer.observe(model.$bc) { trace.add("bc \($0.new)") }
        let box = UncheckedBox(model)
        final class Payload {
            let rounds: Int
            let work: () -> Void
            init(rounds: Int, work: @escaping () -> Void) {
                self.rounds = rounds
                self.work = work
            }
        }
        nonisolated(unsafe) var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            #if canImport(Darwin)
                let payload = Unmanaged<Payload>.fromOpaque(pointer).takeRetainedValue()
            #else
                let payload = Unmanaged<Payload>.fromOpaque(pointer!).takeRetainedValue()
            #endif
            payload.work()
            if payload.rounds > 1 {
                // Run again in the next round of destructors (after Herald's again).
                let again = Payload(rounds: payload.rounds - 1, work: payload.work)
                pthread_setspecific(globalPCKey, Unmanaged.passRetained(again).toOpaque())
            }
        }
        precondition(status == 0)
        globalPCKey = key
        defer { pthread_key_delete(key) }
        let expectedBefore = model.top
        runOnThreadAndJoin {
            let model = box.value
            _ = model.top  // this thread has a context
            let payload = Payload(rounds: pcDestructorRounds) {
                trace.lock.lock()
                trace.hadContextOnEntry.append(ThreadContext.current != nil)
                trace.lock.unlock()
                model.a += 1
                model.flag = (model.flag + 1) % 5
                _ = model.branch
                model.$twiceA.invalidate()
                model.$bc.set(77, as: model.$bc)
                model.b += 1
                // An owner made, observed and freed here, in the destructor.
                do {
                    let temporary = PCBranchy()
                    trace.lock.lock()
                    trace.temporaries.append(WeakBox(temporary))
                    trace.lock.unlock()
                    observer.observe(temporary.$top) { trace.add("temporary top \($0.new)") }
                    temporary.a = 3
                    _ = temporary.top
                }
                let context = ThreadContext.current
                trace.lock.lock()
                if let context { trace.contexts.append(WeakBox(context)) }
                trace.lock.unlock()
            }
            pthread_setspecific(globalPCKey, Unmanaged.passRetained(payload).toOpaque())
        }
        _ = expectedBefore
        #expect(trace.contexts.count == pcDestructorRounds)
        #expect(trace.contexts.allSatisfy { $0.isFreed })
        #expect(trace.temporaries.count == pcDestructorRounds)
        #expect(trace.temporaries.allSatisfy { $0.isFreed })
        #expect(trace.log.filter { $0 == "temporary top 39" }.count == pcDestructorRounds)
        print(
            "destructorAfterHeraldsUsesHerald: had a context on entry: \(trace.hadContextOnEntry)")
        #expect(model.top == model.values.top)
        #expect(trace.log.last(where: { $0.hasPrefix("top") }) == "top \(model.top)")
        #expect(trace.log.last(where: { $0.hasPrefix("bc") }) == "bc \(model.bc)")
    }

    // Promise: after an inner evaluation ends, the outer's reads are the outer's dependencies
    @Test("after an inner evaluation ends (chain, diamond), the outer's reads go to the outer")
    func innerEndsOuterContinues() {
        let m = OFNest()
        #expect(m.outer == (2 + 10) + 4 + 100)
        #expect(openFrame() == nil)
        m.c = 200  // read by outer only, after the inner evaluations ended
        #expect(!m.$outer.isValid && m.$inner.isValid && m.$middle.isValid && m.$side.isValid)
        #expect(m.outer == 216)
        m.b = 20
        #expect(m.$inner.isValid && m.$side.isValid && !m.$middle.isValid && !m.$outer.isValid)
        #expect(m.outer == 226)
        m.a = 2
        #expect(m.outer == (3 + 20) + 6 + 200)
        #expect(m.problems.elements.isEmpty, "\(m.problems.elements)")
    }

    // Promise: reads on threads a function starts are not its dependencies
    @Test("reads on threads a function starts are not recorded; its own reads are")
    func otherThreadsNotRecorded() {
        let m = OFThreads()
        #expect(m.total == 2 + 20 + 1 + 3 + 1)
        (m.theirs, m.viaQueue) = (4, 30)
        m.list.append(9)
        // `theirSynthetic` recorded its read in its own frame, on the other thread.
        #expect(m.$total.isValid && !m.$theirSynthetic.isValid)
        m.mine = 5
        #expect(m.total == 4 + 40 + 2 + 30 + 5)
        #expect(!m.sawFrame.elements.contains(true))
    }

    // Promise: what observers read inside an evaluation is no dependency (bar the documented case)
    @Test("observers inside an evaluation: frames hidden, then restored; later ones record nothing")
    func observersInsideEvaluation() {
        let m = OFObserving()
        let outside = TestObserver()
        outside.observe(m.$log) { _ in _ = m.readByLogObserver }
        outside.observe(m.$fromLog) { _ in
            if openFrame() != nil { m.problems.append("deferred observer sees a frame") }
            _ = m.readByDependentObserver
        }
        outside.observe(m.$invalidatedInside) { _ in }
        #expect(m.host == 12 && openFrame() == nil)
        m.watchedSource = 2  // read only with the frames hidden
        m.readByDependentObserver = 1  // read by an observer told after the evaluation
        #expect(m.$host.isValid)
        m.after = 8
        #expect(!m.$host.isValid && m.host == 13)
        m.viaKeyPath = 6
        #expect(!m.$host.isValid && m.host == 14)
        // Documented: what the set variable's own observer reads counts as read by the function.
        m.readByLogObserver = 1
        #expect(!m.$host.isValid)
        #expect(m.problems.elements.isEmpty, "\(m.problems.elements)")
    }

    // Promise: threads that exit leave no evaluation state behind; values right
    @Test("short-lived threads evaluate nested properties; frames never leak across threads")
    func threadsThatExit() {
        let shared = OFNest()
        let problems = Recording<String>()
        for round in 0..<8 {
            concurrently(threads: 6) { index in
                if openFrame() != nil { problems.append("new thread starts with a frame") }
                let own = OFNest()
                own.c = round * 10 + index
                if own.outer != 16 + own.c { problems.append("own value") }
                _ = shared.outer
                own.c += 1
                if !own.$inner.isValid || own.$outer.isValid { problems.append("misrecorded") }
                if openFrame() != nil { problems.append("frame left open") }
                for p in own.problems.elements { problems.append(p) }
            }
        }
        #expect(problems.elements.isEmpty, "\(problems.elements)")
        #expect(shared.problems.elements.isEmpty)
    }

    // Promise: values right while threads set shared variables and read properties
    @Test("threads evaluate different properties over shared variables while others set them")
    func sharedVariablesStress() {
        final class Reader: @unchecked Sendable {
            let (vars, k): ([Variable<Int>], Int)
            init(_ vars: [Variable<Int>], _ k: Int) { (self.vars, self.k) = (vars, k) }
            @Synthetic({ (r: Reader) in r.vars[r.k % 4].value + r.vars[(r.k + 1) % 4].value })
            var pair: Int
            @Synthetic({ (r: Reader) in r.pair * 10 + r.vars[(r.k + 2) % 4].value })
            var chained: Int
        }
        let vars = (0..<4).map { Variable($0) }
        let readers = (0..<6).map { Reader(vars, $0) }
        let problems = Recording<String>()
        concurrently(threads: 4) { index in
            for step in 0..<20_000 {
                if index < 2 {
                    vars[(step + index) % 4].value = step * (index + 1)
                } else {
                    let reader = readers[(step + index) % readers.count]
                    _ = (step % 2 == 0) ? reader.chained : reader.pair
                    if openFrame() != nil { problems.append("frame left open") }
                }
            }
        }
        let values = vars.map(\.value)
        for r in readers {
            let pair = values[r.k % 4] + values[(r.k + 1) % 4]
            #expect(r.pair == pair && r.chained == pair * 10 + values[(r.k + 2) % 4])
        }
        #expect(problems.elements.isEmpty, "\(problems.elements)")
    }

    // The state of a property set over stale sources (see `SyntheticState.set(changed:)`).
    @Test func aStalePropertyTellsItsDependentsAgainAfterASetOverStale() {
        var state = Self.computedWithADependent()
        // Was valid: tells. Told then: does not. A set since: tells. Told again: does not.
        #expect(state.mark(definitely: true, marking: 1, setsOverStale: 0).dependents != nil)
        #expect(state.mark(definitely: true, marking: 2, setsOverStale: 0).dependents == nil)
        #expect(state.mark(definitely: true, marking: 3, setsOverStale: 1).dependents != nil)
        #expect(state.mark(definitely: true, marking: 4, setsOverStale: 1).dependents == nil)
    }

    // The state of a property set over stale sources (see `SyntheticState.set(changed:)`).
    @Test func aSetOverStaleSourcesIsInvalidatedByAnyChangeAbove() {
        var state = Self.computedWithADependent()
        _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        #expect(state.set(changed: true).overStale)
        _ = state.mark(definitely: false, marking: 2, setsOverStale: 1)
        #expect(state.freshness == .invalid)
        // A set over a computed valid value is not over stale sources: a change above may
        // leave it.
        var computed = Self.computedWithADependent()
        #expect(!computed.set(changed: true).overStale)
        _ = computed.mark(definitely: false, marking: 3, setsOverStale: 1)
        #expect(computed.freshness == .mayBeStale)
    }

    // The state of a property set over stale sources (see `SyntheticState.set(changed:)`).
    /// Found by the adversarial round: a second set, over the value the first one set over stale
    /// sources, made the property forget that, so that the next change above left the value
    /// standing (and a check then followed what it read before the change, which could close a
    /// circle that no state has).
    @Test func aSetOverAValueSetOverStaleSourcesIsOverThemToo() {
        var state = Self.computedWithADependent()
        _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        #expect(state.set(changed: true).overStale)
        _ = state.set(changed: true)
        _ = state.mark(definitely: false, marking: 2, setsOverStale: 1)
        #expect(state.freshness == .invalid)
    }

    // The state of a property set over stale sources (see `SyntheticState.set(changed:)`).
    @Test func aSetOfAPropertyNeverEvaluatedIsNotOverStale() {
        var state = SyntheticState()
        #expect(!state.set(changed: true).overStale)  // it read nothing: in no dependents list
        _ = state.mark(definitely: true, marking: 1, setsOverStale: 0)
        #expect(!state.set(changed: true).overStale)
    }

}
