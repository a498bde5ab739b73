import HeraldTestSupport
import Testing
import Transforms

@Suite("switchToLatest, flatMapLatest")
struct SwitchToLatestTests {
    final class User: Sendable {
        let name: Var<String>
        init(_ name: String) { self.name = Var(name) }
    }

    @Test func flatMapLatestForwardsTheSelectedObjectAndRewiresInBothForms() {
        let ann = User("Ann")
        let bob = User("Bob")
        let currentUser = Var<User?>(nil)
        let userName = currentUser.flatMapLatest { $0.new?.name }
        let standAlone = RecordingObserver<Update<String>>()
        standAlone.record(userName)
        let adHoc = Recording<String>()
        let observer = TestObserver()
        observer.observe(currentUser).flatMapLatest { $0.new?.name }.new { adHoc.append($0) }

        currentUser.value = ann  // switching to a cache sends its latest message
        ann.name.value = "Annie"
        currentUser.value = bob
        ann.name.value = "ignored: no longer selected"
        bob.name.value = "Robert"

        #expect(standAlone.messages.elements.map(\.new) == ["Ann", "Annie", "Bob", "Robert"])
        #expect(adHoc.elements == ["Ann", "Annie", "Bob", "Robert"])
        #expect(userName.inner === bob.name)
        #expect(ann.name.observationCount == 0)
    }

    @Test func selectingNilMakesTheInnerObjectUnreachable() {
        let ann = User("Ann")
        let currentUser = Var<User?>(ann)
        let userName = currentUser.new().flatMapLatest { $0?.name }
        let observer = RecordingObserver<Update<String>>()
        observer.record(userName)
        #expect(userName.inner === ann.name)  // wired at once: the origin is a cache

        currentUser.value = nil
        ann.name.value = "unheard"

        #expect(userName.inner == nil)
        #expect(observer.messages.elements.isEmpty)
        #expect(!ann.name.isObserved)
    }

    @Test func anAdHocChainOverACacheWiresToTheCurrentSelectionAtOnce() {
        let ann = User("Ann")
        let currentUser = Var<User?>(ann)
        let observer = TestObserver()
        let names = Recording<String>()
        observer.observe(currentUser).new().flatMapLatest { $0?.name }.new { names.append($0) }
        ann.name.value = "Annie"
        #expect(names.elements == ["Annie"])
    }

    @Test func switchToLatestFollowsAMessengerOfObservableObjects() {
        let first = Messenger<Int>()
        let second = Messenger<Int>()
        let selected = Messenger<Messenger<Int>?>()
        let latest = selected.switchToLatest()
        let observer = RecordingObserver<Int>()
        observer.record(latest)

        selected.send(first)
        first.send(1)
        selected.send(second)
        first.send(2)
        second.send(3)

        #expect(observer.messages.elements == [1, 3])
    }

    @Test func theInnerObservationEndsWithTheAdHocObservation() {
        let ann = User("Ann")
        let currentUser = Var<User?>(ann)
        var observer: TestObserver? = TestObserver()
        observer?.observe(currentUser).new().flatMapLatest { $0?.name }.receive { _ in }
        #expect(ann.name.observationCount == 1)
        observer = nil
        #expect(ann.name.observationCount == 0)
        #expect(currentUser.observationCount == 0)
    }

    @Test func aDroppedSwitchToLatestEndsBothObservations() {
        let ann = User("Ann")
        let currentUser = Var<User?>(ann)
        var userName: SwitchToLatest<Map<Var<User?>, User?>, Var<String>>? =
            currentUser.new().flatMapLatest { $0?.name }
        let box = WeakBox(userName!)
        #expect(ann.name.observationCount == 1)
        userName = nil
        #expect(box.isFreed)
        #expect(ann.name.observationCount == 0)
    }
}
