import Foundation
import HeraldTestSupport
import Messaging
import Synchronization
import Testing

/// Stress tests written in review of the delivery protocol (the role word, the unretained
/// connection borrow, the unowned receiver). Each hammers one narrow window; the loops are bounded
/// by time only so that the suite stays short, and `finishes(within:)` turns a deadlock into a
/// failure instead of a hang. CI runs them under the thread sanitizer too.
@Suite("Concurrency stress")
struct ConcurrencyStressTests {
    /// `ConnectionList.removeAll` loads the unowned(unsafe) receiver into a strong `let`, i.e.
    /// retains it under the core's lock and releases it under the core's lock. If the observer
    /// dies on another thread inside that window, the receiver's deinit runs under the core's
    /// lock, detaches its remaining connections and takes the (non-reentrant) lock again.
    @Test func stopBeingObservedRacingWithAnObserversDeathDoesNotDeadlock() {
        let finished = finishes(within: 8) {
            let deadline = Date().addingTimeInterval(3)
            var trials = 0
            while Date() < deadline {
                trials += 1
                let messenger = SharedMessenger<Int>()
                let observer = TestObserver()
                for _ in 0..<64 { observer.observe(messenger) { _ in } }
                let box = Box(observer)
                let barrier = SpinBarrier()
                _ = consume observer
                let spins = (trials % 64) * 8
                concurrently(threads: 2) { thread in
                    barrier.wait(parties: 2)
                    if thread == 0 {
                        messenger.stopBeingObserved()
                    } else {
                        // spin a little so the drop lands inside removeAll's loop
                        for _ in 0..<spins { _ = box }
                        _ = box.take()
                    }
                }
            }
        }
        #expect(finished, "deadlocked: receiver deinit ran under the core lock")
    }

    final class Detector: @unchecked Sendable {
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        func enter() {
            if inside.add(1, ordering: .acquiringAndReleasing).newValue != 1 {
                overlaps.add(1, ordering: .relaxed)
            }
        }
        func leave() { inside.subtract(1, ordering: .acquiringAndReleasing) }
    }
    struct M: Sendable {
        let thread: Int
        let index: Int
        let reentrant: Bool
    }

    /// Senders, re-entrant sends, observation churn (driving the 0<->1 hook) and self-stopping
    /// observations all at once: nothing lost, per-thread order kept, hook and handlers never
    /// overlap, hook transitions alternate.
    @Test func mixedLoadLosesNothingKeepsOrderAndNeverOverlapsTheStateHandler() {
        let messenger = SharedMessenger<M>()
        let detector = Detector()
        let states = Recording<Bool>()
        messenger.whenObservationStateChanges { s in
            detector.enter()
            states.append(s)
            detector.leave()
        }
        let received = Recording<M>()
        let finished = finishes(within: 9) {
            concurrently(threads: 4) { thread in
                switch thread {
                case 0, 1:
                    for index in 0..<10_000 {
                        messenger.send(M(thread: thread, index: index, reentrant: false))
                    }
                case 2:
                    for _ in 0..<5_000 {
                        let o = TestObserver()
                        o.observe(messenger) { m in
                            detector.enter()
                            received.append(m)
                            if !m.reentrant && m.index % 50 == 0 {
                                messenger.send(M(thread: m.thread, index: m.index, reentrant: true))
                            }
                            detector.leave()
                        }
                        o.stopObserving()
                    }
                default:
                    for _ in 0..<5_000 {
                        let obs = Observing(messenger) { [detector] _ in
                            detector.enter()
                            detector.leave()
                        }
                        if Bool.random() { obs.stop() }
                    }
                }
            }
        }
        #expect(finished)
        #expect(detector.overlaps.load(ordering: .relaxed) == 0)
        let t = states.elements
        #expect(t.first == true)
        #expect(t.last == false)
        #expect(zip(t, t.dropFirst()).allSatisfy { $0 != $1 }, "hook transitions out of order")
        for thread in 0..<2 {
            let order = received.elements.filter { $0.thread == thread && !$0.reentrant }.map(
                \.index)
            #expect(order == order.sorted(), "thread \(thread) out of order")
        }
    }

    /// A handler that drops the last reference to its own observer (and to other observers later
    /// in the list) while other threads send: no use-after-free through the borrowed connection
    /// or the unowned receiver.
    @Test func observersDyingInsideDeliveriesWhileOthersSendAreSafe() {
        let finished = finishes(within: 9) {
            for _ in 0..<100 {
                let messenger = SharedMessenger<Int>()
                let boxes = (0..<16).map { _ in Box(TestObserver()) }
                for (i, box) in boxes.enumerated() {
                    let o = box.take()!
                    let again = Box(o)
                    o.observe(messenger) { [again, boxes] n in
                        _ = again.take()  // drop myself
                        _ = boxes[(i + 16 + n) % boxes.count]  // keep array alive
                    }
                    o.observe(messenger) { _ in messenger.send(-1) }
                    boxes[i].put(o)
                    _ = again
                }
                concurrently(threads: 3) { t in
                    if t == 2 {
                        for b in boxes { _ = b.take() }
                    } else {
                        for n in 0..<20 { messenger.send(n) }
                    }
                }
            }
        }
        #expect(finished)
    }

    /// A receiver dying on one thread while another messenger's `stopBeingObserved()` is inside
    /// `Receiver.forget` for it: once `forget` has taken the connection out of the receiver's
    /// list, the dying receiver no longer waits for that messenger's lock, so it may be freed
    /// while `removeAll` still reads `observationEnded` / releases its strong copy.
    @Test func aReceiverDyingWhileAMessengerForgetsItIsSafe() {
        let deadline = Date().addingTimeInterval(3)
        let finished = finishes(within: 9) {
            while Date() < deadline {
                let shared = SharedMessenger<Int>()
                let own = (0..<32).map { _ in SharedMessenger<Int>() }
                let boxes = (0..<32).map { i -> Box<TestObserver> in
                    let o = TestObserver()
                    o.observe(own[i]) { _ in }
                    o.observe(shared) { _ in }
                    return Box(o)
                }
                let barrier = SpinBarrier()
                concurrently(threads: 4) { t in
                    barrier.wait(parties: 4)
                    switch t {
                    case 0: shared.stopBeingObserved()
                    case 1: for b in boxes.reversed() { _ = b.take() }
                    case 2: for b in boxes { _ = b.take() }
                    default:
                        var x = 0
                        for i in 0..<20_000 { x &+= i }
                        _ = x  // compete for the cores
                    }
                }
                _ = own
            }
        }
        #expect(finished)
    }
}
