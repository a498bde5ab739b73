import Dispatch
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge
@testable import Messaging

/// A synthetic property whose function sets a variable while it computes (once, when `armed`).
final class SettingWhileComputing: @unchecked Sendable {
    let v1 = Var(0)
    let armed = Atomic<Bool>(false)
    @Synthetic({ (m: SettingWhileComputing) in
        if m.armed.exchange(false, ordering: .sequentiallyConsistent) { m.v1.value = 1 }
        return 7
    }) var s: Int
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

/// Synthetic properties on two objects that depend on each other's (no cycle among properties).
final class Partner: @unchecked Sendable {
    @ObservableVar var base = 0
    nonisolated(unsafe) var other: Partner?
    @Synthetic({ (p: Partner) in p.base + 1 }) var own: Int
    @Synthetic({ (p: Partner) in p.own + (p.other?.own ?? 0) }) var withOther: Int
}

/// A variable and a synthetic property over it.
final class Tens: @unchecked Sendable {
    @ObservableVar var a = 0
    @Synthetic({ (t: Tens) in t.a * 10 }) var tenfold: Int
}

@Suite("Synthetic properties: concurrency", .serialized)
struct SyntheticConcurrencyTests {
    @Test("order: another thread's change queued behind a delivery is heard before the value")
    func changeQueuedBehindDeliveryHeardFirst() {
        let tens = Tens()
        let observer = TestObserver()
        let log = Recording<String>()
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        observer.observe(tens.$a) { update in
            log.append("a \(update.new)")
            if update.new == 1 {
                entered.signal()
                gate.wait()
            }
        }
        observer.observe(tens.$tenfold) { update in log.append("tenfold \(update.new)") }
        let box = UncheckedBox(tens)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            box.value.a = 1
            done.signal()
        }
        entered.wait()
        // The other thread delivers: this change is queued behind its delivery of 1.
        tens.a = 2
        gate.signal()
        done.wait()
        #expect(log.elements == ["a 1", "a 2", "tenfold 20"])
    }

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

    @Test("threads: an invalidation during an evaluation is not lost")
    func invalidationDuringEvaluationIsKept() {
        let gated = Gated()
        gated.holdAtGate.store(true, ordering: .sequentiallyConsistent)
        let done = DispatchSemaphore(value: 0)
        let box = UncheckedBox(gated)
        let first = Recording<Int>()
        DispatchQueue.global().async {
            first.append(box.value.doubled)
            done.signal()
        }
        gated.entered.wait()
        gated.input = 5  // the running evaluation read 1 before the gate
        gated.holdAtGate.store(false, ordering: .sequentiallyConsistent)
        gated.gate.signal()
        done.wait()
        #expect(first.elements == [2])
        #expect(!gated.$doubled.isValid)
        #expect(gated.doubled == 10)
    }

    @Test("threads: reads, sets and invalidations from many threads agree with the sources")
    func manyThreads() {
        let gated = Gated()
        let box = UncheckedBox(gated)
        concurrently(threads: 4) { index in
            for step in 0..<300 {
                switch (index + step) % 3 {
                case 0: box.value.input = step
                case 1: _ = box.value.doubled
                default: box.value.$doubled.invalidate()
                }
            }
        }
        #expect(gated.doubled == gated.input * 2)
        #expect(gated.mostRunning.load(ordering: .sequentiallyConsistent) == 1)
    }

    @Test("threads: observed properties from many threads end with the right value")
    func observedFromManyThreads() {
        let gated = Gated()
        let observer = TestObserver()
        let last = Recording<Int>()
        observer.observe(gated.$doubled) { last.append($0.new) }
        let box = UncheckedBox(gated)
        concurrently(threads: 4) { index in
            for step in 0..<200 { box.value.input = index * 1000 + step }
        }
        #expect(gated.doubled == gated.input * 2)
        #expect(last.elements.last == gated.input * 2)
    }

    /// Subscribing a property to a variable sweeps the variable's dependents list for dead
    /// entries under the variable's lock. If that sweep took a retain (and a release) of each
    /// live entry, a property whose last reference another thread dropped meanwhile died right
    /// there, and its deinit took the variable's lock again. (A stress test: the window is a
    /// few instructions wide and no hook can hold a thread inside the runtime's release.)
    @Test("threads: properties made and dropped on one thread while another subscribes others")
    func droppedWhileAnotherSubscribes() {
        let tens = Tens()
        let box = UncheckedBox(tens)
        concurrently(threads: 2) { index in
            for step in 0..<3_000 {
                let property = Synthetic(owner: box.value, name: "p\(index)-\(step)") {
                    $0.a + step
                }
                _ = property.value
                if index == 0 { box.value.a = step }
            }
        }
        #expect(tens.tenfold == tens.a * 10)
    }

