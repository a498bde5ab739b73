import HeraldTestSupport
import KeyPathBridge
import Messaging
import Testing

/// An element equal to another by `id` alone, so that an equal element can be another object.
final class AR4Item: Hashable, @unchecked Sendable {
    let id: Int
    init(_ id: Int) { self.id = id }
    static func == (lhs: AR4Item, rhs: AR4Item) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

final class AR4Model: @unchecked Sendable {
    let words: ObservableDictionary<String, String> = [:]
    let items: ObservableArray<Int> = []
    let objects: ObservableArray<AR4Item> = []
    @ObservableVar var held: ObservableArray<Int> = []
    @ObservableVar var text = ""
    @ObservableVar var described: (any CustomStringConvertible)? = 5
}

final class AR4Holder: @unchecked Sendable {
    @ObservableVar var words: ObservableDictionary<String, String> = [:]
}

/// Adversarial round 4: the fixes of 1fcc2ca and 5d7b259 (dispatcher restart, lost
/// object-following elements, `Any?` ends, replaceAll by the array's rule, Inspector).
/// Each test is named after the expected behaviour and fails on HEAD (da10420).
@Suite("Adversarial round 4")
struct AdversarialRound4Tests {

    // MARK: the dictionary's dispatcher restart

    /// Docs/KeyPathBridge.md: a property that "refuses observers (ends them from its 0→1
    /// hook), is not observed again". The dispatcher's receiver restarts it each time it is
    /// ended from the dictionary's side, with no such check: restarting makes the dictionary
    /// observed (0→1), its hook ends the dispatcher, which is restarted… Uncapped, the first
    /// `observe` of a key never returns (the hook is called forever); here the hook gives up
    /// after 1,000 refusals.
    @Test func aDictionaryThatRefusesObserversIsNotObservedAgainAndAgain() {
        let model = AR4Model()
        let words = model.words
        let calls = Recording<Bool>()
        words.whenObservationStateChanges { isObserved in
            calls.append(isObserved)
            if isObserved, calls.count < 1_000 { words.stopBeingObserved() }
        }
        let observer = TestObserver()
        observer.observe(model, PropertyPath(\AR4Model.words).appendingValue(forKey: "k")) { _ in }
        #expect(calls.count <= 4)
    }

