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
@Suite("Synthetic properties: the old algorithm's interleavings and state", .serialized)
struct SyntheticOldAlgorithmTests {
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

    /// A state checked by `thread` after a value was computed and a synthetic source marked,
    /// and the marks the check began at.
    static func checking(by thread: ObjectIdentifier) -> (SyntheticState, UInt64)? {
        var state = SyntheticState()
        _ = state.beginRead(by: thread)
        _ = state.finishEvaluation(changed: true, marks: 0)
        _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        guard case .check(let marks) = state.beginRead(by: thread) else { return nil }
        return (state, marks)
    }

    /// A state that was computed and has a dependent.
    private static func computedWithADependent() -> SyntheticState {
        var state = SyntheticState()
        _ = state.beginRead(by: ObjectIdentifier(Token()))
        _ = state.finishEvaluation(changed: true, marks: 0)
        state.dependents = DependentList.adding(Synthetic<Token, Int>({ _ in 0 }), to: nil)
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

    /// After computing all three with base 1: base 5, then T2 computes `s`, held at the gate,
    /// and T1 reads `p` (through `q` if `reader` is `.q`), checks it, and waits for `s`.
    static func startCheckWaitingForEvaluation(_ model: Switching, through reader: Reader = .p)
        -> (JoinableThread, JoinableThread)
    {
        model.readThroughQ = reader == .q
        #expect(model.p == (reader == .q ? 3 : 2))
        model.base = 5
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let results = box.value.results
        let t2 = JoinableThread { results.append("s \(box.value.s)") }
        model.gate.entered.wait()
        let s = ObjectIdentifier(model.$s)
        let t1Waits = DispatchSemaphore(value: 0)
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) { node in
            if node == s { t1Waits.signal() }
        }
        let t1 = JoinableThread { results.append("p \(box.value.p)") }
        t1Waits.wait()
        SyntheticCycle.TestHooks.remove(waitHook)
        return (t1, t2)
    }

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

    // PROMISE: a cycle's message names the properties of the cycle, in order
    @Test("the cycle message names the properties of the cycle")
    func cycleMessage() {
        let message = SyntheticCycle.message(cycle: ["A.b", "A.c", "A.b"])
        #expect(message.hasPrefix("Herald: synthetic property cycle: A.b → A.c → A.b."))
    }

