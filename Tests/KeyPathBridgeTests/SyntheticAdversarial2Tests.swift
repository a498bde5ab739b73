import Dispatch
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge
@testable import Messaging

final class Adv2Pair: @unchecked Sendable {
    @ObservableVar var x = 1
    @ObservableVar var y = 1
    @Synthetic({ (m: Adv2Pair) in m.x * 10 }) var tenfold: Int
    @Synthetic({ (m: Adv2Pair) in m.y * 100 }) var hundredfold: Int
}

final class Adv2Twins: @unchecked Sendable {
    @ObservableVar var v = 0
    @Synthetic({ (m: Adv2Twins) in m.v * 10 }) var first: Int
    @Synthetic({ (m: Adv2Twins) in m.v * 10 }) var second: Int
}

@Suite("Synthetic properties: adversarial round 2", .serialized)
struct SyntheticAdversarial2Tests {
    @Test("hybrid: a value set while unobserved does not author a later recomputation's update")
    func staleSetterAuthorsLaterRecomputation() {
        let model = Adv2Pair()
        let editor = Author("editor")
        #expect(model.tenfold == 10)  // computed: depends on x
        model.$tenfold.set(5, as: editor)  // unobserved: nobody is told, the setter stays
        let observer = TestObserver()
        let received = Recording<String>()
        observer.observe(model.$tenfold) { update, author in
            received.append(
                "\(update.old)->\(update.new) by \(author === editor ? "editor" : author === model.$tenfold ? "property" : "other")"
            )
        }
        model.x = 2  // recomputes: 20, authored by the property
        #expect(received.elements == ["5->20 by property"])
    }

    @Test("hybrid: a set overtaken by a recomputation before the tell does not author it")
    func setOvertakenByRecomputationKeepsSetterAuthor() {
        let model = Adv2Pair()
        let editor = Author("editor")
        let observer = TestObserver()
        let received = Recording<String>()
        observer.observe(model.$hundredfold) { _ in
            // In a propagation pass: the set queues tenfold; then its source changes.
            model.$tenfold.set(999, as: editor)
            model.x = 7
        }
        observer.observe(model.$tenfold) { update, author in
            received.append(
                "\(update.old)->\(update.new) by \(author === editor ? "editor" : author === model.$tenfold ? "property" : "other")"
            )
        }
        model.y = 2
        #expect(model.tenfold == 70)
        #expect(received.elements == ["10->70 by property"])
    }

    @Test(
        "glitch-free: an observer of the variable on the delivering thread reads a computed value of the change it hears of, even if the sender has not marked yet"
    )
    func queuedChangeDeliveredBeforeItsSenderMarked() {
        let model = Adv2Twins()
        #expect(model.first == 0)  // first subscribes to v before second
        #expect(model.second == 0)
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let heard = DispatchSemaphore(value: 0)
        let seen = Recording<String>()
        let observer = TestObserver()
        observer.observe(model.$v) { update in
            if update.new == 1 {
                _ = model.second  // valid: 10
                entered.signal()
                gate.wait()
            } else if update.new == 2 {
                seen.append("v=2 second=\(model.second)")
                heard.signal()
            }
        }
        let box = UncheckedBox(model)
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            box.value.v = 1  // this thread delivers, and is held in the observer
            finished.signal()
        }
        entered.wait()
        // Holding `first`'s lock stands for the sender being preempted while it marks (it marks
        // `first`, then `second`). If the message became deliverable before the marking (the
        // bug), the delivering thread is let go at once and reads `second` before it is marked;
        // if marking comes first (under the lock that accepts the message), the message cannot
        // become deliverable while `first`'s lock is held, and the gate opens after 2 s.
        model.$first.core.lock.withLock {
            DispatchQueue.global().async {
                box.value.v = 2
                finished.signal()
            }
            let deadline = DispatchTime.now() + 2
            while model.$v.core.role.load(ordering: .acquiring) & 2 == 0,
                DispatchTime.now() < deadline
            {}
            gate.signal()
            _ = heard.wait(timeout: .now() + 2)
        }
        heard.wait()
        finished.wait()
        finished.wait()
        #expect(seen.elements == ["v=2 second=20"])
    }

    @Test("threads: the observers of an observed property always end told of its final value")
    func finalValueToldUnderConcurrentSends() {
        for _ in 0..<50 {
            let model = Adv2Pair()
            let observer = TestObserver()
            let last = Recording<Int>()
            observer.observe(model.$tenfold) { update in last.append(update.new) }
            let box = UncheckedBox(model)
            concurrently(threads: 4) { index in
                for step in 0..<200 { box.value.x = index * 1000 + step }
            }
            #expect(last.elements.last == model.tenfold)
        }
    }
}