    /// The dispatcher passes on only "its own" changes (`change.origin ==
    /// ObjectIdentifier(self)`), each once (`version > dispatchedVersion`). An identifier is
    /// an address: a change kept from a dead dictionary and sent (public `send`) through a new
    /// one at the same address passes both checks and raises `dispatchedVersion` to the old
    /// dictionary's version; the new dictionary's next 50 changes then reach no key.
    @Test func aChangeOfADeadDictionaryDoesNotSilenceTheKeysOfOneAtTheSameAddress() throws {
        let holder = AR4Holder()
        let observer = TestObserver()
        let values = Recording<String?>()
        observer.observe(holder, PropertyPath(\AR4Holder.$words).appendingValue(forKey: "k")) {
            values.append($0)
        }
        var kept: DictionaryChange<String, String>?
        var dead: ObservableDictionary<String, String>? = [:]
        holder.words = dead!
        observer.observe(dead!) { kept = $0 }
        for index in 0..<50 { dead!["k"] = "\(index)" }
        let deadAddress = ObjectIdentifier(dead!)
        holder.words = [:]
        dead = nil  // freed
        var others: [ObservableDictionary<String, String>] = []
        var reused: ObservableDictionary<String, String>?
        for _ in 0..<100_000 {
            let candidate = ObservableDictionary<String, String>()
            if ObjectIdentifier(candidate) == deadAddress {
                reused = candidate
                break
            }
            others.append(candidate)
        }
        // At the dead one's address if the allocator reused it (it does here); else another.
        let words = reused ?? ObservableDictionary<String, String>()
        holder.words = words
        words.send(try #require(kept))
        words["k"] = "fresh"
        #expect(values.elements.last == "fresh")
    }

    // MARK: object-following elements

    /// The same doc: "it is followed through moves". replaceAll(with:) reports the element
    /// as a move (`batchUpdates.moves`), but its edits remove it and insert it elsewhere, and
    /// the object-following path takes the removal for the element leaving: unreachable for
    /// good, though it is still in the array.
    @Test func anObjectFollowingElementIsFollowedThroughAMoveByReplaceAll() {
        let model = AR4Model()
        let a = AR4Item(1)
        let b = AR4Item(2)
        let c = AR4Item(3)
        model.objects.append(contentsOf: [a, b, c])
        let observer = TestObserver()
        let moves = Recording<[ArrayBatchUpdates.Move]>()
        observer.observe(model.objects) { moves.append($0.batchUpdates.moves) }
        let path = ObservedPath(
            model, PropertyPath(\AR4Model.objects).appendingElement(startingAt: 2))
        let values = Recording<AR4Item?>()
        observer.observe(path) { values.append($0.new) }

        model.objects.replaceAll(with: [c, a, b])

        #expect(moves.elements == [[ArrayBatchUpdates.Move(from: 2, to: 0)]])  // holds
        #expect(values.count == 0)
        #expect(path.value === c)
    }

    // MARK: collection parts observed again

    /// Docs/KeyPathBridge.md: observing the same property again "sends nothing and tells no
    /// binding" (PathReattachTests checks it for a variable). A collection part's link has no
    /// identity, so the wiring takes the re-attached part for another end property and calls
    /// the binding's sync: a one-way binding overwrites the target's own value when the array
    /// merely stops being observed.
    @Test func aBindingDoesNotSyncAgainWhenItsIndexFollowingTargetIsObservedAgain() {
        let source = AR4Model()
        source.text = "7"
        let target = AR4Model()
        target.items.append(0)
        let binding = bind(
            source, PropertyPath(\AR4Model.$text),
            to: target, PropertyPath(\AR4Model.items).appendingElement(at: 0)
        ) { Int($0) ?? 0 }
        #expect(target.items[0] == 7)
        target.items[0] = 42  // one way: the source does not follow, the binding stays quiet

        target.items.stopBeingObserved()

        #expect(target.items[0] == 42)
        binding.unbind()
    }

    // MARK: ends whose type says nothing of their values

    /// 5d7b259 makes typed paths to `Any`/`Any?` compare what the values hold, as string
    /// paths do ("String paths compare end values exactly as typed paths do"); a typed path
    /// to another existential (`(any CustomStringConvertible)?`, also `any Equatable`) still
    /// takes its type's rule, which counts every value as a change: setting an equal value
    /// fires the typed path and not the string path.
    @Test func typedAndStringPathsToAnExistentialAgreeOnAnEqualValue() throws {
        let model = AR4Model()
        let observer = TestObserver()
        let typed = Recording<Bool>()
        observer.observe(model, PropertyPath(\AR4Model.$described)) { _ in typed.append(true) }
        let untyped = Recording<Bool>()
        try observer.observe(model, path: "described") { _ in untyped.append(true) }
        model.described = 5
        #expect(untyped.count == 0)  // holds
        #expect(typed.count == untyped.count)
    }

    // MARK: Inspector

    /// 354b2d3 leaves Herald's own dispatcher out of a dictionary's observations when the
    /// dictionary is a `let` property (`words: 1 observation`), but `Inspector(dictionary)`
    /// reports it as an observation of `self`, at a site inside Herald
    /// (`KeyPathBridge/ObservableDictionary+Paths.swift:0`): the same dictionary has one
    /// observer or two depending on where it is inspected from.
    @Test func theInspectorOfADictionaryDoesNotReportHeraldsDispatcherAsAnObservation() {
        let model = AR4Model()
        let observer = TestObserver()
        observer.observe(model, PropertyPath(\AR4Model.words).appendingValue(forKey: "k")) { _ in }
        #expect(Inspector(model).properties.first { $0.name == "words" }?.observationCount == 1)
        #expect(!Inspector(model.words).report.contains("ObservableDictionary+Paths.swift:0"))
    }
}