    @Test("threads: no deadlock when properties of two objects depend on each other's")
    func crossObjectNoDeadlock() {
        let a = Partner()
        let b = Partner()
        a.other = b
        b.other = a
        let boxA = UncheckedBox(a)
        let boxB = UncheckedBox(b)
        let finished = finishes(within: 60) {
            concurrently(threads: 4) { index in
                for step in 0..<500 {
                    switch index {
                    case 0: _ = boxA.value.withOther
                    case 1: _ = boxB.value.withOther
                    case 2: boxA.value.base = step
                    default: boxB.value.base = step
                    }
                }
            }
        }
        #expect(finished)
        #expect(a.withOther == a.base + 1 + b.base + 1)
        #expect(b.withOther == a.withOther)
    }

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

    /// While one thread binds `p` (held observing its declared path, through `slow`), another
    /// reads `p`, which is computed and cached; then a source along the path changes, before
    /// the path is observed. The binding must not leave that value valid: the binding thread's
    /// own read then computes again.
    @Test("threads: a change along a declared path while it is being wired is not missed")
    func changeDuringBindingIsNotMissed() {
        let model = BoundSlowly()
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let t1 = JoinableThread { _ = box.value.p }  // binds p: evaluates slow, held there
        model.gate.entered.wait()
        let t2 = JoinableThread { _ = box.value.p }  // reads p meanwhile: computed, cached
        t2.join()
        #expect(model.$p.evaluationCount == 1)
        model.source = 1  // along p's declared path, not yet observed
        model.gate.open()
        t1.join()  // T1's read, after the binding, computes again
        #expect(model.$p.evaluationCount == 2)
    }

    /// From the review: the binding thread re-enters the property while observing its paths
    /// (q, on the path, reads p); that value was invalidated once the paths were observed, and
    /// the function ran twice for one read.
    @Test("a property read while its own thread binds it is computed once")
    func binderOwnReadIsComputedOnce() {
        let model = BoundThroughReader()
        #expect(model.p == 1)
        #expect(model.$p.evaluationCount == 1)
        #expect(model.$q.evaluationCount == 1)
    }

    /// From the review: a hybrid set made while another thread binds the property was thrown
    /// away by the binding's invalidation.
    @Test("threads: a hybrid set made while another thread binds the property stands")
    func hybridSetDuringBindingStands() {
        let model = BoundSlowly()
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let t1 = JoinableThread { _ = box.value.p }  // binds p; held in slow while wiring
        model.gate.entered.wait()
        let t2 = JoinableThread { box.value.p = 42 }
        t2.join()
        model.gate.open()
        t1.join()
        #expect(model.p == 42)
        #expect(model.$p.evaluationCount == 0)
    }

    /// From the adversarial round: observing the first declared path (through `q`, which
    /// reads `p`) computes `p` on the binding thread; a change along the second path, not yet
    /// observed, was then missed.
    @Test("a value the binding thread computes before its last path is observed is not kept")
    func binderValueBeforeLastPathIsNotKept() {
        let model = ReenteredThenTicked()
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let t1 = JoinableThread { _ = box.value.p }  // observing q computes p, held in q
        model.gate.entered.wait()
        model.raw.store(1, ordering: .sequentiallyConsistent)
        model.tick = 1  // along p's second path, not yet observed
        model.gate.open()
        t1.join()
        #expect(model.p == 1)
    }

    /// From the adversarial round: a read during the binding marked the property, and a set
    /// after it was then thrown away.
    @Test("threads: a hybrid set after a read during another thread's binding stands")
    func setAfterReadDuringBindingStands() {
        let model = SlowRaw()
        model.wiring.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let binder = JoinableThread { _ = box.value.p }  // binds p; held in slow
        model.wiring.entered.wait()
        JoinableThread { _ = box.value.p }.join()  // computed meanwhile: 0
        JoinableThread { box.value.p = 42 }.join()
        model.wiring.open()
        binder.join()
        #expect(model.p == 42)
    }

    /// From the adversarial round: an evaluation during the binding, overtaken by a set (so
    /// its value is dropped), still marked the property, and the set was thrown away.
    @Test("threads: a hybrid set during an evaluation during another thread's binding stands")
    func setDuringEvaluationDuringBindingStands() {
        let model = SlowRaw()
        model.wiring.hold.store(true, ordering: .sequentiallyConsistent)
        model.pGate.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let binder = JoinableThread { _ = box.value.$p }  // binds p; held in slow
        model.wiring.entered.wait()
        let reader = JoinableThread { _ = box.value.p }  // held in p
        model.pGate.entered.wait()
        JoinableThread { box.value.p = 42 }.join()
        model.pGate.open()
        reader.join()
        model.wiring.open()
        binder.join()
        #expect(model.p == 42)
    }

