import HeraldTestSupport
import KeyPathBridge
import Testing

/// A model whose objects hold addresses in several properties, and values beside them.
final class Household {
    @ObservableVar var owner: User?
    @ObservableVar var tenant: User?
    @ObservableVar var label = "home"

    init(owner: User? = nil, tenant: User? = nil) {
        self.owner = owner
        self.tenant = tenant
    }
}

/// A place and a subclass of it, to check that a typed fan-out selects properties holding one.
class Place {
    @ObservableVar var city: String

    init(city: String) {
        self.city = city
    }
}

final class Office: Place {}

final class Company {
    @ObservableVar var headquarters: Place
    @ObservableVar var branch: Office?
    @ObservableVar var founder: User?

    init(headquarters: Place, branch: Office?) {
        self.headquarters = headquarters
        self.branch = branch
    }
}

/// Two teams, each with a `Tally` (a property with a change rule of its own: a change is a
/// difference of at least 10).
final class Fixture {
    @ObservableVar var home: Team?
    @ObservableVar var away: Team?

    init(home: Team?, away: Team? = nil) {
        self.home = home
        self.away = away
    }
}

final class Season {
    @ObservableVar var fixture: Fixture?
}

@Suite("Paths with a wildcard in the middle")
struct FanOutPathTests {
    /// `currentUser.*.zipCode`: a change of `zipCode` on any object that a property of the user
    /// holds, and a replaced address (its branch re-wires on its own).
    @Test func aWildcardInTheMiddleFollowsEveryPropertyOfTheObject() throws {
        let cache = UserCache()
        let ann = User(name: "Ann", address: Address(zipCode: "10115"))
        ann.workAddress = Address(zipCode: "20095")
        cache.currentUser = ann
        let observer = TestObserver()
        let zips = Recording<String?>()
        try observer.observe(cache, path: "currentUser.*.zipCode") { zips.append($0 as? String) }

        ann.address?.zipCode = "10117"
        ann.workAddress?.zipCode = "20097"
        let oldWork = ann.workAddress
        ann.workAddress = Address(zipCode: "80331")  // its branch re-wires
        oldWork?.zipCode = "00000"  // no longer followed
        ann.name = "Annie"  // a value: not on any path to a zip code

        #expect(zips.elements == ["10117", "20097", "80331"])
    }

    /// Each branch compares its own end values: a replacement with an equal zip code sends
    /// nothing, even when another branch's zip code was sent last.
    @Test func eachBranchComparesItsOwnEndValue() throws {
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        ann.workAddress = Address(zipCode: "2")
        let observer = TestObserver()
        let zips = Recording<String?>()
        try observer.observe(ann, path: "*.zipCode") { zips.append($0 as? String) }

        ann.address = Address(zipCode: "1")  // equal in its branch: nothing
        ann.workAddress?.zipCode = "1"  // a change in its branch, though equal to the other's
        ann.address = nil  // its branch becomes unreachable
        ann.address = nil  // still unreachable: nothing

        #expect(zips.elements == ["1", nil])
    }

    @Test func replacingAnObjectBeforeTheWildcardReplacesEveryBranch() throws {
        let cache = UserCache()
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        cache.currentUser = ann
        let path = try ObservedPath(cache, path: "currentUser.*.zipCode")
        #expect(path.value as? String == "1")
        let bob = User(name: "Bob")
        bob.workAddress = Address(zipCode: "2")
        let updates = RecordingObserver<Update<Any?>>()
        updates.record(path)

        cache.currentUser = bob  // the first reachable branch's zip code: Bob's work address
        ann.address?.zipCode = "9"  // Ann is no longer followed
        bob.workAddress?.zipCode = "3"

        #expect(updates.messages.elements.map { $0.new as? String } == ["2", "3"])
        #expect(path.value as? String == "3")
        #expect(!ann.$address.isObserved)
        #expect(!ann.address!.$zipCode.isObserved)
    }

    @Test func theTypedFanOutSelectsThePropertiesHoldingTheType() {
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        ann.workAddress = Address(zipCode: "2")
        let cache = UserCache()
        cache.currentUser = ann
        let zips = Recording<String?>()
        let observer = TestObserver()
        let path = PropertyPath(\UserCache.$currentUser)
            .appendingEveryProperty(holding: Address.self)
            .appending(\.$zipCode)
        let observed = ObservedPath(cache, path)
        observer.observe(observed) { zips.append($0.new ?? nil) }
        #expect(observed.value == "1")

        ann.address?.zipCode = "10"
        ann.workAddress?.zipCode = "20"
        ann.name = "Annie"  // not an Address property: not observed at all
        cache.currentUser = nil

        #expect(zips.elements == ["10", "20", nil])
        #expect(!ann.$name.isObserved)
        #expect(!ann.$address.isObserved && !ann.$workAddress.isObserved)
    }