    // PROMISE: an observer that starts during an evaluation hears a change made meanwhile
    @Test(
        "observed means eager: an observer that starts during an evaluation hears a change made meanwhile"
    )
    func observerStartingDuringEvaluationHearsConcurrentChange() {
        let gated = Gated()
        gated.holdAtGate.store(true, ordering: .sequentiallyConsistent)
        let property = ObjectIdentifier(gated.$doubled)
        // The changing thread finds the first evaluation running and waits for it: let it go.
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) { id in
            guard id == property else { return }
            gated.holdAtGate.store(false, ordering: .sequentiallyConsistent)
            gated.gate.signal()
        }
        defer { SyntheticCycle.TestHooks.remove(waitHook) }
        let observer = TestObserver()
        let updates = Recording<Update<Int>>()
        let box = UncheckedBox((gated, observer))
        let observing = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            // The first observer: the property is evaluated at once (held at the gate).
            box.value.1.observe(box.value.0.$doubled) { updates.append($0) }
            observing.signal()
        }
        gated.entered.wait()
        gated.input = 5  // after the observation started
        observing.wait()
        #expect(gated.doubled == 10)
        // The observation started while the value was 2, and it became 10 afterwards.
        #expect(updates.elements == [Update(2, 10)])
    }

    // PROMISE: no function runs concurrently with itself: a reader waits, not recomputes
    @Test("threads: a reader waits for another thread's evaluation instead of running it again")
    func readerWaitsForRunningEvaluation() {
        let gated = Gated()
        gated.holdAtGate.store(true, ordering: .sequentiallyConsistent)
        let property = ObjectIdentifier(gated.$doubled)
        let secondWaits = DispatchSemaphore(value: 0)
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) {
            if $0 == property { secondWaits.signal() }
        }
        defer { SyntheticCycle.TestHooks.remove(waitHook) }
        let results = Recording<Int>()
        let done = DispatchSemaphore(value: 0)
        let box = UncheckedBox(gated)
        DispatchQueue.global().async {
            results.append(box.value.doubled)
            done.signal()
        }
        gated.entered.wait()  // the first reader is computing, held at the gate
        DispatchQueue.global().async {
            results.append(box.value.doubled)
            done.signal()
        }
        secondWaits.wait()  // the second reader found it running and waits
        gated.holdAtGate.store(false, ordering: .sequentiallyConsistent)
        gated.gate.signal()
        done.wait()
        done.wait()
        #expect(results.elements == [2, 2])
        #expect(gated.$doubled.evaluationCount == 1)
        #expect(gated.mostRunning.load(ordering: .sequentiallyConsistent) == 1)
    }

    // PROMISE: a read while another thread binds the property does not hang
    /// Found by the adversarial round (a hang, also before): T2 evaluates `q`, which reads `p`.
    /// T1's first read of `p` binds it: observing its declared path (through `q`) waits for
    /// T2's `q`, whose read of `p` waited for the binding to end.
    @Test("threads: a property read while another thread binds it does not wait for the binding")
    func readDuringBindingDoesNotWait() {
        let model = BoundThroughReader()
        _ = model.$q  // binds q (not p)
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let q = ObjectIdentifier(model.$q)
        let t1Waits = DispatchSemaphore(value: 0)
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) { if $0 == q { t1Waits.signal() } }
        defer { SyntheticCycle.TestHooks.remove(waitHook) }
        let box = UncheckedBox(model)
        let results = Recording<String>()
        let t2 = JoinableThread { results.append("q \(box.value.q)") }  // held in q
        model.gate.entered.wait()
        let t1 = JoinableThread { results.append("p \(box.value.p)") }  // binds p: waits for q
        t1Waits.wait()
        model.gate.open()  // q reads p, which T1 is binding
        t1.join()
        t2.join()
        #expect(results.elements.sorted() == ["p 1", "q 2"])
        model.base = 5
        #expect(model.p == 5)
        #expect(model.q == 6)
    }

    // PROMISE: no false cycle, x computed once (pins who gives way in an overtaken check)
    /// Found by the review: A reads `o`: checks `o`, `x`, and computes `w` for `x`'s check
    /// (held); C computes `n` (k true: it will read `q`), held; D computes `q` (never
    /// computed), held. k turns false (overtaking C's `n`), flag true (overtaking `x`'s check).
    /// C's `n` reads `q`: waits for D. D's `q` reads `x`: waits for A. A's `w` reads `x`,
    /// computed inside its overtaken check (not overtaken), which reads `n`: waits for C. No
    /// state has that circle; C cannot leave (`q` has no value). A must not give way: its check
    /// holds `x` until it ends, so its owed wait for `n` closed the same circle again, up to the
    /// bound (`x` computed 52 times when A's identity was the lesser). D gives way, whichever
    /// identity is the lesser.
    @Test("threads: giving way inside an overtaken check", arguments: [true, false])
    func givingWayInsideAnOvertakenCheck(aIsLeast: Bool) {
        let model = GiveWayInsideCheck()
        #expect(model.o == 100)
        #expect(model.n == 1)
        model.base = 5
        model.k = true
        let box = UncheckedBox(model)
        let (x, q) = (ObjectIdentifier(model.$x), ObjectIdentifier(model.$q))
        let cWaits = DispatchSemaphore(value: 0)
        let dWaits = DispatchSemaphore(value: 0)
        let hook = SyntheticCycle.TestHooks.add(at: .wait) { node in
            if node == q { cWaits.signal() }
            if node == x { dWaits.signal() }
        }
        defer { SyntheticCycle.TestHooks.remove(hook) }
        let w1 = Worker()
        let w2 = Worker()
        let least = w1.identity < w2.identity ? w1 : w2
        let other = least === w1 ? w2 : w1
        let (a, d) = aIsLeast ? (least, other) : (other, least)
        let xRunsBefore = model.xRuns.load(ordering: .sequentiallyConsistent)
        model.gateN.hold.store(true, ordering: .sequentiallyConsistent)
        let c = JoinableThread { _ = box.value.n }
        model.gateN.entered.wait()
        model.gateW.hold.store(true, ordering: .sequentiallyConsistent)
        a.run { _ = box.value.o }
        model.gateW.entered.wait()
        model.gateM.hold.store(true, ordering: .sequentiallyConsistent)
        d.run { _ = box.value.q }
        model.gateM.entered.wait()
        model.k = false
        model.flag = true
        model.gateN.open()
        cWaits.wait()
        model.gateM.open()
        dWaits.wait()
        model.gateW.open()
        c.join()
        a.thread.join()
        d.thread.join()
        let runs = model.xRuns.load(ordering: .sequentiallyConsistent) - xRunsBefore
        #expect(runs == 1, "x computed \(runs) times")
        #expect(model.o == 600)
        #expect(model.x == 6)
        #expect(model.n == 5)
        #expect(model.q == 7)
    }

    // PROMISE: no false cycle, bounded recomputation (pins who gives way in a check)
    /// The check path (evaluateAgain): A checks `x` and `w`, waits for C's `n`; C's `n`
    /// (overtaken) waits for D's `q` (no value); D's `q` waits for A's `x` (checked).
    @Test("threads: giving way in a check", arguments: [true, false])
    func givingWayInACheck(aIsLeast: Bool) {
        let model = GiveWayCheck()
        #expect(model.x == 1)
        model.base = 5
        model.k = true
        let box = UncheckedBox(model)
        let (x, q, n) = (
            ObjectIdentifier(model.$x), ObjectIdentifier(model.$q), ObjectIdentifier(model.$n)
        )
        let cWaits = DispatchSemaphore(value: 0)
        let aWaits = DispatchSemaphore(value: 0)
        let dWaits = DispatchSemaphore(value: 0)
        let hook = SyntheticCycle.TestHooks.add(at: .wait) { node in
            if node == q { cWaits.signal() }
            if node == n { aWaits.signal() }
            if node == x { dWaits.signal() }
        }
        defer { SyntheticCycle.TestHooks.remove(hook) }
        let w1 = Worker()
        let w2 = Worker()
        let least = w1.identity < w2.identity ? w1 : w2
        let other = least === w1 ? w2 : w1
        let (a, d) = aIsLeast ? (least, other) : (other, least)
        let (xBefore, wBefore) = (
            model.xRuns.load(ordering: .sequentiallyConsistent),
            model.wRuns.load(ordering: .sequentiallyConsistent)
        )
        model.gateN.hold.store(true, ordering: .sequentiallyConsistent)
        let c = JoinableThread { _ = box.value.n }
        model.gateN.entered.wait()
        model.gateM.hold.store(true, ordering: .sequentiallyConsistent)
        d.run { _ = box.value.q }
        model.gateM.entered.wait()
        model.k = false
        model.gateN.open()
        cWaits.wait()
        a.run { _ = box.value.x }
        aWaits.wait()
        model.gateM.open()
        dWaits.wait()
        c.join()
        a.thread.join()
        d.thread.join()
        let xRuns = model.xRuns.load(ordering: .sequentiallyConsistent) - xBefore
        let wRuns = model.wRuns.load(ordering: .sequentiallyConsistent) - wBefore
        // A few extra evaluations when A gives way; never one per circle up to the bound.
        #expect(xRuns <= 4, "x computed \(xRuns) times")
        #expect(wRuns <= 5, "w computed \(wRuns) times")
        #expect(model.x == 5)
        #expect(model.w == 5)
        #expect(model.n == 5)
        #expect(model.q == 6)
    }

    // PROMISE: no false cycle when no state has one (pins an owed wait after giving way)
    /// Found by the adversarial round: T1 computes `p` (mode 0: it will read `s`, never
    /// computed), held; mode turns 1; T2 reads `o`, whose `s` reads `p`: T2 waits for T1. T1's
    /// `p` reads `s`: T2 gives way (`s`), owing a wait for `p`, but still computes `o`. T1
    /// computes `s` itself, leaves its circle on its thread, and is held inside its tainted
    /// `p`; mode turns 2. T1's `p`, computed again, reads `o`, which T2 holds while it makes its
    /// owed wait for `p`: a circle of waits with nothing overtaken, reported as a cycle before
    /// the fix, though mode 2 has none. The owed wait is no dependency: it ends.
    @Test("threads: a wait owed after giving way ends when it closes a circle")
    func owedWaitWhileHoldingAnOuterPropertyIsNoCycle() {
        let model = ModeRing()
        model.mode = 1
        #expect(model.p == 0)  // p has a value; s and o never computed
        model.mode = 0  // p invalid
        let box = UncheckedBox(model)
        let (p, o) = (ObjectIdentifier(model.$p), ObjectIdentifier(model.$o))
        let t2 = ThreadMark()
        let t2Waits = DispatchSemaphore(value: 0)
        let t2Owes = DispatchSemaphore(value: 0)
        let t1WaitsForO = DispatchSemaphore(value: 0)
        let t2WaitsForP = Atomic<Int>(0)
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) { node in
            if node == p, t2.isThisThread {
                switch t2WaitsForP.add(1, ordering: .sequentiallyConsistent).newValue {
                case 1: t2Waits.signal()
                case 2: t2Owes.signal()
                default: break
                }
            }
            if node == o, !t2.isThisThread { t1WaitsForO.signal() }
        }
        // T2 is slow to look while it owes its wait (it would otherwise see p free for an
        // instant between T1's tainted evaluation and its retry, and stop waiting).
        let slowT2 = Slow()
        let checkHook = SyntheticCycle.TestHooks.add(at: .check) { node in
            if node == p, t2.isThisThread { slowT2.pass() }
        }
        defer {
            SyntheticCycle.TestHooks.remove(waitHook)
            SyntheticCycle.TestHooks.remove(checkHook)
        }
        model.gateA.hold.store(true, ordering: .sequentiallyConsistent)
        let thread1 = JoinableThread { _ = box.value.p }
        model.gateA.entered.wait()  // T1's p read mode 0
        model.mode = 1  // overtakes T1's p
        let thread2 = JoinableThread {
            t2.mark()
            _ = box.value.o
        }
        t2Waits.wait()  // T2's o → s → p waits for T1
        model.gateB.hold.store(true, ordering: .sequentiallyConsistent)
        model.gateA.open()  // T1's p reads s: circle; T2 gives way; T1 computes s
        model.gateB.entered.wait()  // T1's tainted p has s's value
        t2Owes.wait()  // T2 waits for p, as it owes
        slowT2.hold()
        model.mode = 2
        model.gateB.open()  // T1 computes p again (mode 2): reads o, which T2 holds
        t1WaitsForO.wait()
        slowT2.release()
        thread1.join()
        thread2.join()
        #expect(model.s == 1)
        #expect(model.o == 101)
        #expect(model.p == 101)
    }

    // PROMISE: a thread that finished what another waits for, then waits for it, is no cycle
    /// Found by the adversarial round (an intermittent fatal error in stress tests, also before
    /// it): thread A, computing `label`, waits for `positive`, which thread B computes. B
    /// finishes `positive`, then reads `label` and waits for A. If A looks for a cycle from what
    /// it read before B finished, it finds B waiting for A — no cycle, since B no longer
    /// computes `positive`. Gates hold A between reading who computes `positive` and looking for
    /// a cycle. (`HeldCheck` is in SyntheticModels.)
    @Test("threads: a thread that finished what another waits for, then waits for it, is no cycle")
    func handOverIsNoCycle() {
        let model = HeldCheck()
        let positive = ObjectIdentifier(model.$positive)
        let label = ObjectIdentifier(model.$label)
        let aChecks = DispatchSemaphore(value: 0)
        let aMayCheck = DispatchSemaphore(value: 0)
        let bWaits = DispatchSemaphore(value: 0)
        let heldOnce = Atomic<Bool>(false)
        let checkHook = SyntheticCycle.TestHooks.add(at: .check) { node in
            // A, about to look for a cycle while waiting for `positive`: held there once.
            guard node == positive, !heldOnce.exchange(true, ordering: .sequentiallyConsistent)
            else { return }
            aChecks.signal()
            aMayCheck.wait()
        }
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) { node in
            if node == label { bWaits.signal() }
        }
        defer {
            SyntheticCycle.TestHooks.remove(checkHook)
            SyntheticCycle.TestHooks.remove(waitHook)
        }
        model.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let results = Recording<String>()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {  // B
            results.append("B \(box.value.positive)")  // computes `positive`, held at the gate
            results.append("B \(box.value.label)")  // then waits for A's evaluation of `label`
            done.signal()
        }
        model.entered.wait()
        DispatchQueue.global().async {  // A
            results.append("A \(box.value.label)")  // waits for B's evaluation of `positive`
            done.signal()
        }
        aChecks.wait()  // A read that B computes `positive`
        model.hold.store(false, ordering: .sequentiallyConsistent)
        model.gate.signal()  // B finishes `positive`, reads `label`, which A computes
        bWaits.wait()
        aMayCheck.signal()  // A looks for a cycle: there is none
        done.wait()
        done.wait()
        #expect(Set(results.elements) == ["B true", "A yes", "B yes"])
        #expect(model.$positive.evaluationCount == 1)
        #expect(model.$label.evaluationCount == 1)
    }

    // PROMISE: a chain of waits read across a change is no cycle
    /// Found by reading (the chain of waits was read one link at a time): T0, computing `d`,
    /// waits for `a`, which T1 computes. Looking for a cycle, T0 reads that T1 waits for `b`,
    /// which T2 computes. T2 then finishes `b` and waits for `d`, which T0 computes; T1 goes on
    /// computing `a`. T0 reads on: T2 waits for T0. Nothing waits in a circle (T1 runs), but
    /// the chain T1 → `b` → T2 → `d` → T0 mixes reads from before and after T2 finished `b`.
    @Test("threads: a chain of waits read across a change is no cycle")
    func staleChainIsNoCycle() {
        let model = ThreeWay()
        let a = ObjectIdentifier(model.$a)
        let b = ObjectIdentifier(model.$b)
        let d = ObjectIdentifier(model.$d)
        let t1Waits = DispatchSemaphore(value: 0)
        let t2Waits = DispatchSemaphore(value: 0)
        let t0Linked = DispatchSemaphore(value: 0)
        let t0MayGoOn = DispatchSemaphore(value: 0)
        let t0LooksAgain = DispatchSemaphore(value: 0)
        let heldOnce = Atomic<Bool>(false)
        let checkHook = SyntheticCycle.TestHooks.add(at: .check) { node in
            // T0, waiting for `a`, looks for a cycle again (the held look found none).
            if node == a, heldOnce.load(ordering: .sequentiallyConsistent) { t0LooksAgain.signal() }
        }
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) { node in
            if node == b { t1Waits.signal() }
            if node == d { t2Waits.signal() }
        }
        let linkHook = SyntheticCycle.TestHooks.add(at: .link) { node in
            // T0 has read that T2 computes `b`: held there once.
            guard node == b, !heldOnce.exchange(true, ordering: .sequentiallyConsistent)
            else { return }
            t0Linked.signal()
            t0MayGoOn.wait()
        }
        defer {
            SyntheticCycle.TestHooks.remove(linkHook)
            SyntheticCycle.TestHooks.remove(checkHook)
            SyntheticCycle.TestHooks.remove(waitHook)
        }
        let box = UncheckedBox(model)
        let results = Recording<String>()
        // Threads of their own: a dispatch queue adds a third blocked worker only after a while.
        let t2 = JoinableThread {
            results.append("b \(box.value.b)")  // computes `b`, held at its gate
            results.append("d \(box.value.d)")  // then waits for T0's evaluation of `d`
        }
        model.enteredB.wait()
        let t1 = JoinableThread {
            results.append("a \(box.value.a)")  // waits for T2's `b`, then is held at `a`'s gate
        }
        t1Waits.wait()
        let t0 = JoinableThread {
            results.append("d \(box.value.d)")  // waits for T1's `a`, and looks for a cycle
        }
        t0Linked.wait()
        model.gateB.signal()  // T2 finishes `b` and waits for `d`; T1 reads `b`, held in `a`
        t2Waits.wait()
        model.enteredA.wait()
        t0MayGoOn.signal()  // T0 reads on: T2 waits for `d`, which T0 computes
        t0LooksAgain.wait()  // while T1 still computes `a`
        model.gateA.signal()
        for thread in [t0, t1, t2] { thread.join() }
        #expect(results.elements.sorted() == ["a 2", "b 1", "d 3", "d 3"])
        #expect(model.$d.evaluationCount == 1)
    }

    // PROMISE: dependencies switched during a check: no false cycle, both threads right
    @Test("threads: a check overtaken by an invalidation stops waiting for another thread")
    func overtakenCheckStopsWaiting() {
        let model = Switching()
        let (t1, t2) = Self.startCheckWaitingForEvaluation(model)
        model.flag = true  // `p` must compute: T1 stops waiting for `s`, and computes it
        t1.join()
        model.gate.open()  // T2's `s` reads `p`, computed
        t2.join()
        Self.expectSwitched(model)
    }

    // PROMISE: a circle of waits through an overtaken check is no cycle
    /// The same, when T2 looks for a cycle before T1 notices that its check was overtaken: T2
    /// finds the threads waiting for each other, which is no cycle (T1 will stop waiting).
    @Test("threads: a circle of waits through an overtaken check is no cycle")
    func circleThroughOvertakenCheckIsNoCycle() {
        let model = Switching()
        let s = ObjectIdentifier(model.$s)
        let p = ObjectIdentifier(model.$p)
        let holdT1 = Atomic<Bool>(false)
        let t1Held = DispatchSemaphore(value: 0)
        let t1MayGoOn = DispatchSemaphore(value: 0)
        let t2Looks = Atomic<Int>(0)
        let t2LookedOnce = DispatchSemaphore(value: 0)
        let checkHook = SyntheticCycle.TestHooks.add(at: .check) { node in
            if node == s, holdT1.exchange(false, ordering: .sequentiallyConsistent) {
                // T1, waiting for `s` after flag changed: held before it looks at its check.
                t1Held.signal()
                t1MayGoOn.wait()
            }
            // T2, waiting for `p`: its second look means the first one found no cycle.
            if node == p, t2Looks.add(1, ordering: .sequentiallyConsistent).newValue == 2 {
                t2LookedOnce.signal()
            }
        }
        defer { SyntheticCycle.TestHooks.remove(checkHook) }
        let (t1, t2) = Self.startCheckWaitingForEvaluation(model)
        holdT1.store(true, ordering: .sequentiallyConsistent)
        t1Held.wait()
        model.flag = true
        model.gate.open()  // T2's `s` reads `p`, which T1 checks: T2 waits for T1
        t2LookedOnce.wait()
        t1MayGoOn.signal()
        t1.join()
        t2.join()
        Self.expectSwitched(model)
    }

    // PROMISE: none — pins checks nested in an overtaken check being left for later
    /// A check nested in the overtaken one is left undone: `q` (= `s` + 1) is checked for
    /// `p`'s check, and is still stale afterwards. Flag does not mark `q` if `s` did not read
    /// it last time; if it did, flag marks `s`, which marks `q` (it is being computed), and
    /// `q`'s check is overtaken too, but `p`'s, further out, decides.
    @Test(
        "threads: checks nested in an overtaken check are left for later",
        arguments: [false, true])
    func nestedCheckIsLeftForLater(sReadsFlag: Bool) {
        let model = Switching()
        model.sReadsFlagAlways = sReadsFlag
        let (t1, t2) = Self.startCheckWaitingForEvaluation(model, through: .q)
        model.flag = true
        t1.join()
        #expect(!model.$q.isValid)
        model.gate.open()
        t2.join()
        Self.expectSwitched(model)
        #expect(model.$q.evaluationCount == 1)
        #expect(model.q == 1)
        #expect(model.$q.evaluationCount == 2)
    }

    // PROMISE: a circle that cannot be left is reported, saying dependencies switched
    /// Found by review: when the first thread computes `p`, rather than checking it, nothing can
    /// be undone (its function waits inside the read of `s`). The process stops, and the message
    /// says that the cycle may be one of dependencies that switched.
    @Test("threads: a circle of waits through an overtaken evaluation says dependencies switched")
    func circleThroughOvertakenEvaluation() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = Switching()
            model.sReadsFlagAlways = true
            model.gate.hold.store(true, ordering: .sequentiallyConsistent)
            let box = UncheckedBox(model)
            let t2 = JoinableThread { _ = box.value.s }  // computes `s`, held at the gate
            model.gate.entered.wait()
            let s = ObjectIdentifier(model.$s)
            let t1Waits = DispatchSemaphore(value: 0)
            _ = SyntheticCycle.TestHooks.add(at: .wait) { if $0 == s { t1Waits.signal() } }
            let t1 = JoinableThread { _ = box.value.p }  // computes `p` (flag false): waits for `s`
            t1Waits.wait()
            model.flag = true
            model.gate.open()  // `s` reads flag, then `p`
            t1.join()
            t2.join()
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("(The cycle spans threads.)"), "\(text)")
            #expect(
                text.contains("switched: Switching.p changed while being computed"), "\(text)")
        }
    }

    // PROMISE: an invalidation ends around properties computed on two threads
    /// Found by review: with `p` computed on one thread (it reads flag, then waits at a gate)
    /// and `s` on another (it reads `p`, and waits for it), `p` and `s` each list the other as a
    /// dependent (`s` is what `p` read last time). A marking told a computing property's
    /// dependents every time it reached it, so invalidating `p` went round without end.
    @Test("threads: marking ends around two properties computed on two threads")
    func markingEndsAroundTwoComputations() {
        let model = Ring()
        #expect(model.p == 2)  // p reads s
        model.flag = true
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let results = model.results
        let x = JoinableThread { results.append("p \(box.value.p)") }  // held at the gate
        model.gate.entered.wait()
        let p = ObjectIdentifier(model.$p)
        let yWaits = DispatchSemaphore(value: 0)
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) { if $0 == p { yWaits.signal() } }
        defer { SyntheticCycle.TestHooks.remove(waitHook) }
        let y = JoinableThread { results.append("s \(box.value.s)") }  // s reads p: waits
        yWaits.wait()
        model.$p.invalidate()
        model.gate.open()
        x.join()
        y.join()
        #expect(results.elements.sorted() == ["p 0", "s 0"])
        #expect(model.s == 0)
    }

    // PROMISE: dependencies switched during an evaluation: no false cycle, values right
    /// T1 computes `p` (flag is false: it reads `s`) and waits for `s`, which T2 computes; flag
    /// turns true, and T2's `s` reads `p`. T1's evaluation of `p` was overtaken: it reads the
    /// value `s` had, and computes `p` again (flag is true: 0, without `s`).
    @Test("threads: a circle of waits through an overtaken evaluation computes it again")
    func circleThroughOvertakenEvaluationComputesAgain() {
        let model = Self.computedOnce()
        let box = UncheckedBox(model)
        let results = model.results
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let t2 = JoinableThread { results.append("s \(box.value.s)") }  // held at the gate
        model.gate.entered.wait()
        let s = ObjectIdentifier(model.$s)
        let t1Waits = DispatchSemaphore(value: 0)
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) { if $0 == s { t1Waits.signal() } }
        let t1 = JoinableThread { results.append("p \(box.value.p)") }  // computes p, waits for s
        t1Waits.wait()
        SyntheticCycle.TestHooks.remove(waitHook)
        model.flag = true  // overtakes T1's evaluation of p
        model.gate.open()  // T2's s reads flag, then p: each thread waits for the other
        t1.join()
        t2.join()
        #expect(results.elements.sorted() == ["p 0", "s 0"])
        #expect(model.$p.isValid)
        #expect(model.$s.isValid)
        // p: once at first, once overtaken (with the value s had), once again.
        #expect(model.$p.evaluationCount == 3)
        #expect(model.$s.evaluationCount == 2)
        #expect(model.p == 0)
        #expect(model.s == 0)
    }

    // PROMISE: an observed property in a circle of waits is told its final value once
    /// The same circle when `s` is observed and computed at once by T2, and flag is turned by
    /// T3, which then waits for `s` too (to tell its observers): `s` and `p` may each be
    /// computed with the other's last value, but neither such value is stored or told. The
    /// observers hear of the value `s` ends with, once.
    @Test("threads: an observed property in a circle through an overtaken evaluation is told once")
    func observedPropertyInACircleIsToldOnce() {
        let model = Switching()
        let updates = Recording<Update<Int>>()
        let observer = TestObserver()
        observer.observe(model.$s) { updates.append($0) }
        #expect(model.p == 2)
        model.base = 5  // s is computed at once (observed): 5, and it reads flag now
        model.$p.invalidate()
        let box = UncheckedBox(model)
        let s = ObjectIdentifier(model.$s)
        let waits = DispatchSemaphore(value: 0)
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) { if $0 == s { waits.signal() } }
        defer { SyntheticCycle.TestHooks.remove(waitHook) }
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let t2 = JoinableThread { box.value.$s.invalidate() }  // computes s, held at the gate
        model.gate.entered.wait()
        let t1 = JoinableThread { _ = box.value.p }  // computes p (flag false): waits for s
        waits.wait()
        let t3 = JoinableThread { box.value.flag = true }  // marks p and s, then waits for s
        waits.wait()
        model.gate.open()
        t1.join()
        t2.join()
        t3.join()
        #expect(model.s == 0)
        #expect(model.p == 0)
        #expect(updates.elements.map(\.new) == [5, 0])
        withExtendedLifetime(observer) {}
    }

    // PROMISE: a set seen before its marking gives no false cycle; values right
    /// A switch through a synthetic property that T3 sets (`q`, a hybrid): the threads' circle
    /// is found while T3 has stored the value but not yet marked `p`, which read it. Nothing in
    /// the circle is overtaken yet, but a marking is in flight: the threads wait for it, and then
    /// T1 leaves the circle.
    @Test(
        "threads: a circle through a set seen before its marking waits for the marking",
        arguments: [false, true])
    func circleThroughASetInFlight(oneThread: Bool) {
        let model = SetSwitching()
        #expect(model.p == 2)
        model.base = 5
        model.$p.invalidate()
        let box = UncheckedBox(model)
        let results = model.results
        let (p, q, s) = (ObjectIdentifier(model.$p), ObjectIdentifier(model.$q), model.$s)
        let waits = DispatchSemaphore(value: 0)
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) {
            if $0 == ObjectIdentifier(s) { waits.signal() }
        }
        defer { SyntheticCycle.TestHooks.remove(waitHook) }
        let marking = DispatchSemaphore(value: 0)
        let mayMark = DispatchSemaphore(value: 0)
        let markingHook = SyntheticCycle.TestHooks.add(at: .marking) {
            if $0 == q {
                marking.signal()
                mayMark.wait()
            }
        }
        defer { SyntheticCycle.TestHooks.remove(markingHook) }
        let looks = Atomic<Int>(0)
        let lookedTwice = DispatchSemaphore(value: 0)
        let checkHook = SyntheticCycle.TestHooks.add(at: .check) {
            if $0 == p, looks.add(1, ordering: .sequentiallyConsistent).newValue == 2 {
                lookedTwice.signal()
            }
        }
        defer { SyntheticCycle.TestHooks.remove(checkHook) }
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        var t2: JoinableThread? = nil
        let t1: JoinableThread
        if oneThread {
            // T1 computes p, and s inside it, held at the gate.
            t1 = JoinableThread { results.append("p \(box.value.p)") }
            model.gate.entered.wait()
        } else {
            t2 = JoinableThread { results.append("s \(box.value.s)") }  // held at the gate
            model.gate.entered.wait()
            t1 = JoinableThread { results.append("p \(box.value.p)") }  // waits for s
            waits.wait()
        }
        let t3 = JoinableThread { box.value.q = true }
        marking.wait()  // q is true, p not yet marked
        model.gate.open()  // s reads q, then p: a circle
        lookedTwice.wait()  // the first look found a circle, and did not report it
        mayMark.signal()
        t1.join()
        t2?.join()
        t3.join()
        #expect(results.elements.sorted() == (oneThread ? ["p 0"] : ["p 0", "s 0"]))
        #expect(model.p == 0)
        #expect(model.s == 0)
    }

    // PROMISE: none — pins who may leave a circle through an overtaken check
    /// Found by the adversarial round: an evaluation inside an overtaken check was taken for
    /// overtaken itself (the check's start was compared), so a thread that left a circle through
    /// it and computed it again left the same circle again, up to the bound, after one change.
    /// B computes `y` (flag false: it will read `x`), held at gateY; T1 reads `o`, checks `x` and
    /// computes `w` for the check, held at gateW; flag turns (overtaking `x`'s check, `w` and
    /// `y`). B's `y` reads `x`: B waits for T1, held at its first look. T1's `w` reads `x`, which
    /// it computes inside its overtaken check, after the change: not overtaken. `x` reads `y`:
    /// T1 waits for B. Only B may leave that circle (its `y` is overtaken): T1 must not (it
    /// would compute `x` again), and waits. The test lets B go at T1's second look in that
    /// wait, or at its second wait for `y` (it left).
    @Test("threads: a property computed again inside its overtaken check is not overtaken")
    func evaluationInsideAnOvertakenCheckIsNotOvertaken() {
        let model = InsideCheck()
        #expect(model.o == 100)  // x = w = 1
        #expect(model.y == 2)
        model.base = 5  // w invalid; x, o, y may be stale
        model.$y.invalidate()
        let box = UncheckedBox(model)
        let (x, y) = (ObjectIdentifier(model.$x), ObjectIdentifier(model.$y))
        let bWaits = DispatchSemaphore(value: 0)
        let releaseB = DispatchSemaphore(value: 0)
        let holdB = Atomic<Bool>(true)
        let waitsForY = Atomic<Int>(0)
        let looksForY = Atomic<Int>(0)
        let decided = DispatchSemaphore(value: 0)
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) { node in
            if node == x { bWaits.signal() }
            if node == y, waitsForY.add(1, ordering: .sequentiallyConsistent).newValue == 2 {
                decided.signal()
            }
        }
        defer { SyntheticCycle.TestHooks.remove(waitHook) }
        let checkHook = SyntheticCycle.TestHooks.add(at: .check) { node in
            if node == x, holdB.load(ordering: .sequentiallyConsistent) { releaseB.wait() }
            if node == y, looksForY.add(1, ordering: .sequentiallyConsistent).newValue == 2 {
                decided.signal()
            }
        }
        defer { SyntheticCycle.TestHooks.remove(checkHook) }
        let xRunsBefore = model.xRuns.load(ordering: .sequentiallyConsistent)
        model.gateY.hold.store(true, ordering: .sequentiallyConsistent)
        let b = JoinableThread { _ = box.value.y }
        model.gateY.entered.wait()
        model.gateW.hold.store(true, ordering: .sequentiallyConsistent)
        let t1 = JoinableThread { _ = box.value.o }
        model.gateW.entered.wait()
        model.flag = true
        model.gateY.open()
        bWaits.wait()  // B waits for x, held at its first look
        model.gateW.open()
        decided.wait()
        holdB.store(false, ordering: .sequentiallyConsistent)
        releaseB.signal()
        b.join()
        t1.join()
        // Once, by T1 inside its check: had T1 left the circle, it would have computed it again.
        #expect(model.xRuns.load(ordering: .sequentiallyConsistent) == xRunsBefore + 1)
        #expect(model.x == 6)
        #expect(model.y == 5)
        #expect(model.w == 6)
        #expect(model.o == 600)
    }

    // PROMISE: no false cycle when the overtaken thread cannot leave; values right
    /// A circle of waits where the overtaken thread cannot leave (the property it waits for has
    /// no value yet) and the other thread, whose evaluation is current, could: T1 computes `p`
    /// (flag false: it will read `s`, which was never computed), held at gateP; flag turns true;
    /// T2 computes `s`, which reads `p` and waits for T1; T1's `p` reads `s` and waits for T2.
    /// No state of the program has that circle: T2 gives way. It reads `p`'s last value (tainting
    /// `s`), and computes `s` again only once T1 no longer computes `p`; T1 meanwhile computes
    /// `s` itself (flag true: it reads `p`, which T1 computes: it leaves that circle on its
    /// thread) and computes `p` again.
    @Test("threads: a circle whose overtaken thread waits for a property without value is left")
    func circleWhoseOvertakenThreadCannotLeaveIsLeftByTheOther() {
        let model = LateRing()
        #expect(model.p == 0)  // flag true: p never read s
        model.flag = false  // p invalid
        let box = UncheckedBox(model)
        let p = ObjectIdentifier(model.$p)
        let t2Waits = DispatchSemaphore(value: 0)
        let hook = SyntheticCycle.TestHooks.add(at: .wait) { node in
            if node == p { t2Waits.signal() }
        }
        defer { SyntheticCycle.TestHooks.remove(hook) }
        model.gateP.hold.store(true, ordering: .sequentiallyConsistent)
        let t1 = JoinableThread { _ = box.value.p }
        model.gateP.entered.wait()  // T1 read flag false
        model.flag = true  // overtakes T1's p
        let t2 = JoinableThread { _ = box.value.s }
        t2Waits.wait()  // T2's s waits for T1's p
        model.gateP.open()
        t1.join()
        t2.join()
        #expect(model.p == 0)
        #expect(model.s == 0)
        model.flag = false
        #expect(model.p == 2)  // s = base = 1
    }

    // PROMISE: a property runs exactly when what it read changed; depends on what it last read
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

    // PROMISE: under threads: values as from scratch, observers told, dependents as last read
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

    // PROMISE: a reader waiting for an evaluation whose owner dies gets its value
    /// One thread evaluates (held at the gate, after reading `x`, owner held by the
    /// evaluation) while a second waits for it and the test drops the owner's last outside
    /// reference; the evaluation finishes, then the owner dies; later reads abandon.
    @Test("a waiter for an evaluation whose owner dies as it ends")
    func waiterForEvaluationWhoseOwnerDies() {
        let deaths = PCCounter()
        var model: PCGated? = PCGated(deaths: deaths)
        let x = model!.$x
        let slow = model!.$slow
        _ = slow.value  // 11
        model!.hold.store(true, ordering: .sequentiallyConsistent)
        x.value = 5
        let box = Box(model!)
        let entered = model!.entered
        let gate = model!.gate
        model = nil
        let results = Recording<Int>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            do {
                let owner = box.take()!
                results.append(owner.slow)  // evaluates, held at the gate
            }  // the owner's last reference goes here
            done.signal()
        }.start()
        entered.wait()
        let waiting = DispatchSemaphore(value: 0)
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) {
            if $0 == ObjectIdentifier(slow) { waiting.signal() }
        }
        Thread {
            results.append(slow.value)  // waits for the evaluation
            done.signal()
        }.start()
        waiting.wait()
        SyntheticCycle.TestHooks.remove(waitHook)
        gate.signal()
        done.wait()
        done.wait()
        #expect(results.elements == [15, 15])
        #expect(deaths.count == 1)
        x.value = 6
        #expect(slow.value == 15)  // abandoned: the last value
        #expect(!slow.isValid)
    }

    // PROMISE: setters of hybrid sets and dependents lists are freed on every marking path
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

    // PROMISE: code in a thread-local destructor run after Herald's may use Herald
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

    // PROMISE: after an inner evaluation ends, the outer's reads are the outer's dependencies
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

    // PROMISE: reads on threads a function starts are not its dependencies
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

    // PROMISE: what observers read inside an evaluation is no dependency (bar the documented case)
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

    // PROMISE: threads that exit leave no evaluation state behind; values right
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

    // PROMISE: values right while threads set shared variables and read properties
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

    // PROMISE: none — pins the old SyntheticState (a set during a check)
    @Test func aSetDuringACheckMakesTheCheckEndValid() {
        var state = SyntheticState()
        let thread = ObjectIdentifier(Token())
        _ = state.beginRead(by: thread)
        _ = state.finishEvaluation(changed: true, marks: 0)
        // A synthetic source may have changed.
        _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        guard case .check(let marks) = state.beginRead(by: thread) else {
            Issue.record("expected a check")
            return
        }
        let (store, _, _) = state.set(changed: true)
        #expect(store)
        let versionAfterSet = state.version
        guard case .valid(let version) = state.finishChecking(sourceMoved: false, marks: marks)
        else {
            Issue.record("the set value must stand")
            return
        }
        #expect(version == versionAfterSet)
        #expect(state.computingThread == nil)
    }

    // PROMISE: none — pins the old SyntheticState (an invalidation during a check)
    @Test func anInvalidationDuringACheckStillEvaluates() {
        var state = SyntheticState()
        let thread = ObjectIdentifier(Token())
        _ = state.beginRead(by: thread)
        _ = state.finishEvaluation(changed: true, marks: 0)
        _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        guard case .check(let marks) = state.beginRead(by: thread) else {
            Issue.record("expected a check")
            return
        }
        _ = state.mark(definitely: true, marking: 1, setsOverStale: 0)
        guard case .evaluate = state.finishChecking(sourceMoved: false, marks: marks) else {
            Issue.record("an invalidation during the check must lead to an evaluation")
            return
        }
    }

    // PROMISE: none — pins the old SyntheticState (overtaken checks)
    @Test func aCheckIsOvertakenByAnInvalidationUntilItEnds() throws {
        let thread = ObjectIdentifier(Token())
        var (state, marks) = try #require(Self.checking(by: thread))
        #expect(!state.checkWasOvertaken)
        _ = state.mark(definitely: true, marking: 1, setsOverStale: 0)
        #expect(state.checkWasOvertaken)
        _ = state.finishChecking(sourceMoved: false, marks: marks)
        #expect(!state.checkWasOvertaken)
    }

    // PROMISE: none — pins the old SyntheticState (sets over stale sources)
    @Test func aStalePropertyTellsItsDependentsAgainAfterASetOverStale() {
        var state = Self.computedWithADependent()
        // Was valid: tells. Told then: does not. A set since: tells. Told again: does not.
        #expect(state.mark(definitely: true, marking: 1, setsOverStale: 0).dependents != nil)
        #expect(state.mark(definitely: true, marking: 2, setsOverStale: 0).dependents == nil)
        #expect(state.mark(definitely: true, marking: 3, setsOverStale: 1).dependents != nil)
        #expect(state.mark(definitely: true, marking: 4, setsOverStale: 1).dependents == nil)
    }

    // PROMISE: none — pins the old SyntheticState (markings)
    @Test func aPropertyTellsItsDependentsOncePerMarking() {
        var state = Self.computedWithADependent()
        #expect(state.mark(definitely: false, marking: 1, setsOverStale: 0).dependents != nil)
        // Reached again in the same marking: neither a set since nor a computation running
        // makes it tell again.
        #expect(state.mark(definitely: false, marking: 1, setsOverStale: 1).dependents == nil)
        _ = state.beginRead(by: ObjectIdentifier(Token()))  // checks: a computation running
        #expect(state.mark(definitely: false, marking: 1, setsOverStale: 2).dependents == nil)
        #expect(state.mark(definitely: false, marking: 2, setsOverStale: 2).dependents != nil)
    }

    // PROMISE: none — pins the old SyntheticState (sets over stale sources)
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

    // PROMISE: none — pins the old SyntheticState (sets over stale sources)
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

    // PROMISE: none — pins the old SyntheticState (sets over stale sources)
    @Test func aSetOfAPropertyNeverEvaluatedIsNotOverStale() {
        var state = SyntheticState()
        #expect(!state.set(changed: true).overStale)  // it read nothing: in no dependents list
        _ = state.mark(definitely: true, marking: 1, setsOverStale: 0)
        #expect(!state.set(changed: true).overStale)
    }

    // PROMISE: none — pins the old SyntheticState (overtaken checks)
    @Test func aReadInsideTheThreadsOwnCheckIsACycleUnlessTheCheckWasOvertaken() throws {
        let thread = ObjectIdentifier(Token())
        var (state, checkStart) = try #require(Self.checking(by: thread))
        guard case .cycle = state.beginRead(by: thread) else {
            Issue.record("a read inside the thread's own check that was not overtaken is a cycle")
            return
        }
        _ = state.mark(definitely: true, marking: 2, setsOverStale: 0)
        guard case .evaluate(let marks) = state.beginRead(by: thread) else {
            Issue.record("an overtaken check lets the property be computed inside it")
            return
        }
        let stored = state.finishEvaluation(changed: true, marks: marks)
        #expect(stored)
        #expect(state.computingThread == thread)  // the check goes on
        guard case .valid = state.beginRead(by: thread) else {
            Issue.record("computed inside the check: valid")
            return
        }
        guard case .valid = state.finishChecking(sourceMoved: true, marks: checkStart) else {
            Issue.record("the check finds the property valid")
            return
        }
        #expect(state.computingThread == nil)
    }

    // PROMISE: none — pins the old SyntheticState (interrupted checks)
    @Test(arguments: [
        // Not overtaken, made for an overtaken check: left for a later read.
        Interruption(
            meanwhile: .nothing, mayLeaveUndone: true, outerCheckOvertaken: true,
            outcome: .leftUndone),
        // Overtaken: it is the check that decides nothing, so it computes.
        Interruption(
            meanwhile: .invalidated, mayLeaveUndone: true, outerCheckOvertaken: false,
            outcome: .evaluate),
        // Overtaken, inside an overtaken one: that one decides.
        Interruption(
            meanwhile: .markedMayBeStale, mayLeaveUndone: true, outerCheckOvertaken: true,
            outcome: .leftUndone),
        // Made for a read, which needs a value.
        Interruption(
            meanwhile: .nothing, mayLeaveUndone: false, outerCheckOvertaken: true,
            outcome: .evaluate),
        // A set stands.
        Interruption(
            meanwhile: .set, mayLeaveUndone: true, outerCheckOvertaken: false, outcome: .valid),
    ])
    func anInterruptedCheck(_ interruption: Interruption) throws {
        let thread = ObjectIdentifier(Token())
        var (state, marks) = try #require(Self.checking(by: thread))
        switch interruption.meanwhile {
        case .nothing: break
        case .invalidated: _ = state.mark(definitely: true, marking: 1, setsOverStale: 0)
        case .markedMayBeStale: _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        case .set: _ = state.set(changed: true)
        }
        let step = state.finishInterruptedCheck(
            marks: marks, mayLeaveUndone: interruption.mayLeaveUndone,
            outerCheckOvertaken: interruption.outerCheckOvertaken)
        switch (step, interruption.outcome) {
        case (.leftUndone, .leftUndone):
            #expect(state.computingThread == nil)
            #expect(state.freshness == .mayBeStale)
            guard case .check = state.beginRead(by: thread) else {
                Issue.record("the next read must check again")
                break
            }
        case (.evaluate, .evaluate):
            #expect(state.computingThread == thread)
        case (.valid, .valid):
            #expect(state.computingThread == nil)
        default:
            Issue.record("expected \(interruption.outcome), got \(step)")
        }
        #expect(!state.checkWasOvertaken)
    }

    // PROMISE: none — pins the old SyntheticState (overtaken checks)
    /// Found by the adversarial round (see `evaluationInsideAnOvertakenCheckIsNotOvertaken`).
    @Test func anEvaluationInsideAnOvertakenCheckIsOvertakenOnlyByWhatFollows() throws {
        let thread = ObjectIdentifier(Token())
        var (state, _) = try #require(Self.checking(by: thread))
        _ = state.mark(definitely: true, marking: 2, setsOverStale: 0)
        #expect(state.checkWasOvertaken)
        #expect(state.wasOvertaken)
        guard case .evaluate = state.beginRead(by: thread) else {
            Issue.record("expected an evaluation inside the overtaken check")
            return
        }
        #expect(!state.wasOvertaken)
        _ = state.mark(definitely: true, marking: 3, setsOverStale: 0)
        #expect(state.wasOvertaken)
    }

    // PROMISE: none — pins the old SyntheticState (taint)
    @Test func aTaintedEvaluationIsNotStored() {
        var state = SyntheticState()
        let thread = ObjectIdentifier(Token())
        _ = state.beginRead(by: thread)
        state.taint(retry: false)
        let (retry, queue) = state.finishTaintedEvaluation()
        #expect(!retry)
        #expect(!queue)
        #expect(state.freshness == .invalid)
        #expect(!state.hasValue)
        #expect(state.computingThread == nil)
        #expect(!state.isTainted)
        guard case .evaluate = state.beginRead(by: thread) else {
            Issue.record("a tainted evaluation must leave the property to compute")
            return
        }
    }

    // PROMISE: none — pins the old SyntheticState (taint)
    @Test func theOutermostTaintedEvaluationIsRetried() {
        var state = SyntheticState()
        let thread = ObjectIdentifier(Token())
        _ = state.beginRead(by: thread)
        state.taint(retry: true)
        // Tainted again, further in (the property is in the circle twice).
        state.taint(retry: false)
        let (retry, _) = state.finishTaintedEvaluation()
        #expect(retry)
        _ = state.beginRead(by: thread)
        let changed = state.finishEvaluation(changed: true, marks: state.marks)
        #expect(changed)
        #expect(state.freshness == .valid)
    }

    // PROMISE: none — pins the old SyntheticState (taint)
    @Test func aSetDuringATaintedEvaluationStands() {
        var state = SyntheticState()
        let thread = ObjectIdentifier(Token())
        _ = state.beginRead(by: thread)
        state.taint(retry: true)
        _ = state.set(changed: true)
        let version = state.version
        _ = state.finishTaintedEvaluation()
        guard case .valid(let now) = state.beginRead(by: thread) else {
            Issue.record("the set value must stand")
            return
        }
        #expect(now == version)
    }

    // PROMISE: none — pins the old SyntheticState (taint)
    @Test func anObservedTaintedPropertyIsQueuedUnlessItIsComputedAgain() {
        var state = SyntheticState()
        let thread = ObjectIdentifier(Token())
        _ = state.setObserved(true)
        _ = state.beginRead(by: thread)
        state.taint(retry: true)
        let whenRetrying = state.finishTaintedEvaluation()
        #expect(!whenRetrying.queue)
        _ = state.beginRead(by: thread)
        state.taint(retry: false)
        let once = state.finishTaintedEvaluation()
        #expect(once.queue)
        #expect(state.isQueued)
        _ = state.beginRead(by: thread)
        state.taint(retry: false)
        // Queued already.
        let again = state.finishTaintedEvaluation()
        #expect(!again.queue)
    }

    // PROMISE: none — pins the old SyntheticState (giving up)
    /// A thread that gave way (see `circleWhoseOvertakenThreadCannotLeaveIsLeftByTheOther`)
    /// gives up the evaluation its tainted check started (`evaluateAgain`): the property is
    /// left to compute.
    @Test func anEvaluationGivenUpBeforeItRunsLeavesThePropertyToCompute() throws {
        let thread = ObjectIdentifier(Token())
        var (state, marks) = try #require(Self.checking(by: thread))
        state.taint(retry: true)
        guard case .evaluateAgain = state.finishChecking(sourceMoved: false, marks: marks) else {
            Issue.record("a tainted check must compute")
            return
        }
        state.giveUpBeforeEvaluating()
        #expect(state.computingThread == nil)
        #expect(state.freshness == .invalid)
        let other = ObjectIdentifier(Token())
        guard case .evaluate = state.beginRead(by: other) else {
            Issue.record("another thread computes it")
            return
        }
        #expect(state.computingThread == other)
    }

    // PROMISE: none — pins the old SyntheticState (taint)
    @Test func aTaintedCheckComputes() throws {
        let thread = ObjectIdentifier(Token())
        var (state, marks) = try #require(Self.checking(by: thread))
        state.taint(retry: true)
        guard case .evaluateAgain = state.finishChecking(sourceMoved: false, marks: marks) else {
            Issue.record("a tainted check must compute")
            return
        }
        #expect(!state.isTainted)
        let changed = state.finishEvaluation(changed: false, marks: marks)
        #expect(!changed)
        #expect(state.freshness == .valid)
    }

    // PROMISE: none — pins the old SyntheticState (taint)
    @Test func aTaintedCheckLeftUndoneForgetsTheTaint() throws {
        let thread = ObjectIdentifier(Token())
        var (state, marks) = try #require(Self.checking(by: thread))
        state.taint(retry: false)
        guard
            case .leftUndone = state.finishInterruptedCheck(
                marks: marks, mayLeaveUndone: true, outerCheckOvertaken: false)
        else {
            Issue.record("expected the check left undone")
            return
        }
        #expect(!state.isTainted)
        #expect(state.freshness == .mayBeStale)
    }
}
