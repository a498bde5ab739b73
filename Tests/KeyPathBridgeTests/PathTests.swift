import Foundation
import HeraldTestSupport
import KeyPathBridge
import Messaging
import Synchronization
import Testing

final class EndLeaf: @unchecked Sendable {
    @ObservableVar var value: Int
    init(_ value: Int) { self.value = value }
}

final class LeafHolder: @unchecked Sendable {
    @ObservableVar var leaf: EndLeaf?
    init(_ leaf: EndLeaf?) { self.leaf = leaf }
}

@Suite("Key paths")
struct PathTests {
    @Test func aPathDeliversItsEndValueAndFollowsReplacedIntermediates() {
        let cache = UserCache()
        let observer = TestObserver()
        let zips = Recording<String?>()
        observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) { zips.append($0) }

        let ann = User(name: "Ann", address: Address(zipCode: "10115"))
        cache.currentUser = ann  // reachable now
        ann.address?.zipCode = "10117"  // the end value changes
        ann.address = Address(zipCode: "20095")  // an intermediate is replaced: re-wired
        let bob = User(name: "Bob", address: Address(zipCode: "80331"))
        cache.currentUser = bob  // the root's property is replaced: re-wired

        #expect(zips.elements == ["10115", "10117", "20095", "80331"])
    }

    @Test func aNilIntermediateMakesThePathUnreachable() {
        let cache = UserCache()
        let ann = User(name: "Ann", address: Address(zipCode: "10115"))
        cache.currentUser = ann
        let zip = ObservedPath(
            cache, PropertyPath(\UserCache.$currentUser).appending(\.$address).appending(\.$zipCode)
        )
        let observer = RecordingObserver<Update<String?>>()
        observer.record(zip)
        #expect(zip.value == "10115")
        #expect(zip.isReachable)

        ann.address = nil

        #expect(zip.value == nil)
        #expect(!zip.isReachable)
        #expect(observer.messages.elements == [Update("10115", nil)])
    }

    @Test func unreachableIsDistinguishableFromAReachableNil() {
        let cache = UserCache()
        let street = ObservedPath(
            cache, PropertyPath(\UserCache.$currentUser).appending(\.$address).appending(\.$street))
        let values = Recording<String??>()
        let observer = TestObserver()
        observer.observe(street) { values.append($0.new) }

        cache.currentUser = User(name: "Ann", address: Address(zipCode: "1", street: nil))
        cache.currentUser?.address?.street = "Main St"
        cache.currentUser = nil

        // .some(nil): reachable, no street; nil: unreachable.
        #expect(values.elements == [.some(nil), .some("Main St"), nil])
    }

    @Test func aPathSetUpWhileNilFiresOnceItBecomesReachable() {
        let cache = UserCache()
        let observer = TestObserver()
        let names = Recording<String?>()
        observer.observe(cache, \.$currentUser, \.$name) { names.append($0) }
        #expect(names.elements.isEmpty)  // starting sends nothing

        cache.currentUser = User(name: "Fetched")  // nil, then fetched

        #expect(names.elements == ["Fetched"])
    }

    @Test func replacingAnIntermediateWithAnEqualEndValueDoesNotFire() {
        let ann = User(name: "Ann", address: Address(zipCode: "10115"))
        ann.workAddress = Address(zipCode: "10115")
        let observer = TestObserver()
        let zips = Recording<String?>()
        observer.observe(ann, \.$address, \.$zipCode) { zips.append($0) }

        ann.address = ann.workAddress  // home/work swap: another object, the same zip code

        #expect(zips.elements.isEmpty)
        ann.address?.zipCode = "10117"  // but the path now follows the work address
        #expect(zips.elements == ["10117"])
        #expect(ann.workAddress?.zipCode == "10117")
    }

    @Test func rewiringStopsObservingTheOldObject() {
        let old = Address(zipCode: "10115")
        let ann = User(name: "Ann", address: old)
        let observer = TestObserver()
        let zips = Recording<String?>()
        observer.observe(ann, \.$address, \.$zipCode) { zips.append($0) }
        #expect(old.$zipCode.observationCount == 1)

        ann.address = Address(zipCode: "20095")
        old.zipCode = "99999"

        #expect(old.$zipCode.observationCount == 0)
        #expect(zips.elements == ["20095"])
    }

    @Test func rootingAtAnIntermediateFollowsThatObjectInstead() {
        // "Follow the old address": root the path at the address, not at the user.
        let cache = UserCache()
        let oldAddress = Address(zipCode: "10115")
        cache.currentUser = User(name: "Ann", address: oldAddress)
        let viaUser = ObservedPath(
            cache, PropertyPath(\UserCache.$currentUser).appending(\.$address).appending(\.$zipCode)
        )
        let viaAddress = ObservedPath(oldAddress, PropertyPath(\Address.$zipCode))

        cache.currentUser?.address = Address(zipCode: "20095")
        oldAddress.zipCode = "10117"

        #expect(viaUser.value == "20095")  // follows the user's current address
        #expect(viaAddress.value == "10117")  // follows the old address
    }

    @Test func updatesCarryTheAuthorOfTheChangeThatCausedThem() {
        let cache = UserCache()
        let editor = Author("editor")
        let zip = ObservedPath(
            cache, PropertyPath(\UserCache.$currentUser).appending(\.$address).appending(\.$zipCode)
        )
        let observer = RecordingObserver<Update<String?>>()
        observer.record(zip)
        let ann = User(name: "Ann", address: Address(zipCode: "1"))

        cache.$currentUser.set(ann, as: editor)  // an intermediate replaced by the editor
        ann.address?.$zipCode.set("2", as: editor)  // the end value changed by the editor

        #expect(observer.authors.elements.count == 2)
        #expect(observer.authors.elements.allSatisfy { $0 === editor })
    }

    @Test func everyChangeKeepsItsOwnValueAndAuthorEvenWhenAnotherWasQueued() {
        let ann = User(name: "ann")
        let editor = Author("editor")
        let normalizer = TestObserver()
        // Registered first: on the editor's change it queues a second change of its own.
        normalizer.observe(ann.$name) { update in
            if update.new != update.new.capitalized { ann.name = update.new.capitalized }
        }
        let name = ObservedPath(ann, PropertyPath(\User.$name))
        let observer = RecordingObserver<Update<String?>>()
        observer.record(name)

        ann.$name.set("grace", as: editor)

        #expect(observer.messages.elements == [Update("ann", "grace"), Update("grace", "Grace")])
        #expect(observer.authors.elements.first === editor)
        #expect(observer.authors.elements.last === ann.$name)
    }

    @Test func anObservedPathIsACacheOfItsEndValue() {
        let ann = User(name: "Ann")
        let name = ObservedPath(ann, PropertyPath(\User.$name))
        #expect(name.latestMessage == Update("Ann", "Ann"))
        let newName = name.new()  // a stand-alone transform: held for the test
        let observer = RecordingObserver<String?>()
        observer.record(newName)
        name.send()
        #expect(observer.messages.elements == ["Ann"])
    }

    @Test func aPathHoldsNeitherItsRootNorItsObjects() {
        var cache: UserCache? = UserCache()
        var ann: User? = User(name: "Ann", address: Address(zipCode: "1"))
        cache?.currentUser = ann
        let cacheBox = WeakBox(cache!)
        let annBox = WeakBox(ann!)
        let zip = ObservedPath(
            cache!,
            PropertyPath(\UserCache.$currentUser).appending(\.$address).appending(\.$zipCode))
        #expect(zip.value == "1")

        ann = nil
        cache = nil

        #expect(cacheBox.isFreed)
        #expect(annBox.isFreed)
    }

    @Test func whenTheRootDiesThePathBecomesUnreachable() {
        var ann: User? = User(name: "Ann")
        let name = ObservedPath(ann!, PropertyPath(\User.$name))
        let observer = RecordingObserver<Update<String?>>()
        observer.record(name)

        ann = nil

        #expect(name.value == nil)
        #expect(observer.messages.elements.map(\.new) == [nil])
    }

    final class Canary {}

    /// Issue 10, item 1 (the leak): ad hoc path observations of roots that die end and are
    /// freed, although their observer lives on. Each handler captures a canary; a freed canary
    /// means a freed handler, and with it the observation that held the path.
    @Test func adHocPathObservationsEndAndAreFreedWhenTheirRootsDie() {
        let observer = TestObserver()
        var canaries: [() -> Canary?] = []
        var roots: [User] = []
        for index in 0..<10_000 {
            let canary = Canary()
            canaries.append { [weak canary] in canary }
            let root = User(name: "\(index)", address: Address(zipCode: "\(index)"))
            roots.append(root)
            observer.observe(root, \.$address, \.$zipCode) { _ in _ = canary }
        }
        roots = []
        #expect(canaries.allSatisfy { $0() == nil })
        withExtendedLifetime(observer) {}
    }

    /// Issue 10, item 1, coalesced: the same for `observeCoalesced` over a path.
    @Test func coalescedPathObservationsEndAndAreFreedWhenTheirRootsDie() {
        let observer = TestObserver()
        let coalescer = Coalescer(scheduler: TestMessageScheduler())
        weak var weakCanary: Canary?
        var root: User? = User(name: "Ann", address: Address(zipCode: "1"))
        do {
            let canary = Canary()
            weakCanary = canary
            observer.observeCoalesced(
                root!, PropertyPath(\User.$address).appending(\.$zipCode), in: coalescer
            ) { _, _ in _ = canary }
        }
        root = nil
        #expect(weakCanary == nil)
        withExtendedLifetime(observer) {}
    }

    /// Issue 10, item 5: the last update, to unreachable, is authored by the path, and the
    /// path's observations end with it.
    @Test func theLastUpdateWhenTheRootDiesIsAuthoredByThePath() {
        var ann: User? = User(name: "Ann")
        let name = ObservedPath(ann!, PropertyPath(\User.$name))
        let observer = RecordingObserver<Update<String?>>()
        observer.record(name)

        ann = nil

        #expect(observer.authors.elements.count == 1)
        #expect(observer.authors.elements.first === name)
        #expect(name.observationCount == 0)  // the path is over: so is every observation of it
        #expect(!name.isActive)
    }

    /// Found in review: the root dies while the path's output is being delivered (a resend of
    /// its value), so the last update is queued behind that delivery; the observations end only
    /// after it reached them.
    @Test func theLastUpdateQueuedBehindADeliveryStillArrives() {
        var ann: User? = User(name: "Ann")
        let name = ObservedPath(ann!, PropertyPath(\User.$name))
        let dropper = TestObserver()
        dropper.observe(name) { (_: Update<String?>, _: AnyAuthor) in ann = nil }
        let recorder = RecordingObserver<Update<String?>>()
        recorder.record(name)

        name.send()  // resends the current value; the first observer drops the root meanwhile

        #expect(!name.isActive)
        #expect(recorder.messages.elements.map(\.new) == ["Ann", nil])
        #expect(name.observationCount == 0)
    }

    /// Found in review: the same with the delivering role held by an observation-state handler.
    @Test func theLastUpdateQueuedBehindAnObservationStateHandlerStillArrives() {
        var ann: User? = User(name: "Ann")
        let name = ObservedPath(ann!, PropertyPath(\User.$name))
        name.whenObservationStateChanges { isObserved in if isObserved { ann = nil } }
        let recorder = RecordingObserver<Update<String?>>()
        recorder.record(name)  // becomes observed: the handler drops the root

        #expect(ann == nil)
        #expect(recorder.messages.elements.map(\.new) == [nil])
        #expect(name.observationCount == 0)
    }

    /// Found in review: after the root's property stopped being observed, re-attaching catches
    /// up a change it missed; that update is authored by the path (its own author is unknown).
    @Test func anUpdateCaughtUpAfterReattachingIsAuthoredByThePath() {
        let cache = UserCache()
        let name = ObservedPath(cache, PropertyPath(\UserCache.$currentUser).appending(\.$name))
        let recorder = RecordingObserver<Update<String?>>()
        recorder.record(name)
        let actor = TestObserver()
        actor.observe(name) { (update: Update<String?>, _: AnyAuthor) in
            if update.new == "Ann" {
                cache.$currentUser.stopBeingObserved()
                cache.currentUser = User(name: "Bob")
            }
        }

        cache.currentUser = User(name: "Ann")

        #expect(recorder.messages.elements.map(\.new) == ["Ann", "Bob"])
        #expect(recorder.authors.elements.last === name)
    }

    @Test func anObservedPathIsAnObservationAsAnObject() {
        var ann: User? = User(name: "Ann", address: Address(zipCode: "1"))
        let zip = ObservedPath(ann!, PropertyPath(\User.$address).appending(\.$zipCode))
        let second = ObservedPath(ann!, PropertyPath(\User.$name))
        let observer = RecordingObserver<Update<String?>>()
        observer.record(zip)
        #expect(zip.isActive)

        zip.stop()
        ann?.address?.zipCode = "2"
        #expect(!zip.isActive)
        #expect(observer.messages.elements.isEmpty)
        #expect(ann?.$address.observationCount == 0)  // stopped: let go of the whole path
        #expect(ann?.$name.observationCount == 1)  // `second` still observes ann
        zip.stop()

        ann = nil  // the root dies: the other path ends by itself
        #expect(!second.isActive)
    }

    @Test func droppingAnObservedPathEndsEveryObservationAlongIt() {
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        var zip: ObservedPath<User, String>? = ObservedPath(
            ann, PropertyPath(\User.$address).appending(\.$zipCode))
        let box = WeakBox(zip!)
        #expect(ann.$address.observationCount == 1)
        #expect(ann.address?.$zipCode.observationCount == 1)

        zip = nil

        #expect(box.isFreed)
        #expect(ann.$address.observationCount == 0)
        #expect(ann.address?.$zipCode.observationCount == 0)
    }

    @Test func anAdHocPathObservationEndsWithItsObserver() {
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        var observer: TestObserver? = TestObserver()
        observer?.observe(ann, \.$address, \.$zipCode) { _ in }
        #expect(ann.$address.observationCount == 1)

        observer = nil

        #expect(ann.$address.observationCount == 0)
        #expect(ann.address?.$zipCode.observationCount == 0)
    }

    @Test func pathsOfOneToFourPropertiesCompileAndWork() {
        final class App {
            @ObservableVar var cache: UserCache? = UserCache()
        }
        let app = App()
        let observer = TestObserver()
        let log = Recording<String>()
        observer.observe(app, \.$cache) { log.append("cache \($0 == nil ? "gone" : "set")") }
        observer.observe(app, \.$cache, \.$currentUser) { _ in log.append("user") }
        observer.observe(app, \.$cache, \.$currentUser, \.$name) { log.append("name \($0 ?? "-")") }
        observer.observe(app, \.$cache, \.$currentUser, \.$address, \.$zipCode) {
            log.append("zip \($0 ?? "-")")
        }

        app.cache?.currentUser = User(name: "Ann", address: Address(zipCode: "1"))

        #expect(log.elements == ["user", "name Ann", "zip 1"])
    }

    /// A change of the old end variable whose delivery to the path comes after the path
    /// re-wired (another observer of the variable, registered first, replaces the intermediate
    /// object) is stale and never delivered.
    @Test func aStaleEndChangeDeliveredAfterTheRewireIsDropped() {
        let old = EndLeaf(1)
        let new = EndLeaf(2)
        let root = LeafHolder(old)
        let first = TestObserver()
        first.observe(old.$value) { _ in root.leaf = new }  // runs before the path's handler
        let values = Recording<Update<Int?>>()
        let path = ObservedPath(root, PropertyPath(\LeafHolder.$leaf).appending(\.$value))
        let observer = TestObserver()
        observer.observe(path) { values.append($0) }

        old.value = 10

        #expect(values.elements.map(\.new) == [2], "\(values.elements)")
        #expect(path.value == 2)
    }

    /// A handler that sets the end variable again (re-entrancy on the direct path) gets its
    /// change queued behind the variable's message it is handling; replacing the intermediate
    /// object meanwhile makes that queued change stale (dropped, as the engine documents), and
    /// the updates stay chained.
    @Test func aHandlerThatSetsTheEndVariableAgainGetsChainedUpdates() {
        let leaf = EndLeaf(0)
        let other = EndLeaf(100)
        let root = LeafHolder(leaf)
        let path = ObservedPath(root, PropertyPath(\LeafHolder.$leaf).appending(\.$value))
        let updates = Recording<Update<Int?>>()
        let observer = TestObserver()
        observer.observe(path) { update in
            updates.append(update)
            if update.new == 1 {
                leaf.value = 2
                root.leaf = other
                other.value = 101
                leaf.value = 3  // stale: leaf was replaced
            }
        }

        leaf.value = 1

        #expect(updates.elements.map(\.new) == [1, 101], "\(updates.elements)")
        #expect(updates.elements.map(\.old) == [0, 1], "\(updates.elements)")
        #expect(path.value == 101)
    }

    @Test func aHandlerThatSetsTheEndAndReplacesTheIntermediateSeesOrderedUpdates() {
        let root = Node()
        let a = Node()
        let b = Node()
        b.value.value = 100
        root.child.value = a
        let path = ObservedPath(root, PropertyPath(\Node.child).appending(\.value))
        let observer = TestObserver()
        let updates = Recording<Update<Int?>>()
        observer.observe(path) { update in
            updates.append(update)
            if update.new == 1 { a.value.value = 2 }  // same variable, re-entrant
            if update.new == 2 {
                root.child.value = b  // replace the intermediate
                a.value.value = 3  // stale now: must not be seen
            }
        }
        a.value.value = 1
        #expect(updates.elements.map(\.new) == [1, 2, 100])
        #expect(updates.elements.map(\.old) == [0, 1, 2])
    }

    /// A manual trigger of the end variable goes through the engine (forced): one update whose
    /// old and new are the current value, after direct changes.
    @Test func aManualTriggerAfterDirectChangesIsDelivered() {
        let leaf = EndLeaf(1)
        let root = LeafHolder(leaf)
        let path = ObservedPath(root, PropertyPath(\LeafHolder.$leaf).appending(\.$value))
        let updates = Recording<Update<Int?>>()
        let observer = TestObserver()
        observer.observe(path) { updates.append($0) }
        leaf.value = 2
        leaf.value = 2
        Inspector(leaf).trigger(\.$value)
        leaf.value = 3
        #expect(updates.elements.map(\.new) == [2, 2, 3])
        #expect(updates.elements.map(\.old) == [1, 2, 2])
    }

    /// The root dies while the end variable lives on: its next change is not published
    /// directly; the path ends with an update to unreachable.
    @Test func aChangeAfterTheRootDiedEndsThePath() {
        let leaf = EndLeaf(1)
        var root: LeafHolder? = LeafHolder(leaf)
        let path = ObservedPath(root!, PropertyPath(\LeafHolder.$leaf).appending(\.$value))
        let updates = Recording<Update<Int?>>()
        let observer = TestObserver()
        observer.observe(path) { updates.append($0) }
        leaf.value = 2
        root = nil
        leaf.value = 3
        #expect(!updates.elements.map(\.new).contains(3), "\(updates.elements)")
        #expect(updates.elements.last?.new == nil)
        #expect(!path.isActive)
    }

    /// The path's objects are freed after stop(), including after direct changes.
    @Test func aPathIsFreedAfterStopAndAfterItsRootDies() {
        let leaf = EndLeaf(0)
        weak var weakPath: ObservedPath<LeafHolder, Int>?
        weak var weakRoot: LeafHolder?
        do {
            let root = LeafHolder(leaf)
            weakRoot = root
            let observer = TestObserver()
            let path = observer.observe(root, \.$leaf, \.$value) { _ in }
            weakPath = path
            leaf.value = 5
            leaf.value = 6
        }
        #expect(weakRoot == nil)
        #expect(weakPath == nil)
        leaf.value = 7  // nothing observes it any more
        #expect(leaf.$value.observationCount == 0)

        do {
            let root = LeafHolder(leaf)
            let path = ObservedPath(root, PropertyPath(\LeafHolder.$leaf).appending(\.$value))
            weakPath = path
            leaf.value = 8
            path.stop()
            withExtendedLifetime(root) {}
        }
        #expect(weakPath == nil)
        #expect(leaf.$value.observationCount == 0)
    }
}

