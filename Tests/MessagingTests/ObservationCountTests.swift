import HeraldTestSupport
import Messaging
import Testing

@Suite("Observer bookkeeping")
struct ObservationCountTests {
    @Test func observationCountCountsRunningObservations() {
        let messenger = Messenger<Int>()
        let first = TestObserver()
        let second = TestObserver()
        #expect(messenger.observationCount == 0)
        #expect(!messenger.isObserved)
        first.observe(messenger) { _ in }
        second.observe(messenger) { _ in }
        #expect(messenger.observationCount == 2)
        #expect(messenger.isObserved)
        first.stopObserving()
        #expect(messenger.observationCount == 1)
    }

    @Test func theObservationStateHandlerIsCalledOnZeroToOneAndOneToZero() {
        let messenger = Messenger<Int>()
        let states = Recording<Bool>()
        messenger.whenObservationStateChanges { states.append($0) }
        let first = TestObserver()
        let second = TestObserver()

        first.observe(messenger) { _ in }  // 0 → 1
        second.observe(messenger) { _ in }  // 1 → 2: no call
        first.stopObserving()  // 2 → 1: no call
        second.stopObserving(messenger)  // 1 → 0

        #expect(states.elements == [true, false])
    }

    @Test func anObserverDyingIsAOneToZeroTransition() {
        let messenger = Messenger<Int>()
        let states = Recording<Bool>()
        messenger.whenObservationStateChanges { states.append($0) }
        var observer: TestObserver? = TestObserver()
        observer?.observe(messenger) { _ in }
        observer = nil
        #expect(states.elements == [true, false])
    }

    @Test func anObservingDyingIsAOneToZeroTransition() {
        let messenger = Messenger<Int>()
        let states = Recording<Bool>()
        messenger.whenObservationStateChanges { states.append($0) }
        var observing: Observing<Messenger<Int>>? = Observing(messenger) { _ in }
        #expect(observing?.isActive == true)
        observing = nil
        #expect(states.elements == [true, false])
    }

    @Test func replacingTheStateHandlerReleasesTheOldOneWithoutDeadlock() {
        let finished = finishes(within: 10) {
            let messenger = SharedMessenger<Int>()
            do {
                let helper = TestObserver()  // owned only by the first handler
                helper.observe(messenger) { _ in }
                messenger.whenObservationStateChanges { [helper] _ in _ = helper }
            }
            messenger.whenObservationStateChanges { _ in }
        }
        #expect(finished, "deadlocked")
    }

    @Test func aMessengerDyingWithAHandlerThatOwnsAnObserverDoesNotDeadlock() {
        let finished = finishes(within: 10) {
            var messenger: SharedMessenger<Int>? = SharedMessenger()
            do {
                let helper = TestObserver()
                helper.observe(messenger!) { _ in }
                messenger!.whenObservationStateChanges { [helper] _ in _ = helper }
            }
            messenger = nil
        }
        #expect(finished, "deadlocked")
    }

    @Test func theObservationStateHandlerRunsInOrderWithMessages() {
        let messenger = Messenger<Int>()
        let log = Recording<String>()
        messenger.whenObservationStateChanges { log.append("observed: \($0)") }
        let starter = TestObserver()
        let latecomer = TestObserver()
        starter.observe(messenger) { number in
            log.append("starter got \(number)")
            starter.stopObserving()
            latecomer.observe(messenger) { number in log.append("latecomer got \(number)") }
            messenger.send(2)
        }
        messenger.send(1)
        // The state changes happen during the delivery of 1, so they are told after it, in order;
        // the count went 1 → 0 → 1, which is two transitions.
        #expect(
            log.elements == [
                "observed: true", "starter got 1", "observed: false", "observed: true",
                "latecomer got 2",
            ])
    }

    @Test func theHandlerMayStartAnObservationWithoutDeadlock() {
        let messenger = Messenger<Int>()
        let helper = TestObserver()
        let states = Recording<Bool>()
        messenger.whenObservationStateChanges { isObserved in
            states.append(isObserved)
            if isObserved && !helper.isObserving(messenger) { helper.observe(messenger) { _ in } }
        }
        let observer = TestObserver()
        observer.observe(messenger) { _ in }
        #expect(messenger.observationCount == 2)
        #expect(states.elements == [true])
    }
}
