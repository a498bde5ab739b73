import HeraldTestSupport
import Messaging
import Testing

@Suite("Observing: an observation as an object")
struct ObservingTests {
    @Test func anObservingRunsWhileHeld() {
        let number = Var(0)
        let seen = Recording<Int>()
        let observing = Observing(number) { update in seen.append(update.new) }
        number.value = 1
        number.value = 2
        #expect(seen.elements == [1, 2])
        #expect(observing.isActive)
        #expect(number.observationCount == 1)
    }

    @Test func droppingAnObservingEndsIt() {
        let number = Var(0)
        let seen = Recording<Int>()
        var observing: Observing<Var<Int>>? = Observing(number) { update in seen.append(update.new)
        }
        number.value = 1
        #expect(observing?.isActive == true)
        observing = nil
        number.value = 2
        #expect(seen.elements == [1])
        #expect(number.observationCount == 0)
    }

    @Test func stopEndsAnObserving() {
        let messenger = Messenger<String>()
        let seen = Recording<String>()
        let observing = Observing(messenger) { message, _ in seen.append(message) }
        messenger.send("a")
        observing.stop()
        messenger.send("b")
        #expect(seen.elements == ["a"])
        #expect(!observing.isActive)
    }

    @Test func anObservingEndsWhenTheObservedObjectDies() {
        var messenger: Messenger<Int>? = Messenger()
        let observing = Observing(messenger!) { _ in }
        #expect(observing.isActive)
        messenger = nil
        #expect(!observing.isActive)
    }

    @Test func aStoppedObservingFreesItsHandler() {
        let number = Var(0)
        var canary: Canary? = Canary()
        let box = WeakBox(canary!)
        let observing = Observing(number) { [canary] _ in _ = canary }
        canary = nil
        #expect(!box.isFreed)
        observing.stop()
        #expect(box.isFreed)
    }

    @Test func anObservingWhoseObjectDiedFreesItsHandler() {
        var number: Var<Int>? = Var(0)
        var canary: Canary? = Canary()
        let box = WeakBox(canary!)
        let observing = Observing(number!) { [canary] _ in _ = canary }
        canary = nil
        number = nil
        #expect(!observing.isActive)
        #expect(box.isFreed)
    }

    @Test func anObservingReceivesAuthors() {
        let number = Var(0)
        let author = Author("a")
        let authors = Recording<AnyAuthor>()
        let observing = Observing(number) { _, author in authors.append(author) }
        number.set(1, as: author)
        #expect(authors.elements.first === author)
        #expect(observing.site.line > 0)
    }
}
