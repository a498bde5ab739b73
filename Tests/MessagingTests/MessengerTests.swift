import HeraldTestSupport
import Messaging
import Testing

@Suite("Messenger delivery")
struct MessengerTests {
    @Test func startingAnObservationSendsNothing() {
        let messenger = Messenger<Int>()
        let variable = Var(1)
        let observer = RecordingObserver<Int>()
        let variableObserver = RecordingObserver<Update<Int>>()
        observer.record(messenger)
        variableObserver.record(variable)
        #expect(observer.messages.elements.isEmpty)
        #expect(variableObserver.messages.elements.isEmpty)
    }

    @Test func messagesAreDeliveredInSendOrder() {
        let messenger = Messenger<Int>()
        let observer = RecordingObserver<Int>()
        observer.record(messenger)
        for number in 0..<100 { messenger.send(number) }
        #expect(observer.messages.elements == Array(0..<100))
    }

    @Test func reentrantSendsAreDeliveredAfterTheCurrentMessageReachesEveryReceiver() {
        let messenger = Messenger<String>()
        let log = Recording<String>()
        let first = TestObserver()
        let second = TestObserver()
        first.observe(messenger) { message in
            log.append("first got \(message)")
            if message == "a" { messenger.send("b") }
            if message == "b" { messenger.send("c") }
        }
        second.observe(messenger) { message in log.append("second got \(message)") }

        messenger.send("a")

        #expect(
            log.elements == [
                "first got a", "second got a",
                "first got b", "second got b",
                "first got c", "second got c",
            ])
    }

    @Test func receiversAreCalledInRegistrationOrder() {
        let messenger = Messenger<Int>()
        let log = Recording<Int>()
        let observers = (0..<40).map { _ in TestObserver() }
        for (index, observer) in observers.enumerated() {
            observer.observe(messenger) { _ in log.append(index) }
        }
        messenger.send(0)
        #expect(log.elements == Array(0..<40))
    }

    @Test func registrationOrderSurvivesRemovalsAndCompaction() {
        let messenger = Messenger<Int>()
        let log = Recording<Int>()
        let observers = (0..<40).map { _ in TestObserver() }
        for (index, observer) in observers.enumerated() {
            observer.observe(messenger) { _ in log.append(index) }
        }
        // Remove three quarters, which compacts the receiver list, then add more.
        for (index, observer) in observers.enumerated() where index % 4 != 0 {
            observer.stopObserving(messenger)
        }
        let late = TestObserver()
        late.observe(messenger) { _ in log.append(100) }
        messenger.send(0)
        #expect(log.elements == [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 100])
    }

    /// A messenger holds its one observation inline and several in a list: going from one
    /// observer to several and back, also during a delivery, keeps registration order and the
    /// promises about starts and stops during a delivery (7 and 10).
    @Test func goingFromOneObserverToSeveralAndBackKeepsOrderAndTiming() {
        let messenger = Messenger<Int>()
        let log = Recording<String>()
        let first = TestObserver()
        let second = TestObserver()
        let third = TestObserver()
        first.observe(messenger) { number in
            log.append("first \(number)")
            guard number == 2 else { return }
            // During a delivery to the only observation: a second starts, the first stops.
            second.observe(messenger) { log.append("second \($0)") }
            first.stopObserving(messenger)
        }
        messenger.send(1)
        messenger.send(2)
        messenger.send(3)
        third.observe(messenger) { log.append("third \($0)") }
        first.observe(messenger) { log.append("first again \($0)") }
        messenger.send(4)
        second.stopObserving(messenger)
        third.stopObserving(messenger)
        messenger.send(5)
        first.stopObserving(messenger)
        messenger.send(6)
        second.observe(messenger) { log.append("second again \($0)") }
        messenger.send(7)

        #expect(
            log.elements == [
                "first 1", "first 2", "second 3",
                "second 4", "third 4", "first again 4",
                "first again 5",
                "second again 7",
            ])
        #expect(messenger.observationCount == 1)
    }

    @Test func aMessageWithoutAuthorHasTheSendingObjectAsAuthor() {
        let messenger = Messenger<Int>()
        let observer = RecordingObserver<Int>()
        observer.record(messenger)
        messenger.send(1)
        #expect(observer.authors.elements.first === messenger)
    }

    @Test func aCustomObservableObjectIsTheAuthorOfItsMessages() {
        final class Sky: ObservableObject {
            let messenger = Messenger<String>()
        }
        let sky = Sky()
        let observer = RecordingObserver<String>()
        observer.record(sky)
        sky.send("blue")
        #expect(observer.messages.elements == ["blue"])
        #expect(observer.authors.elements.first === sky)
    }

    @Test func anExplicitAuthorIsDelivered() {
        let messenger = Messenger<Int>()
        let author = Author("Ann")
        let observer = RecordingObserver<Int>()
        observer.record(messenger)
        messenger.send(7, from: author)
        #expect(observer.authors.elements.first === author)
    }

    @Test func anObservationStoppedDuringADeliveryReceivesNothingAfterTheStop() {
        let messenger = Messenger<Int>()
        let stopper = TestObserver()
        let victim = RecordingObserver<Int>()
        stopper.observe(messenger) { _ in victim.stopObserving(messenger) }
        victim.record(messenger)

        messenger.send(1)
        messenger.send(2)

        #expect(victim.messages.elements.isEmpty)
    }

    @Test func anObservationStoppedByItsOwnHandlerReceivesNoQueuedMessages() {
        let messenger = Messenger<Int>()
        let log = Recording<Int>()
        let observer = TestObserver()
        observer.observe(messenger) { number in
            log.append(number)
            messenger.send(number + 1)  // queued behind this delivery
            observer.stopObserving(messenger)
        }
        messenger.send(1)
        #expect(log.elements == [1])
    }

    @Test func anObserverThatDiesDuringADeliveryCausesNoCrash() {
        let messenger = Messenger<Int>()
        var doomed: TestObserver? = TestObserver()
        let killer = TestObserver()
        let log = Recording<String>()
        let doomedBox = WeakBox(doomed!)
        killer.observe(messenger) { _ in
            doomed = nil
            log.append("killed")
        }
        doomed?.observe(messenger) { _ in log.append("doomed received") }
        let survivor = RecordingObserver<Int>()
        survivor.record(messenger)

        messenger.send(1)
        messenger.send(2)

        #expect(doomedBox.isFreed)
        #expect(!log.elements.contains("doomed received"))
        #expect(survivor.messages.elements == [1, 2])
    }

    @Test func anObserverThatDiesInsideItsOwnHandlerCausesNoCrash() {
        let messenger = Messenger<Int>()
        var doomed: TestObserver? = TestObserver()
        let log = Recording<Int>()
        doomed?.observe(messenger) { number in
            log.append(number)
            doomed = nil
        }
        messenger.send(1)
        messenger.send(2)
        #expect(log.elements == [1])
        #expect(messenger.observationCount == 0)
    }

    @Test func anObservationStartedDuringADeliveryReceivesOnlyLaterMessages() {
        let messenger = Messenger<Int>()
        let latecomer = RecordingObserver<Int>()
        let starter = TestObserver()
        starter.observe(messenger) { number in
            guard number == 1 else { return }
            messenger.send(2)  // accepted before the latecomer starts: not for it
            latecomer.record(messenger)
            messenger.send(3)  // accepted after: for it
        }
        messenger.send(1)
        messenger.send(4)
        #expect(latecomer.messages.elements == [3, 4])
    }

    @Test func aMessengerSubclassSendsAsItself() {
        final class Model: Messenger<String> {
            func save() { send("saved") }
        }
        let model = Model()
        let observer = RecordingObserver<String>()
        observer.record(model)
        model.save()
        #expect(observer.messages.elements == ["saved"])
        #expect(observer.authors.elements.first === model)
        #expect(model.messenger === model)
    }
}
