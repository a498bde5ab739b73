import Foundation
import HeraldTestSupport
import KeyPathBridge
import Messaging
import Testing

final class AnyBag {
    let anything = Var<Any>(1)
}

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

    /// Every form that takes a path as text checks it with the same resolver: the same bad
    /// string throws the same error from each, and observes nothing.
    @Test(arguments: ["currentUser.nmae", "currentUser.address.#0", "currentUser..name"])
    func aBadStringPathThrowsTheSameErrorFromEveryForm(text: String) throws {
        let cache = UserCache()
        cache.currentUser = User(name: "Ann", address: Address(zipCode: "1"))
        let observer = TestObserver()
        let coalescer = Coalescer(scheduler: TestMessageScheduler())
        var errors: [PathError] = []
        func record(_ form: () throws(PathError) -> Void) {
            do throws(PathError) { try form() } catch { errors.append(error) }
        }

        record { () throws(PathError) in _ = try ObservedPath(cache, path: text) }
        record { () throws(PathError) in try observer.observe(cache, path: text) { _ in } }
        record { () throws(PathError) in try observer.observeUpdates(cache, path: text) { _ in } }
        record { () throws(PathError) in
            try observer.observeCoalesced(cache, paths: "currentUser", text, in: coalescer) {
                _, _ in
            }
        }

        #expect(errors.count == 4)
        #expect(errors.allSatisfy { $0 == errors[0] })
        #expect(!observer.isObserving(cache))
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

    // Direct end-change path compares with Variable<Any>'s rule, not the end type's
    //    held-value rule that the engine path (and string paths) use.
    @Test func typedPathToAVarOfAnyDoesNotFireForAnEqualValue() throws {
        let bag = AnyBag()
        let typed = Recording<Any?>()
        let string = Recording<Any?>()
        let observer = TestObserver()
        observer.observe(bag, \.anything) { typed.append($0) }
        try observer.observe(bag, path: "anything") { string.append($0) }
        bag.anything.value = 1  // equal value: the Var itself sends (Any has no ==)
        #expect(string.count == 0)
        #expect(typed.count == 0)  // once 1: the direct path used the Var's rule
    }

    /// Typed paths to `Any` compare what the values hold, as string paths do (a `Var<Any>` end
    /// takes the engine's way for that reason); a typed path to `Any?` compares by
    /// `ChangeRule<Any?>` (every value is a change): a replacement or re-wiring to an equal
    /// value sends Update(5, 5) on the typed path and nothing on the string path.
    @Test func optionalAnyElementsTypedAndStringAgreeOnEqualValues() throws {
        let model = CollectionsModel()
        let observer = TestObserver()
        let typed = Recording<Update<Any??>>()
        let path = ObservedPath(
            model, PropertyPath(\CollectionsModel.$anyList).appendingElement(at: 0))
        observer.observe(path) { typed.append($0) }
        let untyped = Recording<Any?>()
        try observer.observe(model, path: "anyList.#0") { untyped.append($0) }
        model.anyList = [5]  // another array, an equal end value
        model.anyList[0] = 5
        #expect(untyped.count == 0)
        #expect(typed.count == untyped.count)
    }

    /// 5d7b259 makes typed paths to `Any`/`Any?` compare what the values hold, as string
    /// paths do ("String paths compare end values exactly as typed paths do"); a typed path
    /// to another existential (`(any CustomStringConvertible)?`, also `any Equatable`) still
    /// takes its type's rule, which counts every value as a change: setting an equal value
    /// fires the typed path and not the string path.
    @Test func typedAndStringPathsToAnExistentialAgreeOnAnEqualValue() throws {
        let model = CollectionsModel()
        let observer = TestObserver()
        let typed = Recording<Bool>()
        observer.observe(model, PropertyPath(\CollectionsModel.$described)) { _ in
            typed.append(true)
        }
        let untyped = Recording<Bool>()
        try observer.observe(model, path: "described") { _ in untyped.append(true) }
        model.described = 5
        #expect(untyped.count == 0)  // holds
        #expect(typed.count == untyped.count)
    }

    /// A path cannot go on from a value that is not an object: `name.count` on a `String`
    /// property is `PathError.notAnObject`. A set member is a `Bool` and an `Int`-valued key is
    /// an `Int`, yet paths that go on from them are accepted and silently never reachable.
    @Test func aPathThatGoesOnFromAMemberOrAPlainValueIsAnError() {
        let model = KeyedCollections()
        model.tags.insert("swift")
        model.scores[3] = 30
        #expect(throws: PathError.self) { try ObservedPath(model, path: "tags.swift.count") }
        #expect(throws: PathError.self) { try ObservedPath(model, path: "scores.3.count") }
    }

    /// An array element that is not an object cannot be gone through either, by index or by
    /// object: thrown when the path is made, as for a dictionary's value.
    @Test(arguments: ["numbers.#1.x", "numbers.1.x"])
    func aPathThatGoesOnFromAnArrayElementThatIsNoObjectThrows(text: String) {
        let list = TodoList()
        list.numbers.append(contentsOf: [1, 2])
        let component = String(text.split(separator: ".")[1])
        #expect(throws: PathError.notAnObject(component, type: "Int", path: text)) {
            try ObservedPath(list, path: text)
        }
        #expect(list.numbers.observationCount == 0)
    }

    /// A value that is no object, met only after the path was made (a nil that becomes a
    /// number, an index the array reaches later), is reported through `PathDiagnostics` then;
    /// the rest of the path is unreachable.
    @Test func aValueThatIsNoObjectMetLaterIsReported() throws {
        final class Slot {
            @ObservableVar var maybeNumber: Int?
            let numbers: ObservableArray<Int> = []
        }
        let reports = Recording<PathError>()
        PathDiagnostics.setHandler { reports.append($0) }
        defer { PathDiagnostics.setHandler(nil) }
        let slot = Slot()
        let optional = try ObservedPath(slot, path: "maybeNumber.x")
        let element = try ObservedPath(slot, path: "numbers.#1.x")
        #expect(reports.elements.isEmpty)

        slot.maybeNumber = 5
        slot.numbers.append(contentsOf: [1, 2])

        #expect(
            reports.elements == [
                .notAnObject("maybeNumber", type: "Int", path: "maybeNumber.x"),
                .notAnObject("#1", type: "Int", path: "numbers.#1.x"),
            ])
        #expect(optional.value == nil && element.value == nil)
        #expect(optional.isActive && element.isActive)
    }

    /// A misfit met later is reported when it is met, not again at every change while it
    /// lasts: a `maybeNumber` that counts up under `maybeNumber.x` would write a line to
    /// standard error per change (the default handler) on the property's hot path.
    @Test func aValueThatIsNoObjectIsReportedOnceWhileItStaysOne() throws {
        final class Counter {
            @ObservableVar var maybeNumber: Int?
        }
        let reports = Recording<PathError>()
        PathDiagnostics.setHandler { reports.append($0) }
        defer { PathDiagnostics.setHandler(nil) }
        let counter = Counter()
        let path = try ObservedPath(counter, path: "maybeNumber.x")

        for number in 1...3 { counter.maybeNumber = number }

        #expect(
            reports.elements == [.notAnObject("maybeNumber", type: "Int", path: "maybeNumber.x")])
        withExtendedLifetime(path) {}
    }

    /// A name after a wildcard through a collection that no element has (a typo) is an error,
    /// as after a wildcard over properties: thrown when elements are there as the path is
    /// made, reported once when the first element that lacks it joins later.
    @Test(arguments: ["list.*.titel", "byName.*.titel"])
    func aNameNoElementHasAfterAWildcardThrows(text: String) {
        final class Shelf {
            let list: ObservableArray<Todo> = [Todo("a")]
            let byName: ObservableDictionary<String, Todo> = ["a": Todo("a")]
        }
        let shelf = Shelf()
        #expect {
            try ObservedPath(shelf, path: text)
        } throws: { error in
            guard case .unknownProperty("titel", type: "Todo", _, _) = error as? PathError
            else { return false }
            return true
        }
    }

    @Test func aNameNoElementHasIsReportedOnceWhenTheFirstElementJoins() throws {
        let reports = Recording<PathError>()
        PathDiagnostics.setHandler { reports.append($0) }
        defer { PathDiagnostics.setHandler(nil) }
        let list = TodoList()
        let path = try ObservedPath(list, path: "items.*.titel")
        #expect(reports.elements.isEmpty)  // no element yet: nothing to tell

        list.items.append(Todo("a"))
        list.items.append(Todo("b"))

        #expect(reports.count == 1)
        #expect(reports.elements.first?.description.contains("titel") == true)
        withExtendedLifetime(path) {}
    }

    // A negative object-following index trapped inside the array's lock; it is an error.
    @Test func aNegativeObjectFollowingIndexIsAnErrorNotACrash() {
        let reports = Recording<PathError>()
        PathDiagnostics.setHandler { reports.append($0) }
        defer { PathDiagnostics.setHandler(nil) }
        let list = TodoList()
        list.numbers.append(1)
        let path = ObservedPath(
            list, PropertyPath(\TodoList.numbers).appendingElement(startingAt: -1))
        #expect(path.value == nil)
        #expect(reports.elements == [.indexOutOfRange(-1, count: 1, path: "-1")])
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