@Suite("Key paths concurrency")
struct PathConcurrencyTests {
    final class Leaf: @unchecked Sendable {
        @ObservableVar var n = 0
    }

    final class Branch: @unchecked Sendable {
        @ObservableVar var leaf: Leaf? = Leaf()
    }

    /// Starting an observation takes the delivering role of what it observes, for a moment;
    /// another thread that keeps setting the end property must not keep it there.
    @Test func observingAPathWhileAnotherThreadKeepsSettingItsEndReturns() {
        let branch = Branch()
        let leaf = branch.leaf!
        let observer = TestObserver()
        let sent = AtomicCount()
        let total = 2_000_000
        let sentByThen = stepsMadeElsewhere(
            total: total, made: sent, step: { leaf.n = $0 },
            during: {
                while sent.value < 100 {}  // the other thread is setting
                for _ in 0..<20 {
                    // A handler slower than a set, so that the other thread outpaces delivery.
                    observer.observe(branch, \.$leaf, \.$n) { _ in busyWork() }
                    observer.stopObserving(branch)
                }
            })
        #expect(sentByThen != nil)
        #expect(
            sentByThen ?? total < total, "observe returned only after the other thread stopped")
    }

    @Test func changesAtDifferentLevelsFromSeveralThreadsEndConsistent() {
        let root = Node()
        let children = (0..<4).map { _ in Node() }
        let path = ObservedPath(root, PropertyPath(\Node.child).appending(\.value))
        let box = UncheckedBox(children)

        concurrently(threads: 3) { thread in
            for index in 0..<2_000 {
                if thread == 0 {
                    root.child.value = box.value[index % 4]
                } else {
                    box.value[(index + thread) % 4].value.value = index
                }
            }
        }

        // Whatever the interleaving, the path now shows the current child's current value.
        let expected = root.child.value?.value.value
        #expect(path.value == expected)
        #expect(children.filter(\.value.isObserved).count == 1)
    }

    #if DEBUG  // the hook exists in debug builds only
        /// A change made while a path is being wired (here: between reading the object a level
        /// leads to and installing the links) is handled once the wiring is done, not dropped.
        @Test func aPathCreatedWhileAnIntermediateIsReplacedFollowsTheReplacement() {
            let root = Node()
            let old = Node()
            root.child.value = old
            let new = Node()
            new.value.value = 7
            let path = PathTestHooks.$afterAttaching.withValue({ level in
                // As if another thread replaced it just now (once: the replacement is wired too).
                if level == 0, root.child.value !== new { root.child.value = new }
            }) {
                ObservedPath(root, PropertyPath(\Node.child).appending(\.value))
            }

            #expect(path.value == 7)
            new.value.value = 8
            #expect(path.value == 8)
            #expect(!old.value.isObserved)
        }
    #endif

    /// Many threads set the end value while another replaces the intermediate object: the
    /// path's updates chain (each old is the previous new), no update repeats its value, and
    /// the last value is the model's.
    @Test func directEndChangesRacingRewiresKeepTheUpdatesChained() {
        for round in 0..<30 {
            let leaves = (0..<4).map { EndLeaf($0 * 1_000) }
            let root = LeafHolder(leaves[0])
            let path = ObservedPath(root, PropertyPath(\LeafHolder.$leaf).appending(\.$value))
            let updates = Recording<Update<Int?>>()
            let observer = TestObserver()
            observer.observe(path) { updates.append($0) }
            let boxed = UncheckedBox(leaves)
            concurrently(threads: 4) { thread in
                if thread == 3 {
                    for step in 0..<200 { root.leaf = boxed.value[step % 3] }
                    root.leaf = boxed.value[3]
                } else {
                    for step in 0..<300 {
                        boxed.value[thread].value = thread * 1_000 + step % 7
                        boxed.value[3].value = 3_000 + step % 5
                    }
                }
            }
            let all = updates.elements
            var previous: Int? = 0
            var broken = 0
            for update in all {
                if update.old != previous { broken += 1 }
                if update.old == update.new { broken += 1 }
                previous = update.new
            }
            #expect(broken == 0, "round \(round): \(broken) broken of \(all.count)")
            #expect(path.value == leaves[3].value)
            #expect(all.last?.new == leaves[3].value, "round \(round)")
        }
    }

    @Test func directAndEngineEndChangesRacingRewiresAgreeWithTheModel() {
        for _ in 0..<200 {
            let root = Node()
            let a = Node()
            let b = Node()
            root.child.value = a
            let path = ObservedPath(root, PropertyPath(\Node.child).appending(\.value))
            let observer = TestObserver()
            let updates = Recording<Update<Int?>>()
            observer.observe(path) { updates.append($0) }
            concurrently(threads: 3) { index in
                for step in 1...50 {
                    switch index {
                    case 0: a.value.value = step
                    case 1: b.value.value = -step
                    default: root.child.value = step % 2 == 0 ? a : b
                    }
                }
            }
            let expected = root.child.value?.value.value
            #expect(path.value == expected)
            let sent = updates.elements
            #expect(sent.allSatisfy { $0.old != $0.new })
            // Each update starts where the previous one ended (in order, none lost).
            var last: Int?? = .some(0)
            for update in sent {
                #expect(update.old == last)
                last = update.new
            }
            #expect(last == .some(expected))
        }
    }
}

