import HeraldTestSupport
import KeyPathBridge
import Testing

/// A root that is an observable object itself: it sends its own messages and has properties.
final class Store: ObservableObject {
    let messenger = Messenger<String>()
    @ObservableVar var owner: User?

    init(owner: User?) {
        self.owner = owner
    }
}

@Suite("Path observations and their root")
struct PathRootTests {
    @Test func stopObservingTheRootEndsItsPathObservationsAndFreesThem() throws {
        let cache = UserCache()
        let ann = User(name: "Ann", address: Address(zipCode: "10115"))
        cache.currentUser = ann
        let other = UserCache()
        other.currentUser = User(name: "Bob")
        let observer = TestObserver()
        let received = Recording<String>()
        weak let typed = observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) {
            received.append("typed \($0 ?? "-")")
        }
        weak let text = try observer.observe(cache, path: "currentUser.name") {
            received.append("text \($0 ?? "-")")
        }
        observer.observe(other, \.$currentUser, \.$name) { received.append("other \($0 ?? "-")") }
        #expect(observer.isObserving(cache))
        #expect(typed != nil && text != nil)  // each held by its observation

        observer.stopObserving(cache)

        #expect(!observer.isObserving(cache))
        #expect(observer.isObserving(other))
        ann.address?.zipCode = "10117"
        ann.name = "Annie"
        other.currentUser?.name = "Robert"
        #expect(received.elements == ["other Robert"])
        #expect(typed == nil && text == nil)
        #expect(!ann.$address.isObserved && !ann.$name.isObserved && !cache.$currentUser.isObserved)
    }

    /// "A path holds its root weakly", also where the end value is the root itself: a `*`
    /// path's end value is the object it observes until one of its properties changes.
    @Test(arguments: [false, true])
    func aStarPathHoldsItsRootWeaklyAndEndsWithIt(afterAChange: Bool) throws {
        var ann: User? = User(name: "Ann")
        let freed = WeakBox(ann!)
        let observer = TestObserver()
        let received = Recording<Bool>()
        weak let path = try observer.observeUpdates(ann!, path: "*", options: .initial) { update in
            received.append(update.new == nil)
        }
        let observed = try ObservedPath(ann!, path: "*")
        #expect(observed.value as AnyObject? === ann)
        if afterAChange { ann?.name = "Annie" }

        ann = nil

        #expect(freed.isFreed)
        #expect(observed.value == nil)
        #expect(path == nil)  // the observation ended with its root, and freed its path
        #expect(received.elements.first == false)
    }

    @Test func anObservableRootsMessagesAndPathsStopTogether() {
        let ann = User(name: "Ann")
        let store = Store(owner: ann)
        let observer = TestObserver()
        let received = Recording<String>()
        observer.observe(store, \.$owner, \.$name) { received.append("name \($0 ?? "-")") }
        #expect(observer.isObserving(store))  // a path observation alone counts
        observer.observe(store) { received.append("message \($0)") }

        observer.stopObserving(store)

        #expect(!observer.isObserving(store))
        ann.name = "Annie"
        store.send("hello")
        #expect(received.elements.isEmpty)
        #expect(!ann.$name.isObserved)
    }

    @Test func theReturnedPathCanBeReadAndStopped() {
        let ann = User(name: "Ann")
        let cache = UserCache()
        cache.currentUser = ann
        let observer = TestObserver()
        let names = Recording<String?>()
        weak var weakPath: ObservedPath<UserCache, String>?
        do {
            let path = observer.observe(cache, \.$currentUser, \.$name) { names.append($0) }
            weakPath = path
            #expect(path.value == "Ann")
            ann.name = "Annie"
            path.stop()
        }
        ann.name = "Anna"

        #expect(names.elements == ["Annie"])
        #expect(!observer.isObserving(cache))
        #expect(!ann.$name.isObserved)
        #expect(weakPath == nil)  // the stopped path's observation ended, and freed it
    }

    @Test func stopObservingTheRootEndsItsCoalescedObservations() {
        let scheduler = TestMessageScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let cache = UserCache()
        cache.currentUser = User(name: "Ann")
        let observer = TestObserver()
        let runs = Recording<String>()
        observer.observeCoalesced(
            cache, PropertyPath(\UserCache.$currentUser).appending(\.$name), in: coalescer
        ) { _, _ in runs.append("path") }
        // One property of the root: observed directly, without a path object.
        observer.observeCoalesced(cache, PropertyPath(\UserCache.$currentUser), in: coalescer) {
            _, _ in runs.append("property")
        }
        #expect(observer.isObserving(cache))

        observer.stopObserving(cache)

        #expect(!observer.isObserving(cache))
        cache.currentUser?.name = "Annie"
        cache.currentUser = nil
        _ = scheduler.flush()
        #expect(runs.elements.isEmpty)
        #expect(!cache.$currentUser.isObserved)
    }

    /// The ad hoc observation that returned a path is an observation of the path object too:
    /// `isObserving(path)`, `stopObserving(path)` and `path.stopBeingObserved(by:)` reach it.
    @Test func theReturnedPathIsObservedAsAnObjectToo() {
        let cache = UserCache()
        cache.currentUser = User(name: "Ann")
        let observer = TestObserver()
        let names = Recording<String?>()
        let path = observer.observe(cache, \.$currentUser, \.$name) { names.append($0) }
        #expect(path.observationCount == 1)

        #expect(observer.isObserving(path))
        observer.stopObserving(path)
        cache.currentUser?.name = "Annie"

        #expect(names.elements.isEmpty)
        #expect(!observer.isObserving(path))
        let again = observer.observe(cache, \.$currentUser, \.$name) { names.append($0) }
        again.stopBeingObserved(by: observer)
        cache.currentUser?.name = "Anna"
        #expect(names.elements.isEmpty)
    }
}