    @Test func aTypedFanOutFollowsPropertiesHoldingASubclassOrAnOptional() {
        let company = Company(headquarters: Place(city: "Berlin"), branch: Office(city: "Bonn"))
        let cities = Recording<String?>()
        let observer = TestObserver()
        let path = ObservedPath(
            company,
            PropertyPath<Company, Place?>(everyPropertyHolding: Place.self).appending(\.$city))
        observer.observe(path) { cities.append($0.new ?? nil) }

        company.branch?.city = "Köln"
        company.headquarters.city = "Potsdam"
        company.founder = User(name: "Ann")  // not a place

        #expect(cities.elements == ["Köln", "Potsdam"])
        #expect(!company.$founder.isObserved)
    }

    /// A typed fan-out may end the path: its value is then the object of the branch that
    /// changed.
    @Test func aTypedFanOutAtTheEndDeliversTheObjectOfTheBranchThatChanged() {
        let household = Household(owner: User(name: "Ann"), tenant: nil)
        let observer = TestObserver()
        let names = Recording<String?>()
        let users = ObservedPath(
            household, PropertyPath<Household, User?>(everyPropertyHolding: User.self))
        #expect(users.value??.name == "Ann")
        observer.observe(users) { names.append($0.new??.name) }

        household.tenant = User(name: "Bob")
        household.owner = nil

        #expect(names.elements == ["Bob", nil])
    }

    @Test func nestedWildcardsFanOutAtEachLevel() throws {
        let root = Node()
        let child = Node()
        let grandchild = Node()
        root.child.value = child
        child.child.value = grandchild
        let values = Recording<Int?>()
        let observer = TestObserver()
        try observer.observe(root, path: "*.*.value") { values.append($0 as? Int) }

        grandchild.value.value = 5  // root.child.child.value
        child.value.value = 6  // not on a path: root.child.value is an Int, not an object

        #expect(values.elements == [5])
    }

    /// The root dies: one last update to unreachable, authored by the path, and everything is
    /// freed, however many branches the wildcard made.
    @Test func aFanOutPathEndsWithItsRoot() throws {
        let observer = TestObserver()
        weak var weakPath: ObservedPath<User, Any>?
        let authors = Recording<Bool>()
        let address = Address(zipCode: "1")
        do {
            let ann = User(name: "Ann", address: address)
            ann.workAddress = address
            let path = try ObservedPath(ann, path: "*.zipCode")
            weakPath = path
            observer.observe(path) { _, author in authors.append(author === path) }
            address.zipCode = "2"
        }
        #expect(weakPath == nil)
        #expect(!address.$zipCode.isObserved)
        address.zipCode = "3"
        // The address is in two branches: one update from each, then one to unreachable, by
        // the path.
        #expect(authors.elements == [false, false, true])
    }

    @Test func tenThousandDeadRootsLeaveNoFanOutMachineryAlive() throws {
        let observer = TestObserver()
        var paths: [WeakBox<ObservedPath<User, Any>>] = []
        for index in 0..<10_000 {
            let user = User(name: "\(index)", address: Address(zipCode: "\(index)"))
            paths.append(WeakBox(try observer.observe(user, path: "*.zipCode") { _ in }))
        }
        #expect(paths.allSatisfy { $0.isFreed })
    }

    // A fan-out sends an update whose old and new are equal.
    @Test func aFanOutNeverSendsEqualOldAndNew() {
        let home = Household(owner: User(name: "A"), tenant: User(name: "B"))
        let names = ObservedPath(
            home, PropertyPath<Household, User?>(everyPropertyHolding: User.self).appending(\.$name)
        )
        let observer = TestObserver()
        let updates = Recording<Update<String?>>()
        observer.observe(names) { updates.append($0) }
        home.tenant?.name = "A"
        #expect(updates.elements.allSatisfy { $0.old != $0.new })  // once Update("A", "A")
    }

