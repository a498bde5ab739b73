import HeraldTestSupport
import Messaging
import Testing

@Suite("Observer API")
struct ObserverTests {
    @Test func isObservingTellsWhetherAnObservationRuns() {
        let observer = TestObserver()
        let messenger = Messenger<Int>()
        #expect(!observer.isObserving(messenger))
        observer.observe(messenger) { _ in }
        #expect(observer.isObserving(messenger))
        observer.stopObserving(messenger)
        #expect(!observer.isObserving(messenger))
    }

    @Test func observingTheSameObjectTwiceStartsTwoObservations() {
        let observer = TestObserver()
        let messenger = Messenger<Int>()
        let log = Recording<String>()
        observer.observe(messenger) { _ in log.append("one") }
        observer.observe(messenger) { _ in log.append("two") }
        messenger.send(0)
        #expect(log.elements == ["one", "two"])
        #expect(messenger.observationCount == 2)
    }

    @Test func stopObservingAnObjectEndsOnlyThatObjectsObservations() {
        let observer = RecordingObserver<Int>()
        let first = Messenger<Int>()
        let second = Messenger<Int>()
        observer.record(first)
        observer.record(second)
        observer.stopObserving(first)
        first.send(1)
        second.send(2)
        #expect(observer.messages.elements == [2])
    }

    @Test func stopObservingEndsEveryObservationOfTheObserver() {
        let observer = RecordingObserver<Int>()
        let other = RecordingObserver<Int>()
        let first = Messenger<Int>()
        let second = Messenger<Int>()
        observer.record(first)
        observer.record(second)
        other.record(first)
        observer.stopObserving()
        first.send(1)
        second.send(2)
        #expect(observer.messages.elements.isEmpty)
        #expect(other.messages.elements == [1])
    }

    @Test func stopBeingObservedByAnObserverEndsOnlyItsObservations() {
        let messenger = Messenger<Int>()
        let leaving = RecordingObserver<Int>()
        let staying = RecordingObserver<Int>()
        leaving.record(messenger)
        staying.record(messenger)
        messenger.stopBeingObserved(by: leaving)
        messenger.send(1)
        #expect(leaving.messages.elements.isEmpty)
        #expect(staying.messages.elements == [1])
        #expect(!leaving.isObserving(messenger))
    }

    @Test func stopBeingObservedEndsEveryObservationOfTheObject() {
        let messenger = Messenger<Int>()
        let first = RecordingObserver<Int>()
        let second = RecordingObserver<Int>()
        first.record(messenger)
        second.record(messenger)
        messenger.stopBeingObserved()
        messenger.send(1)
        #expect(first.messages.elements.isEmpty)
        #expect(second.messages.elements.isEmpty)
        #expect(!first.isObserving(messenger))
        #expect(messenger.observationCount == 0)
    }

    @Test func anObserverThatIsAlsoObservableCanDoBoth() {
        final class ViewModel: Messenger<String>, Observer {
            let receiver = Receiver()
            init(title: Var<String>) {
                super.init()
                observe(title) { [weak self] update in self?.send("title: \(update.new)") }
            }
        }
        let title = Var("a")
        let viewModel = ViewModel(title: title)
        let observer = RecordingObserver<String>()
        observer.record(viewModel)
        title.value = "b"
        #expect(observer.messages.elements == ["title: b"])
    }
}
