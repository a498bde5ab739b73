import Dispatch
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge

/// A sign whose label can be held at a gate after reading `positive`.
final class Sign: @unchecked Sendable {
    @ObservableVar var x = -1
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let holding = Atomic<Bool>(false)
    @Synthetic({ (s: Sign) in s.x >= 0 }) var positive: Bool
    @Synthetic({ (s: Sign) in
        let positive = s.positive
        if s.holding.load(ordering: .sequentiallyConsistent) {
            s.entered.signal()
            s.gate.wait()
        }
        return positive ? "positive" : "negative"
    })
    var label: String
}

final class Tenfold {
    @ObservableVar var x = 1
    @Synthetic({ (t: Tenfold) in t.x * 10 }) var tenfold: Int
}

/// An owner whose mirror hides its properties.
final class Hidden: CustomReflectable {
    @ObservableVar var x = 1
    @Synthetic({ (h: Hidden) in h.x + 1 }) var plusOne: Int
    @Synthetic({ (h: Hidden) in h.x + 2 }) var plusTwo: Int
    var customMirror: Mirror { Mirror(self, children: [:]) }
}

@Suite("Synthetic properties: review findings", .serialized)
struct SyntheticReviewTests {
    @Test("an evaluation dropped because of a change meanwhile leaves no stale value behind")
    func droppedEvaluationLeavesNoStaleValue() {
        let sign = Sign()
        #expect(sign.label == "negative")
        sign.x = 1
        sign.holding.store(true, ordering: .sequentiallyConsistent)
        let done = DispatchSemaphore(value: 0)
        let box = UncheckedBox(sign)
        DispatchQueue.global().async {
            _ = box.value.label
            done.signal()
        }
        sign.entered.wait()  // label read the new `positive` and is held
        sign.holding.store(false, ordering: .sequentiallyConsistent)
        // Makes label possibly stale while it computes: its result is not stored. `positive`
        // will compute the same value again, so its version will not move.
        sign.$positive.invalidate()
        sign.gate.signal()
        done.wait()
        #expect(sign.label == "positive")
    }

    @Test("the variable's own observers run before the observers of what is computed from it")
    func sourceObserversFirst() {
        let model = Tenfold()
        let observer = TestObserver()
        let order = Recording<String>()
        observer.observe(model.$x) { _ in order.append("x") }
        observer.observe(model.$tenfold) { _ in order.append("tenfold") }
        model.x = 2
        #expect(order.elements == ["x", "tenfold"])
    }

    @Test("invalidating by name says whether the object had a synthetic property of that name")
    func invalidateByNameReports() {
        let contact = Contact()
        #expect(contact.invalidateSyntheticProperty(named: "fullName"))
        #expect(!contact.invalidateSyntheticProperty(named: "first"))
        #expect(!contact.invalidateSyntheticProperty(named: "nothing"))
    }

    @Test("a property that the owner's mirror hides, read first through its getter, has a name")
    func hiddenPropertiesNamedApart() {
        let hidden = Hidden()
        #expect(hidden.plusOne == 2)
        #expect(hidden.plusTwo == 3)
        let names = [hidden.$plusOne.debugName, hidden.$plusTwo.debugName]
        #expect(names.allSatisfy { $0?.hasPrefix("<unnamed Int ") == true })
        #expect(names[0] != names[1])
    }

    @Test("order: a handler's change of the variable is heard before the value computed from it")
    func reentrantChangeHeardFirst() {
        let tens = Tens()
        let observer = TestObserver()
        let log = Recording<String>()
        observer.observe(tens.$a) { update in
            log.append("a \(update.new)")
            if update.new == 1 { tens.a = 2 }
        }
        observer.observe(tens.$tenfold) { update in log.append("tenfold \(update.new)") }
        tens.a = 1
        #expect(log.elements == ["a 1", "a 2", "tenfold 20"])
    }

    @Test("a synthetic property made at run time names itself in messages")
    func madeAtRunTimeHasAName() {
        let contact = Contact()
        let initials = Synthetic(owner: contact, name: "initials") { (c: Contact) in
            String(c.first.prefix(1)) + String(c.last.prefix(1))
        }
        #expect(initials.value == "AL")
        #expect(initials.debugName == "initials")
        contact.first = "Grace"
        #expect(initials.value == "GL")
    }
}