    /// Replacing an object before the wildcard "sends the first reachable branch's end value if
    /// it differs from the value sent last" — but not by the end property's own rule, which a
    /// plain path (and each branch) uses: `Tally` says 10 → 13 is no change, and a plain path
    /// sends nothing; the fan-out sends 13.
    @Test func replacingTheObjectBeforeTheWildcardComparesByTheEndPropertysOwnRule() throws {
        let season = Season()
        season.fixture = Fixture(home: Team("A", tally: 10))
        let observer = TestObserver()
        let plain = Recording<Int?>()
        let fannedOut = Recording<Int?>()
        try observer.observe(season, path: "fixture.home.tally") { plain.append($0 as? Int) }
        try observer.observe(season, path: "fixture.*.tally") { fannedOut.append($0 as? Int) }

        season.fixture = Fixture(home: Team("B", tally: 13))  // no change, by Tally's rule

        #expect(plain.elements.isEmpty)
        #expect(fannedOut.elements == plain.elements)
    }

    /// Observing the same property again sends nothing (PathWiring.observationEnded's
    /// promise). When the property before a wildcard stops being observed and is observed
    /// again, the fan-out is rebuilt and the first reachable branch's value is published, as if
    /// the object had been replaced: a spurious update although nothing changed.
    @Test func observingThePropertyBeforeTheWildcardAgainSendsNothing() throws {
        let cache = UserCache()
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        ann.workAddress = Address(zipCode: "2")
        cache.currentUser = ann
        let observer = TestObserver()
        let zips = Recording<String?>()
        try observer.observe(cache, path: "currentUser.*.zipCode") { zips.append($0 as? String) }

        ann.workAddress?.zipCode = "3"  // the value sent last is now the work address's
        cache.$currentUser.stopBeingObserved()  // observed again; nothing changed

        #expect(zips.elements == ["3"])
    }

    /// A change made while a fan-out is being wired (here by a property's 0→1 hook, user code
    /// the wiring runs; a change from another thread at that moment does the same) is counted
    /// twice: the fan-out's starting value already includes it (it reads each branch's latest
    /// end value after all branches started), and the branch's queued change is then published
    /// again, forced. Two updates with equal values.
    @Test func aChangeMadeWhileAFanOutIsWiredIsSentOnce() throws {
        let cache = UserCache()
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        let work = Address(zipCode: "2")
        ann.workAddress = work
        let observer = TestObserver()
        let updates = Recording<String>()
        let path = try ObservedPath(cache, path: "currentUser.*.zipCode")
        observer.observe(path) { update in
            updates.append("\(update.old as? String ?? "-")→\(update.new as? String ?? "-")")
        }
        var changed = false
        work.$zipCode.whenObservationStateChanges { [weak ann] isObserved in
            guard isObserved, !changed else { return }
            changed = true
            ann?.address?.zipCode = "5"  // the address branch is wired already
        }

        cache.currentUser = ann

        // Either "-→1", "1→5" (the change after the start) or "-→5" alone; never 5 twice.
        #expect(
            updates.elements == ["-→1", "1→5"] || updates.elements == ["-→5"],
            "\(updates.elements)")
        #expect(path.value as? String == "5")
    }

    /// A wildcard followed by a name that no branch has (a typo) is an error, never silent
    /// (when no object the branches reach has it, but some object does not).
    @Test func aNameThatNoBranchOfTheWildcardHasIsAnError() {
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        ann.workAddress = Address(zipCode: "2")
        #expect(throws: PathError.self) { try ObservedPath(ann, path: "*.zipCod") }
        // With nothing to check it on yet (no address), there is nothing to say.
        #expect(throws: Never.self) { try ObservedPath(User(name: "Bob"), path: "*.zipCod") }
    }

    /// A path that observes nothing of its root ends at once (as
    /// `aPropertyThatRefusesObserversIsNotObservedAgainForever` shows for a plain path). A
    /// fan-out at the root whose every branch refuses observers observes nothing of its root
    /// either, but stays active.
    @Test func aFanOutAtTheRootWhoseOnlyPropertyRefusesObserversEnds() throws {
        let model = Refusing()
        let path = try ObservedPath(model, path: "*.anything")
        #expect(model.starts.count <= 2, "observed \(model.starts.count) times")
        #expect(!path.isActive)  // it can observe nothing of its root: over
    }

    /// The same, as a lifetime: the root dies, but nothing tells the path (no branch observes
    /// anything), so the ad hoc observation and its path are never freed and never get their
    /// last update to unreachable.
    @Test func aFanOutPathWhoseBranchesAllRefusedIsFreedWhenItsRootDies() throws {
        let observer = TestObserver()
        weak var weakPath: ObservedPath<Refusing, Any>?
        weak var weakModel: Refusing?
        do {
            let model = Refusing()
            weakModel = model
            weakPath = try observer.observe(model, path: "*.anything") { _ in }
        }
        #expect(weakModel == nil)
        #expect(weakPath == nil)
    }

    /// A plain path lets go of an object replaced along it, as a fan-out does before its
    /// wildcard: the old user (and through the old branches' links nothing else, as they
    /// ended) is not kept while the path runs.
    @Test(arguments: ["currentUser.address.zipCode", "currentUser.*.zipCode"])
    func anObjectReplacedAlongAPathIsFreed(path: String) throws {
        let cache = UserCache()
        weak var oldUser: User?
        do {
            let ann = User(name: "Ann", address: Address(zipCode: "1"))
            oldUser = ann
            cache.currentUser = ann
        }
        let observer = TestObserver()
        try observer.observe(cache, path: path) { _ in }
        observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) { _ in }

        cache.currentUser = User(name: "Bob", address: Address(zipCode: "2"))

        #expect(oldUser == nil)
    }

    /// "A path holds its objects weakly": replacing the object in a branch lets go of the old
    /// one. It is kept alive for as long as the path runs: the branch's first link (a
    /// `PropertyLink`) keeps its starting value and next object in `started`, strongly. (The
    /// cause predates the fan-out — a plain path keeps the first object it reached behind each
    /// property the same way — but every branch inherits it.)
    @Test func anObjectReplacedInABranchIsFreed() throws {
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        weak let oldAddress = ann.address
        let observer = TestObserver()
        try observer.observe(ann, path: "*.zipCode") { _ in }

        ann.address = Address(zipCode: "3")

        #expect(oldAddress == nil)
    }
}

