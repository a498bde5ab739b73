import HeraldTestSupport
import KeyPathBridge
import Messaging
import Testing

/// An element equal to another by `id` alone, so that an equal element can be another object.
final class AR3Item: Hashable, @unchecked Sendable {
    let id: Int
    @ObservableVar var title: String
    init(_ id: Int, _ title: String = "") {
        self.id = id
        self.title = title
    }
    static func == (lhs: AR3Item, rhs: AR3Item) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

final class AR3Model: @unchecked Sendable {
    let items: ObservableArray<Int> = []
    let objects: ObservableArray<AR3Item> = []
    let words: ObservableDictionary<String, String> = [:]
    @ObservableVar var anyList: ObservableArray<Any?> = [5]
}

/// Adversarial round 3: observable collections and their parts at the end of typed paths.
/// Each test is named after the expected behaviour and fails on HEAD (41355c2) and on 6e50191.
@Suite("Adversarial round 3")
struct AdversarialRound3Tests {

    // MARK: replaceAll(with:) compares objects with ==, not ===

    /// Docs/Collections.md: elements compare "with `==`, or `===` for objects". replaceAll
    /// returns early on `old != new` (Element's `==`), so objects equal by `==` but not
    /// identical are never stored: the array keeps the stale objects.
    @Test func replaceAllWithEqualButOtherObjectsStoresTheNewObjects() {
        let model = AR3Model()
        model.objects.append(AR3Item(1, "old"))
        let fresh = AR3Item(1, "fresh")
        model.objects.replaceAll(with: [fresh])
        #expect(model.objects[0] === fresh)
    }

    /// When other elements differ, the new contents are stored, but ArrayDiff links the `==`
    /// objects as "kept": the change omits them, so applying it to a mirror leaves the old
    /// object where the array now holds the new one.
    @Test func replaceAllChangeAppliedToAMirrorGivesTheSameObjects() {
        let model = AR3Model()
        let a = AR3Item(1)
        let b = AR3Item(2)
        model.objects.append(contentsOf: [a, b])
        var mirror = model.objects.elements
        let observer = TestObserver()
        observer.observe(model.objects) { change in change.apply(to: &mirror) }
        let b2 = AR3Item(2)  // == b, another object
        model.objects.replaceAll(with: [a, b2, AR3Item(3)])
        #expect(
            mirror.map(ObjectIdentifier.init) == model.objects.elements.map(ObjectIdentifier.init))
    }

    /// The consequence in paths: an every-element path keeps following the object that left
    /// and never follows the one that replaceAll put in.
    @Test func everyElementPathFollowsObjectsThatReplaceAllPutIn() {
        let model = AR3Model()
        let a = AR3Item(1, "a")
        let b = AR3Item(2, "b")
        model.objects.append(contentsOf: [a, b, AR3Item(3, "c")])
        let observer = TestObserver()
        let titles = Recording<String?>()
        observer.observe(
            model, PropertyPath(\AR3Model.objects).appendingEachElement().appending(\.$title)
        ) { titles.append($0) }
        let b2 = AR3Item(2, "b2")
        model.objects.replaceAll(with: [a, b2, AR3Item(4, "d")])
        b.title = "old b changed"  // b left the array: nothing
        b2.title = "new b changed"
        #expect(titles.elements == ["new b changed"])
    }

    // MARK: a dictionary that stops being observed

    /// Docs/KeyPathBridge.md: "if a property along the path merely stops being observed …, the
    /// path observes it again". An array's parts do. A dictionary's key paths are fed by one
    /// observation of the dictionary (the dispatcher, no receiver): `stopBeingObserved()` ends
    /// it silently, `dispatcher` stays set, and every key path — also those started later — is
    /// deaf for good.
    @Test func aKeyPathObservesTheDictionaryAgainAfterItStopsBeingObserved() throws {
        let model = AR3Model()
        let observer = TestObserver()
        let typed = Recording<String?>()
        observer.observe(model, PropertyPath(\AR3Model.words).appendingValue(forKey: "k")) {
            typed.append($0)
        }
        let untyped = Recording<Any?>()
        try observer.observe(model, path: "words.k") { untyped.append($0) }
        let counts = Recording<Int?>()
        observer.observe(model, PropertyPath(\AR3Model.items).appendingCount()) {
            counts.append($0)
        }
        model.words["k"] = "a"

        model.words.stopBeingObserved()
        model.items.stopBeingObserved()
        model.words["k"] = "b"
        model.items.append(1)
        let later = Recording<String?>()
        observer.observe(model, PropertyPath(\AR3Model.words).appendingValue(forKey: "other")) {
            later.append($0)
        }
        model.words["other"] = "c"

        #expect(counts.elements == [1])  // holds: the array's part is observed again
        #expect(typed.elements == ["a", "b"])
        #expect(untyped.count == 2)
        #expect(later.elements == ["c"])
    }

    /// The Inspector names the sites of a dictionary's live key observations: not Herald's own
    /// dispatcher (which the dictionary's `observationSites` lists), not a stopped observation.
    @Test func theInspectorNamesTheSitesOfADictionarysLiveKeyObservations() {
        let model = AR3Model()
        let observer = TestObserver()
        let first = observer.observe(
            model, PropertyPath(\AR3Model.words).appendingValue(forKey: "a")
        ) { _ in }
        let secondLine = UInt32(#line) + 1
        observer.observe(model, PropertyPath(\AR3Model.words).appendingValue(forKey: "b")) { _ in }
        first.stop()
        let words = Inspector(model).properties.first { $0.name == "words" }
        #expect(words?.observationSites.map(\.line) == [secondLine])
    }

    // MARK: object-following element, array no longer observed

    /// When the array stops being observed, an object-following element's position is lost
    /// (only its observation followed it): the part is unreachable for good, as when the
    /// element leaves. (Observed again at its starting index, it would be another element.)
    @Test func anObjectFollowingElementIsLostWhenTheArrayStopsBeingObserved() {
        let model = AR3Model()
        model.items.append(contentsOf: [10, 11, 12])
        let observer = TestObserver()
        let values = Recording<Int?>()
        let path = observer.observe(
            model, PropertyPath(\AR3Model.items).appendingElement(startingAt: 1)
        ) { values.append($0) }
        model.items.insert(9, at: 0)  // 11 moves to index 2: nothing
        model.items.stopBeingObserved()
        #expect(path.value == nil)
        model.items.remove(at: 2)  // 11 leaves: nothing more
        model.items.insert(11, at: 1)
        #expect(values.elements == [nil])
    }

    // MARK: Optional<Any> ends

    /// Typed paths to `Any` compare what the values hold, as string paths do (a `Var<Any>` end
    /// takes the engine's way for that reason); a typed path to `Any?` compares by
    /// `ChangeRule<Any?>` (every value is a change): a replacement or re-wiring to an equal
    /// value sends Update(5, 5) on the typed path and nothing on the string path.
    @Test func optionalAnyElementsTypedAndStringAgreeOnEqualValues() throws {
        let model = AR3Model()
        let observer = TestObserver()
        let typed = Recording<Update<Any??>>()
        let path = ObservedPath(model, PropertyPath(\AR3Model.$anyList).appendingElement(at: 0))
        observer.observe(path) { typed.append($0) }
        let untyped = Recording<Any?>()
        try observer.observe(model, path: "anyList.#0") { untyped.append($0) }
        model.anyList = [5]  // another array, an equal end value
        model.anyList[0] = 5
        #expect(untyped.count == 0)
        #expect(typed.count == untyped.count)
    }
}
