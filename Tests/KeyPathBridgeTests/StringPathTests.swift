import HeraldTestSupport
import KeyPathBridge
import Testing

/// Serialized: two tests route `PathDiagnostics`, which is global, to themselves.
@Suite("String paths", .serialized)
struct StringPathTests {
    @Test func aStringPathFollowsItsPropertiesLikeATypedOne() throws {
        let cache = UserCache()
        let zip = try ObservedPath(cache, path: "currentUser.address.zipCode")
        let values = Recording<String?>()
        let observer = TestObserver()
        observer.observe(zip) { values.append($0.new as? String) }

        let ann = User(name: "Ann", address: Address(zipCode: "10115"))
        cache.currentUser = ann
        ann.address?.zipCode = "10117"
        cache.currentUser = nil

        #expect(values.elements == ["10115", "10117", nil])
    }

    /// Like a typed path: a re-wiring that leaves the end value equal sends nothing, for
    /// `Equatable` values seen through `Any`; a different value, or a value of another type,
    /// is a change.
    @Test func anEqualEndValueFromAnotherObjectSendsNothing() throws {
        let ann = User(name: "Ann", address: Address(zipCode: "10115"))
        let values = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(ann, path: "address.zipCode") { values.append($0 as? String) }

        ann.address = Address(zipCode: "10115")  // equal: nothing
        ann.address = Address(zipCode: "10117")
        ann.address = nil
        ann.address = nil  // still unreachable: nothing

        #expect(values.elements == ["10117", nil])
    }

    @Test func letVariablePropertiesAreObservableToo() throws {
        let root = Node()
        let child = Node()
        let path = try ObservedPath(root, path: "child.value")
        root.child.value = child
        child.value.value = 7
        #expect(path.value as? Int == 7)
    }

    @Test func anUnknownPropertyIsAnErrorNamingThePropertyAndTheType() {
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        #expect(throws: PathError.self) { try ObservedPath(ann, path: "address.postcode") }
        do {
            _ = try ObservedPath(ann, path: "address.postcode")
        } catch {
            #expect(error.description.contains("\"postcode\""))
            #expect(error.description.contains("Address"))
            #expect(error.description.contains("zipCode"))  // and what there is instead
        }
    }

    @Test func malformedPathsAreErrors() {
        let ann = User(name: "Ann")
        for text in ["", "address..zipCode", "address.", "*..name"] {
            #expect(throws: PathError.self, "\(text)") { try ObservedPath(ann, path: text) }
        }
    }

    @Test func anUnknownPropertyOnAnObjectReachedLaterIsReported() throws {
        let reports = Recording<String>()
        PathDiagnostics.setHandler { reports.append($0.description) }
        defer { PathDiagnostics.setHandler(nil) }
        final class Holder {
            @ObservableVar var thing: AnyObject? = nil
        }
        let holder = Holder()
        let path = try ObservedPath(holder, path: "thing.zipCode")  // unreachable: not checked yet

        holder.thing = User(name: "not an address")  // reachable, but User has no zipCode

        #expect(path.value == nil)  // the rest of the path is unreachable
        #expect(reports.elements.count == 1)
        #expect(
            reports.elements.first?.contains("User has no observable property \"zipCode\"") == true)
    }

    @Test func aStarObservesEveryObservablePropertyOfAnObject() throws {
        let ann = User(name: "Ann")
        let everything = try ObservedPath(ann, path: "*")
        let changed = Recording<String>()
        let observer = TestObserver()
        observer.observe(everything) { update in
            if let change = update.new as? (property: String, value: Any) {
                changed.append(change.property)
            }
        }

        ann.name = "Annie"
        ann.address = Address(zipCode: "1")
        ann.name = "Anne"

        #expect(changed.elements == ["name", "address", "name"])
    }

    @Test func observeTakesAStringPathToo() throws {
        let cache = UserCache()
        let observer = TestObserver()
        let names = Recording<String?>()
        try observer.observe(cache, path: "currentUser.name") { names.append($0 as? String) }
        cache.currentUser = User(name: "Ann")
        #expect(names.elements == ["Ann"])
    }

    /// One resolver serves the check at the start and every later re-wiring: an element
    /// component reached only later is reported as the same error.
    @Test func anElementComponentReachedLaterIsReportedTheSameWay() throws {
        let reports = Recording<PathError>()
        PathDiagnostics.setHandler { reports.append($0) }
        defer { PathDiagnostics.setHandler(nil) }
        let cache = UserCache()
        let path = try ObservedPath(cache, path: "currentUser.address.#1")

        cache.currentUser = User(name: "Ann", address: Address(zipCode: "1"))

        #expect(path.value == nil)
        #expect(
            reports.elements
                == [.notACollection("#1", type: "Address", path: "currentUser.address.#1")])
    }

    /// A typo in a string path handed to an entry point that does not throw (`observe(root,
    /// path)`, `ObservedPath(root, path)`, `observeCoalesced`, `bind`) is reported.
    @Test func anUnknownNameInAStringBuiltPropertyPathIsReported() throws {
        let reports = Recording<PathError>()
        PathDiagnostics.setHandler { reports.append($0) }
        defer { PathDiagnostics.setHandler(nil) }
        let ann = User(name: "Ann")
        let observer = TestObserver()
        let path = try PropertyPath<User, Any>("nmae")  // typo; parses fine

        let observed = observer.observe(ann, path) { _ in }

        #expect(observed.value == nil)  // unreachable
        #expect(reports.count == 1)
    }
}

extension StringPathTests {
    /// A wildcard selects the properties the rest of the path applies to: a branch whose
    /// property holds a value, or whose object lacks the next property, is left out quietly;
    /// a misfit further along a branch is thrown when the path is created, and reported when
    /// it is met later.
    @Test func aWildcardLeavesOutBranchesTheNextComponentDoesNotFit() throws {
        let reports = Recording<String>()
        PathDiagnostics.setHandler { reports.append($0.description) }
        defer { PathDiagnostics.setHandler(nil) }
        let household = Household(owner: User(name: "Ann", address: Address(zipCode: "1")))

        // `owner` and `tenant` hold users (no zip code); `label` holds a string.
        let quiet = try ObservedPath(household, path: "owner.*.zipCode")
        #expect(quiet.value as? String == "1")
        _ = try ObservedPath(household, path: "*.address.zipCode")
        #expect(reports.elements.isEmpty)

        // Met now: thrown; met later: reported.
        #expect(throws: PathError.self) {
            try ObservedPath(household, path: "owner.*.zipCode.digits")
        }
        let later = Household()
        let laterPath = try ObservedPath(later, path: "owner.*.zipCode.digits")
        #expect(reports.elements.isEmpty)
        later.owner = User(name: "Bob", address: Address(zipCode: "2"))
        #expect(laterPath.isActive)
        #expect(reports.elements.count == 1)
        #expect(reports.elements.first?.contains("digits") == true)
    }
}
