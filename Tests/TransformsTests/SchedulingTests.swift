import HeraldTestSupport
import Testing
import Transforms

@Suite("coalesce, receive(on:), schedulers")
struct SchedulingTests {
    @Test func coalesceDeliversOncePerTurnTheLatestMessageInBothForms() {
        let scheduler = TestScheduler()
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
        let scheduler = TestScheduler()
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
        let scheduler = TestScheduler()
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
        let scheduler = TestScheduler()
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

    @Test func receiveOnDeliversEveryMessageThroughTheSchedulerInOrderInBothForms() {
        let scheduler = TestScheduler()
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
        let scheduler = TestScheduler()
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
