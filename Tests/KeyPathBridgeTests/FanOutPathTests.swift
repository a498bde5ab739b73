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