extension FanOutPathTests {
    @Test func stoppingTheObservationOfTheRootEndsEveryBranch() throws {
        let cache = UserCache()
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        ann.workAddress = Address(zipCode: "2")
        cache.currentUser = ann
        let observer = TestObserver()
        let zips = Recording<String?>()
        try observer.observe(cache, path: "currentUser.*.zipCode") { zips.append($0 as? String) }
        #expect(observer.isObserving(cache))

        observer.stopObserving(cache)
        ann.address?.zipCode = "3"

        #expect(zips.elements.isEmpty)
        #expect(!observer.isObserving(cache))
        #expect(!ann.$address.isObserved && !ann.$workAddress.isObserved && !ann.$name.isObserved)
        #expect(!ann.address!.$zipCode.isObserved && !ann.workAddress!.$zipCode.isObserved)
    }

    /// A fan-out over an object with no observable property observes nothing of its root, and
    /// ends like any such path.
    @Test func aFanOutOverNothingAtTheRootEnds() throws {
        final class Empty {}
        let observer = TestObserver()
        weak var weakPath: ObservedPath<Empty, Any>?
        let root = Empty()
        do {
            weakPath = try observer.observe(root, path: "*.zipCode") { _ in }
        }
        #expect(weakPath == nil)
    }
}

@Suite("Fan-out concurrency")
struct FanOutConcurrencyTests {
    /// Branches changed from several threads at once: every change is delivered, one at a time.
    @Test func branchesChangedFromSeveralThreadsAreDeliveredOneAtATime() throws {
        let ann = User(name: "Ann", address: Address(zipCode: "a"))
        ann.workAddress = Address(zipCode: "w")
        let lock = NSLockLike()
        nonisolated(unsafe) var running = 0
        nonisolated(unsafe) var overlapped = false
        nonisolated(unsafe) var received = 0
        let observer = TestObserver()
        try observer.observe(ann, path: "*.zipCode") { _ in
            lock.withLock {
                running += 1
                if running > 1 { overlapped = true }
            }
            lock.withLock {
                running -= 1
                received += 1
            }
        }
        let addresses = UncheckedBox([ann.address!, ann.workAddress!])

        concurrently(threads: 2) { thread in
            for index in 0..<2_000 {
                addresses.value[thread].zipCode = "\(thread)-\(index)"
            }
        }

        #expect(lock.withLock { received } == 4_000)
        #expect(!lock.withLock { overlapped })
    }
}
