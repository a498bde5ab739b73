import HeraldTestSupport
import Testing
import Transforms

@Suite("coalesce, receive(on:), schedulers")
struct SchedulingTests {
    @Test func coalesceDeliversOncePerTurnTheLatestMessageInBothForms() {
        let scheduler = TestMessageScheduler()
        let number = Var(0)
        let coalesced = number.new().coalesce(on: scheduler)
        let standAlone = RecordingObserver<Int>()
        standAlone.record(coalesced)
        let adHoc = Recording<Int>()
        let observer = TestObserver()
        observer.observe(number).new().coalesce(on: scheduler).receive { adHoc.append($0) }

        for value in 1...100 { number.value = value }
        #expect(standAlone.messages.elements.isEmpty)
        #expect(scheduler.pendingCount == 2)  // one per observation, however many changes

        scheduler.runTurn()

        #expect(standAlone.messages.elements == [100])
        #expect(adHoc.elements == [100])
    }

    @Test func coalesceNeverLosesTheLastMessage() {
        let scheduler = TestMessageScheduler()
        let number = Var(0)
        let observer = TestObserver()
        let seen = Recording<Int>()
        observer.observe(number).new().coalesce(on: scheduler).receive { value in
            seen.append(value)
            if value == 1 { number.value = 2 }  // a change after this turn's delivery began
        }

        number.value = 1
        scheduler.runTurn()
        #expect(seen.elements == [1])
        #expect(scheduler.pendingCount == 1)  // scheduled for the next turn, not dropped
        scheduler.runTurn()
        #expect(seen.elements == [1, 2])
    }

    @Test func coalescePassesTheAuthorOfTheLatestMessage() {
        let scheduler = TestMessageScheduler()
        let number = Var(0)
        let editor = Author("editor")
        let observer = TestObserver()
        let authors = Recording<AnyAuthor>()
        observer.observe(number).coalesce(on: scheduler).receive { _, author in
            authors.append(author)
        }
        number.value = 1
        number.set(2, as: editor)
        scheduler.flush()
        #expect(authors.count == 1)
        #expect(authors.elements.first === editor)
    }

    @Test func nothingIsDeliveredAfterTheObservationEnded() {
        let scheduler = TestMessageScheduler()
        let number = Var(0)
        var observer: TestObserver? = TestObserver()
        let seen = Recording<Int>()
        observer?.observe(number).new().coalesce(on: scheduler).receive { seen.append($0) }
        observer?.observe(number).new().receive(on: scheduler).receive { seen.append($0) }
        number.value = 1
        observer = nil
        scheduler.flush()
        #expect(seen.elements.isEmpty)
    }

    /// On the immediate scheduler, a message sent by the handler itself is delivered after the
    /// handler returns (the next "turn" starts as soon as this one ends), never inside it.
    @Test func coalesceOnTheImmediateSchedulerDeliversAReentrantMessageAfterTheHandlerReturns() {
        let number = Var(0)
        let observer = TestObserver()
        let log = Recording<String>()
        observer.observe(number).new().coalesce(on: .immediate).receive { value in
            log.append("begin \(value)")
            if value == 1 { number.value = 2 }
            log.append("end \(value)")
        }
        number.value = 1
        #expect(log.elements == ["begin 1", "end 1", "begin 2", "end 2"])
    }

    final class Captured {}

    /// The coalescing machinery of an observation (its coalescer, the latest message, the
    /// handler and what it captured) is freed when the observation ends, in both forms.
    @Test func coalesceFreesItsHandlerWhenTheObservationEnds() {
        let scheduler = TestMessageScheduler()
        let number = Var(0)
        weak var capturedByAdHoc: Captured?
        weak var capturedByStandAlone: Captured?
        weak var standAloneTransform: Rescheduled<Var<Int>>?
        var observer: TestObserver? = TestObserver()
        do {
            let forAdHoc = Captured()
            let forStandAlone = Captured()
            capturedByAdHoc = forAdHoc
            capturedByStandAlone = forStandAlone
            observer?.observe(number).coalesce(on: scheduler).receive { _ in _ = forAdHoc }
            let transform = number.coalesce(on: scheduler)
            standAloneTransform = transform
            observer?.observe(transform) { _ in _ = forStandAlone }
            number.value = 1  // scheduled, not delivered
        }
        #expect(capturedByAdHoc != nil)
        observer = nil
        scheduler.flush()
        #expect(capturedByAdHoc == nil)
        #expect(capturedByStandAlone == nil)
        #expect(standAloneTransform == nil)
    }

    @Test func receiveOnDeliversEveryMessageThroughTheSchedulerInOrderInBothForms() {
        let scheduler = TestMessageScheduler()
        let messenger = Messenger<Int>()
        let hopped = messenger.receive(on: scheduler)
        let standAlone = RecordingObserver<Int>()
        standAlone.record(hopped)
        let adHoc = Recording<Int>()
        let observer = TestObserver()
        observer.observe(messenger).receive(on: scheduler).receive { adHoc.append($0) }

        for number in 1...3 { messenger.send(number) }
        #expect(adHoc.elements.isEmpty)
        scheduler.runTurn()

        #expect(standAlone.messages.elements == [1, 2, 3])
        #expect(adHoc.elements == [1, 2, 3])
    }

    @Test func theImmediateSchedulerRunsAtOnce() {
        let messenger = Messenger<Int>()
        let observer = TestObserver()
        let seen = Recording<Int>()
        observer.observe(messenger).coalesce(on: .immediate).receive { seen.append($0) }
        messenger.send(1)
        messenger.send(2)
        #expect(seen.elements == [1, 2])
    }

    @Test func flushRunsTurnsUntilNothingIsLeft() {
        let scheduler = TestMessageScheduler()
        let seen = Recording<Int>()
        scheduler.schedule {
            seen.append(1)
            scheduler.schedule { seen.append(2) }
        }
        #expect(scheduler.flush() == 2)
        #expect(seen.elements == [1, 2])
        #expect(scheduler.pendingCount == 0)
    }
}