@Suite("Key paths that loop or overlap")
struct PathLoopTests {
    /// `a.child.child.child.value` with a.child = b and b.child = a passes through a twice.
    @Test func aPathThroughTheSameObjectTwiceWorksRewiresAndIsFreed() {
        var a: Node? = Node()
        weak let weakA = a
        weak var weakB: Node?
        var values: [Int?] = []
        do {
            let b = Node()
            weakB = b
            a!.child.value = b
            b.child.value = a
            a!.value.value = 1
            b.value.value = 2
            let path = ObservedPath(
                a!,
                PropertyPath(\Node.child).appending(\.child).appending(\.child).appending(\.value))
            let observer = TestObserver()
            observer.observe(path) { values.append($0.new) }
            #expect(path.value == 2)  // a → b → a → b

            b.value.value = 3  // the end
            a!.value.value = 9  // not on the path's end: nothing
            let c = Node()
            c.value.value = 5
            b.child.value = c  // a → b → c → nil: unreachable
            c.child.value = b  // a → b → c → b
            a!.child.value = c  // a → c → b → c

            #expect(values == [3, nil, 3, 5])
            #expect(c.child.observationCount == 1 && b.child.observationCount == 1)
            #expect(a!.child.observationCount == 1)
            c.child.value = nil  // break the cycles the test made
            b.child.value = nil
        }
        a = nil
        #expect(weakA == nil && weakB == nil)
    }

    @Test func overlappingPathsStopIndependently() {
        let root = Node()
        let child = Node()
        let grandchild = Node()
        root.child.value = child
        child.child.value = grandchild
        let short = ObservedPath(root, PropertyPath(\Node.child).appending(\.value))
        let long = ObservedPath(
            root, PropertyPath(\Node.child).appending(\.child).appending(\.value))
        #expect(root.child.observationCount == 2)

        short.stop()
        grandchild.value.value = 4
        child.value.value = 3

        #expect(long.value == 4)
        #expect(short.value == 0)  // stopped: keeps its last value
        #expect(root.child.observationCount == 1)
        #expect(!child.value.isObserved && child.child.isObserved)
        long.stop()
        #expect(!root.child.isObserved && !child.child.isObserved && !grandchild.value.isObserved)
    }
}
