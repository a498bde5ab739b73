import HeraldTestSupport
import Messaging
import Testing

@Suite("Lifetimes: no tokens needed")
struct LifetimeTests {
    @Test func anObserverThatDiesEndsItsObservationsAndIsFreed() {
        let messenger = Messenger<Int>()
        let variable = Var(0)
        var observer: TestObserver? = TestObserver()
        let box = WeakBox(observer!)
        observer?.observe(messenger) { _ in }
        observer?.observe(variable) { _ in }
        #expect(messenger.observationCount == 1)
        #expect(variable.observationCount == 1)

        observer = nil

        #expect(box.isFreed)
        #expect(messenger.observationCount == 0)
        #expect(variable.observationCount == 0)
    }

    @Test func anObserverThatDiesFreesWhatItsHandlersCaptured() {
        let messenger = Messenger<Int>()
        var observer: TestObserver? = TestObserver()
        var canary: Canary? = Canary()
        let box = WeakBox(canary!)
        observer?.observe(messenger) { [canary] _ in _ = canary }
        canary = nil
        #expect(!box.isFreed)

        observer = nil

        #expect(box.isFreed)
    }

    @Test func anObservableObjectThatDiesEndsItsObservationsAndIsFreed() {
        let observer = TestObserver()
        var messenger: Messenger<Int>? = Messenger()
        let box = WeakBox(messenger!)
        var canary: Canary? = Canary()
        let canaryBox = WeakBox(canary!)
        observer.observe(messenger!) { [canary] _ in _ = canary }
        canary = nil
        #expect(observer.isObserving(messenger!))

        messenger = nil

        #expect(box.isFreed)
        #expect(canaryBox.isFreed)
    }

    @Test func aVariableThatDiesIsFreedWhileItsObserverLives() {
        let observer = TestObserver()
        var variable: Var<String>? = Var("x")
        let box = WeakBox(variable!)
        observer.observe(variable!) { _ in }
        variable = nil
        #expect(box.isFreed)
    }

    @Test func observingDoesNotKeepTheObservedObjectAlive() {
        let observer = TestObserver()
        var variable: Var<Int>? = Var(1)
        let box = WeakBox(variable!)
        observer.observe(variable!) { _ in }
        let observing = Observing(variable!) { _ in }
        variable = nil
        #expect(box.isFreed)
        #expect(!observing.isActive)
    }

    @Test func stoppingObservationsThatDontExistIsHarmless() {
        let observer = TestObserver()
        let messenger = Messenger<Int>()
        let other = Messenger<Int>()
        observer.stopObserving(messenger)
        observer.stopObserving(Optional<Messenger<Int>>.none)
        observer.stopObserving()
        messenger.stopBeingObserved(by: observer)
        messenger.stopBeingObserved()

        observer.observe(other) { _ in }
        observer.stopObserving(messenger)
        observer.stopObserving(other)
        observer.stopObserving(other)
        let observing = Observing(messenger) { _ in }
        observing.stop()
        observing.stop()

        #expect(other.observationCount == 0)
        #expect(messenger.observationCount == 0)
    }

    @Test func aMessengerThatDiesDuringItsOwnDeliveryCausesNoCrash() {
        final class Owner { var messenger: Messenger<Int>? = Messenger() }
        let owner = Owner()
        let observer = TestObserver()
        let log = Recording<Int>()
        observer.observe(owner.messenger!) { number in
            log.append(number)
            owner.messenger = nil
        }
        owner.messenger?.send(1)
        #expect(log.elements == [1])
        #expect(owner.messenger == nil)
    }
}