    @Test("a cycle over three threads names its properties in a loop, in order")
    func cycleAcrossThreeThreads() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            // x → y → z → x, each started on its own thread: each reads the next once all three
            // are computing. Between two properties of the loop, an intermediate one (`viaY`).
            final class Ring: @unchecked Sendable {
                let started = DispatchSemaphore(value: 0)
                let go = DispatchSemaphore(value: 0)
                func meet() {
                    started.signal()
                    go.wait()
                }
                @Synthetic({ (r: Ring) in
                    r.meet()
                    return r.viaY + 1
                })
                var x: Int
                @Synthetic({ (r: Ring) in r.y }) var viaY: Int
                @Synthetic({ (r: Ring) in
                    r.meet()
                    return r.z + 1
                })
                var y: Int
                @Synthetic({ (r: Ring) in
                    r.meet()
                    return r.x + 1
                })
                var z: Int
            }
            let ring = UncheckedBox(Ring())
            _ = (ring.value.$x, ring.value.$viaY, ring.value.$y, ring.value.$z)
            let threads = [
                JoinableThread { _ = ring.value.x },
                JoinableThread { _ = ring.value.y },
                JoinableThread { _ = ring.value.z },
            ]
            for _ in 0..<3 { ring.value.started.wait() }
            for _ in 0..<3 { ring.value.go.signal() }
            for thread in threads { thread.join() }  // the cycle ends the process first
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            let loops = [
                "Ring.x → Ring.viaY → Ring.y → Ring.z → Ring.x.",
                "Ring.y → Ring.z → Ring.x → Ring.viaY → Ring.y.",
                "Ring.z → Ring.x → Ring.viaY → Ring.y → Ring.z.",
            ]
            #expect(loops.contains { text.contains("synthetic property cycle: " + $0) }, "\(text)")
        }
    }

    /// Two instances of one class, each computed on its own thread, reading each other.
    @Test("a cycle over threads between two same-named properties names both")
    func sameNamesAcrossThreads() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Peer: @unchecked Sendable {
                var other: Peer?
                let started: DispatchSemaphore
                let go: DispatchSemaphore
                init(_ started: DispatchSemaphore, _ go: DispatchSemaphore) {
                    self.started = started
                    self.go = go
                }
                @Synthetic({ (p: Peer) in
                    p.started.signal()
                    p.go.wait()
                    return p.other!.value + 1
                })
                var value: Int
            }
            let started = DispatchSemaphore(value: 0)
            let go = DispatchSemaphore(value: 0)
            let a = Peer(started, go)
            let b = Peer(started, go)
            a.other = b
            b.other = a
            _ = (a.$value, b.$value)
            let box = UncheckedBox((a, b))
            let threads = [
                JoinableThread { _ = box.value.0.value },
                JoinableThread { _ = box.value.1.value },
            ]
            for _ in 0..<2 { started.wait() }
            for _ in 0..<2 { go.signal() }
            for thread in threads { thread.join() }
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                text.contains("synthetic property cycle: Peer.value → Peer.value → Peer.value."),
                "\(text)")
        }
    }

    @Test("a cycle spread over two threads is a runtime error, not a hang")
    func cycleAcrossThreads() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Pair: @unchecked Sendable {
                let xStarted = DispatchSemaphore(value: 0)
                let yStarted = DispatchSemaphore(value: 0)
                @Synthetic({ (p: Pair) in
                    p.xStarted.signal()
                    p.yStarted.wait()
                    return p.y + 1
                })
                var x: Int
                @Synthetic({ (p: Pair) in
                    p.yStarted.signal()
                    p.xStarted.wait()
                    return p.x + 1
                })
                var y: Int
            }
            let pair = UncheckedBox(Pair())
            _ = pair.value.$x
            _ = pair.value.$y
            DispatchQueue.global().async { _ = pair.value.y }
            _ = pair.value.x
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            // Either thread may find it first.
            #expect(
                text.contains("synthetic property cycle: Pair.x → Pair.y → Pair.x.")
                    || text.contains("synthetic property cycle: Pair.y → Pair.x → Pair.y."),
                "\(text)")
        }
    }

    /// A set that marks an observed synthetic property, behind another thread's delivery: the
    /// propagation it queues and its message are both behind, and the setting thread waits for
    /// its turn once, when everything else its set does is done. (It registered twice, once for
    /// each, and waited on the second while the role was handed to the first, which nobody
    /// waited on: nothing was delivered until both waits had run out.)
    @Test func aSetThatMarksAnObservedSyntheticPropertyWaitsForItsTurnOnce() {
        let tens = Tens()
        let observer = TestObserver()
        let ready = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let core = tens.$a.core
        observer.observe(tens.$tenfold) { _ in }
        observer.observe(tens.$a) { update in
            if update.new == 1 { for i in 2..<40 { tens.a = i } }  // queued: the turn is behind
            if update.new == 39 { tens.a = 40 }
            if update.new == 40 {
                ready.signal()
                gate.wait()
            }
        }
        let box = UncheckedBox(tens)
        let mostWaiting = Atomic<Int>(0)
        let finished = finishes(within: 60) {
            let deliverer = JoinableThread { box.value.a = 1 }
            ready.wait()
            let setter = JoinableThread { box.value.a = 100 }
            // The setter waits now (the delivering thread is held), until its wait runs out.
            while true {
                let (waiting, withdrawn) = core.lock.withLock {
                    (core.state.turn.takers.count, core.state.turn.withdrawals)
                }
                mostWaiting.max(waiting, ordering: .relaxed)
                if withdrawn > 0 { break }
            }
            gate.signal()
            deliverer.join()
            setter.join()
        }
        #expect(finished)
        #expect(mostWaiting.load(ordering: .relaxed) <= 1, "the setter waited twice at once")
        #expect(tens.tenfold == 1_000)
    }

    /// A thread computing `s` sets `v1`, whose handler sets `v2`, which another thread delivers
    /// and is behind; that thread's handler then reads `s`, and so waits for the computation.
    /// The computing thread must not wait for `v2`'s turn (it would wait for a thread that waits
    /// for it): it forgets the turn it owes, since it is computing.
    @Test func aComputationWhoseSetIsRelayedBehindAnotherThreadDoesNotWaitForThatThread() {
        let withdrawn = Atomic<Int>(-1)
        let finished = finishes(within: 10) {
            let model = SettingWhileComputing()
            let v2 = Var(0)
            let observer = TestObserver()
            let dReady = DispatchSemaphore(value: 0)
            let gate = DispatchSemaphore(value: 0)
            let inCompute = DispatchSemaphore(value: 0)
            observer.observe(model.v1) { _ in
                v2.value = 1_000  // queued behind d, which is behind: owed
                inCompute.signal()
            }
            observer.observe(v2) { update in
                guard update.new == 1 else { return }
                for i in 2..<42 { v2.value = i }  // re-entrant: 40 queued, the turn is behind
                dReady.signal()
                gate.wait()
                _ = model.s  // waits for e, which computes s
            }
            let d = JoinableThread { v2.value = 1 }
            dReady.wait()
            model.armed.store(true, ordering: .sequentiallyConsistent)
            let e = JoinableThread { _ = model.s }
            inCompute.wait()
            gate.signal()
            d.join()
            e.join()
            withdrawn.store(
                v2.core.lock.withLock { v2.core.state.turn.withdrawals }, ordering: .relaxed)
        }
        #expect(finished)
        // Had the computing thread waited, it would have withdrawn: the thread it waited for
        // took no step, waiting for it.
        #expect(withdrawn.load(ordering: .relaxed) == 0)
    }
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

