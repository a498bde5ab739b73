import Dispatch
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge

@Suite("Synthetic properties: cycles across threads (concurrency)", .serialized)
struct SyntheticCycleConcurrencyTests {
    /// Found by the adversarial round (an intermittent fatal error in stress tests, also before
    /// it): thread A, computing `label`, waits for `positive`, which thread B computes. B
    /// finishes `positive`, then reads `label` and waits for A. If A looks for a cycle from what
    /// it read before B finished, it finds B waiting for A — no cycle, since B no longer
    /// computes `positive`. Gates hold A between reading who computes `positive` and looking for
    /// a cycle. (`HeldCheck` is in SyntheticHybridConcurrencyTests.)
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
}

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

/// Found by the adversarial round: when a property's dependencies switch while two threads
/// refresh it, the threads may wait for each other for a moment though no single state of the
/// program has a cycle. `p` = flag ? 0 : `s` + 1 and `s` = flag ? `p` : base. T1 checks `p` and
/// waits for `s`, which T2 computes; then flag becomes true, and T2's `s` reads `p`. T1's check
/// no longer decides anything (flag invalidated `p`, which must compute), so T1 stops waiting.
@Suite("Synthetic properties: dependencies that switch during a check (concurrency)", .serialized)
struct SyntheticSwitchConcurrencyTests {
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

    /// Found by the adversarial round: one thread checks `p` and computes `s` for the check;
    /// another turns flag meanwhile, and `s` reads `p`. The check was overtaken, so `p` is
    /// computed inside it (flag is true: `p` no longer reads `s`), not taken for a cycle.
    @Test("threads: a switch during a check, made by another thread, computes inside the check")
    func switchByAnotherThreadDuringACheck() {
        let model = Switching()
        #expect(model.p == 2)
        model.base = 5  // s invalid, p may be stale
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let results = model.results
        let t1 = JoinableThread { results.append("p \(box.value.p)") }
        model.gate.entered.wait()  // T1 checks p and computes s, held before s reads anything
        model.flag = true  // overtakes p's check; s reads flag, and p, once base is above 3
        model.gate.open()
        t1.join()
        #expect(results.elements == ["p 0"])
        #expect(model.$p.isValid)
        #expect(model.$p.evaluationCount == 2)
        #expect(model.p == 0)
        #expect(model.s == 0)
    }

    /// A property computed inside its own overtaken check that reads itself is a cycle, not
    /// a computation inside that computation.
    @Test("threads: computed inside its overtaken check, a property that reads itself is a cycle")
    func selfReadInsideAnOvertakenCheckIsACycle() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = Switching()
            model.selfReading = true
            #expect(model.p == 2)
            model.base = 5
            model.gate.hold.store(true, ordering: .sequentiallyConsistent)
            let box = UncheckedBox(model)
            let t1 = JoinableThread { _ = box.value.p }
            model.gate.entered.wait()
            model.flag = true  // p now reads p
            model.gate.open()
            t1.join()
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("synthetic property cycle: Switching.p → Switching.p"), "\(text)")
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
