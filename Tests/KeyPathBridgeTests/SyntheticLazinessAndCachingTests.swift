import HeraldTestSupport
import Testing

@testable import KeyPathBridge
@testable import Messaging

/// A synthetic property computes nothing until it is read (or observed), and a valid one answers
/// from its cache.
@Suite("Synthetic properties: lazy, and cached while valid")
struct SyntheticLazinessAndCachingTests {
    @Test("lazy: the function runs 0 times until the value is read")
    func lazyUntilRead() {
        let contact = Contact()
        #expect(contact.$fullName.evaluationCount == 0)
        contact.first = "Grace"
        #expect(contact.$fullName.evaluationCount == 0)
        #expect(contact.fullName == "Grace Lovelace")
        #expect(contact.$fullName.evaluationCount == 1)
    }

    @Test("valid reads return the cached value without calling the function")
    func validReadsAreCached() {
        let contact = Contact()
        for _ in 0..<5 { #expect(contact.fullName == "Ada Lovelace") }
        #expect(contact.$fullName.evaluationCount == 1)
        #expect(contact.$fullName.isValid)
    }

    @Test("valid/invalid is tracked apart from the value: a valid nil is a value")
    func validNilIsAValue() {
        let contact = Contact()
        #expect(contact.shortName == nil)
        #expect(contact.shortName == nil)
        #expect(contact.$shortName.evaluationCount == 1)
        #expect(contact.$shortName.isValid)
    }

    @Test("when the last observer goes, the property is lazy again")
    func lazyAgainWhenTheLastObserverGoes() {
        let contact = Contact()
        let observer = TestObserver()
        observer.observe(contact.$fullName) { _ in }
        observer.stopObserving(contact.$fullName)
        contact.first = "Grace"
        #expect(!contact.$fullName.isValid)
        #expect(contact.$fullName.evaluationCount == 1)
    }

    @Test(
        "lazy while unobserved: a property whose last observer left during a propagation is not computed"
    )
    func lazyAfterLastObserverLeavesDuringPropagation() {
        let diamond = Diamond()
        let first = TestObserver()
        let second = TestObserver()
        first.observe(diamond.$left) { _ in second.stopObserving(diamond.$right) }
        second.observe(diamond.$right) { _ in }
        #expect(diamond.$right.evaluationCount == 1)
        diamond.source = 2  // left's observer ends right's only observation before right's turn
        #expect(diamond.$right.observationCount == 0)
        // Nobody reads or observes `right` any more: it must stay invalid, not computed.
        #expect(diamond.$right.evaluationCount == 1)
        #expect(!diamond.$right.isValid)
    }

    /// The binding thread re-enters the property while observing its paths (q, on the path,
    /// reads p); that value was once invalidated after the paths were observed, and the function
    /// ran twice for one read.
    @Test("a property read while its own thread binds it is computed once")
    func aPropertyReadWhileItsOwnThreadBindsItIsComputedOnce() {
        let model = BoundThroughReader()
        #expect(model.p == 1)
        #expect(model.$p.evaluationCount == 1)
        #expect(model.$q.evaluationCount == 1)
    }
}