/// `p` declares a path through `slow`, which can be held at a gate while computed.
final class BoundSlowly: @unchecked Sendable {
    @ObservableVar var base = 1
    @ObservableVar var source = 0
    let gate = HoldingGate()
    @Synthetic(dependsOn: [.path(\BoundSlowly.$slow)], { (m: BoundSlowly) in m.base }) var p: Int
    @Synthetic({ (m: BoundSlowly) in
        m.gate.pass()
        return m.source
    })
    var slow: Int
}

/// `p` declares paths through `q`, which reads `p` (held at a gate), and through `tick`; its
/// value is read outside Herald.
final class ReenteredThenTicked: @unchecked Sendable {
    let raw = Atomic<Int>(0)
    @ObservableVar var tick = 0
    let gate = HoldingGate()
    @Synthetic(
        dependsOn: [.path(\ReenteredThenTicked.$q), .path(\ReenteredThenTicked.$tick)],
        { (m: ReenteredThenTicked) in m.raw.load(ordering: .sequentiallyConsistent) })
    var p: Int
    @Synthetic({ (m: ReenteredThenTicked) in
        let value = m.p
        m.gate.pass()
        return value + 1
    })
    var q: Int
}

/// `p` (held at a gate while computed) declares a path through `slow` (held at another while
/// its path is observed); its value is read outside Herald.
final class SlowRaw: @unchecked Sendable {
    let raw = Atomic<Int>(0)
    @ObservableVar var source = 0
    let wiring = HoldingGate()
    let pGate = HoldingGate()
    @Synthetic(
        dependsOn: [.path(\SlowRaw.$slow)],
        { (m: SlowRaw) in
            m.pGate.pass()
            return m.raw.load(ordering: .sequentiallyConsistent)
        })
    var p: Int
    @Synthetic({ (m: SlowRaw) in
        m.wiring.pass()
        return m.source
    })
    var slow: Int
}
