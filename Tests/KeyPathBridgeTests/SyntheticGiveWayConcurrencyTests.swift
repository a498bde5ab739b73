import Dispatch
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge
@testable import Messaging

#if canImport(Glibc)
    import Glibc
#endif

/// A thread that gives way in a circle of waits whose overtaken threads wait for properties
/// without a value (see `SyntheticCycle.wait(for:computedBy:mayGiveUp:)`), found by the review
/// and the adversarial round of that change. (`HoldingGate` is in SyntheticConcurrencyTests.)
@Suite("Synthetic properties: giving way in a circle of waits (concurrency)", .serialized)
struct SyntheticGiveWayConcurrencyTests {
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

/// See `AdversarialGiveWayTests.owedWaitWhileHoldingAnOuterProperty`. `p` can be held at gateA
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
