import Foundation
import HeraldTestSupport
import KeyPathBridge
import Messaging
import Testing

/// A member equal to another by `id` alone (so an equal member can be another object).
final class Adv3Member: Hashable, @unchecked Sendable {
    let id: Int
    @ObservableVar var title: String
    init(_ id: Int, _ title: String) {
        self.id = id
        self.title = title
    }
    static func == (lhs: Adv3Member, rhs: Adv3Member) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// A value equal to another by `id` alone.
struct Adv3Tagged: Hashable, Sendable {
    let id: Int
    var payload: String
    static func == (lhs: Adv3Tagged, rhs: Adv3Tagged) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

final class Adv3Model: @unchecked Sendable {
    let words: ObservableDictionary<String, String> = [:]
    let scores: ObservableDictionary<Int, Int> = [:]
    let entries: ObservableDictionary<String, Adv3Member> = [:]
    let letters: ObservableDictionary<Character, Int> = [:]
    let tags: ObservableSet<String> = []
    let numbers: ObservableSet<Int> = []
    let members: ObservableSet<Adv3Member> = []
    @ObservableVar var replaceable: ObservableDictionary<String, Int> = [:]
}

/// Third round of adversarial tests: ObservableDictionary and ObservableSet, and their parts in
/// paths.
@Suite("Dictionaries and sets, adversarial")
struct CollectionAdversarialTests {

    // MARK: Keys of string paths

    /// Docs/Collections.md: "A key of a string path is the text itself for `String` keys". The
    /// grammar reads `007` as the object-following index 7, and the dictionary turns the index
    /// back into text with `String(index)`: the path observes the key "7", not "007".
    @Test func aStringKeyOfDigitsWithLeadingZerosIsTheTextItself() throws {
        let model = Adv3Model()
        let values = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(model, path: "words.007") { values.append($0 as? String) }

        model.words["7"] = "seven"  // another key: nothing
        model.words["007"] = "bond"

        #expect(values.elements == ["bond"])
    }

    /// The same for a set of strings: `tags.007` is whether "007" is a member.
    @Test func aStringMemberOfDigitsWithLeadingZerosIsTheTextItself() throws {
        let model = Adv3Model()
        let values = Recording<Bool?>()
        let observer = TestObserver()
        try observer.observe(model, path: "tags.007") { values.append($0 as? Bool) }

        model.tags.insert("7")  // another member: nothing
        #expect(values.elements.isEmpty)
        model.tags.insert("007")
        #expect(values.elements == [true])
    }

    /// Bad input must not crash: `Character` is `LosslessStringConvertible`, but its
    /// `init(_:)` traps on text of more than one character instead of returning nil, and
    /// `key(_:as:on:path:)` calls it for the component text. Expected: `unknownProperty`.
    @Test func aKeyTextThatIsNoCharacterIsAnErrorNotACrash() {
        let model = Adv3Model()
        #expect(throws: PathError.self) { try ObservedPath(model, path: "letters.ab") }
        #expect(throws: Never.self) { try ObservedPath(model, path: "letters.a") }
    }

    // MARK: SetAlgebra semantics

    /// `update(with:)` says "Inserts `member`, replacing an equal one" (SetAlgebra: the new
    /// member replaces the existing one). It runs as a batch whose commit sees no difference
    /// by `==` and so keeps the old contents: the old member stays.
    @Test func updateWithReplacesTheEqualMember() {
        let set = ObservableSet<Adv3Tagged>()
        set.insert(Adv3Tagged(id: 1, payload: "old"))

        let replaced = set.update(with: Adv3Tagged(id: 1, payload: "new"))

        #expect(replaced?.payload == "old")
        #expect(set.elements.first?.payload == "new")
        // And a later insert of an equal member reports the one there now.
        #expect(set.insert(Adv3Tagged(id: 1, payload: "probe")).memberAfterInsert.payload == "new")
    }

    /// `remove(_:)` of a member equal to one in the set: `Set` returns the member that was in
    /// the set, and the change's `removed` must hold that member (it is the one that left).
    /// `edit(removing:)` records the argument instead.
    @Test func removingAnEqualMemberReportsTheMemberThatWasThere() {
        let set = ObservableSet<Adv3Member>()
        let stored = Adv3Member(1, "stored")
        set.insert(stored)
        let removed = Recording<Adv3Member>()
        let observer = TestObserver()
        observer.observe(set) { change in
            for member in change.removed { removed.append(member) }
        }

        let returned = set.remove(Adv3Member(1, "proxy"))

        #expect(returned === stored)
        #expect(removed.elements.count == 1)
        #expect(removed.elements.first === stored)
    }

    // MARK: Every member in a path

    /// A member removed through an equal value (`remove`, `subtract`) leaves the set, so its
    /// later changes must not be delivered and the path becomes unreachable. The change names
    /// the argument, not the member, so the fan-out looks up the wrong object and keeps the
    /// branch of the member that left.
    @Test func aMemberRemovedThroughAnEqualValueIsNoLongerFollowed() throws {
        let model = Adv3Model()
        let member = Adv3Member(1, "a")
        model.members.insert(member)
        let titles = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(model, path: "members.*.title") { titles.append($0 as? String) }

        model.members.remove(Adv3Member(1, "proxy"))
        member.title = "changed after leaving"

        #expect(model.members.isEmpty)
        #expect(titles.elements == [nil])  // unreachable once no member is there
    }

    /// A batch that replaces a member by an equal object (`update(with:)`) and changes
    /// something else commits the new contents, but the change (computed with `==`) does not
    /// say the old object left and the new one joined: the fan-out keeps following the object
    /// that is no longer a member and never follows the one that is.
    @Test func aMemberReplacedByAnEqualObjectInABatchIsTheOneFollowed() throws {
        let model = Adv3Model()
        let old = Adv3Member(1, "old")
        model.members.insert(old)
        let titles = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(model, path: "members.*.title") { titles.append($0 as? String) }

        let new = Adv3Member(1, "new")
        model.members.mutate { members in
            members.update(with: new)
            members.insert(Adv3Member(2, "other"))
        }
        #expect(model.members.elements.contains { $0 === new })

        old.title = "old, no longer a member"  // must not be delivered
        new.title = "new, a member"  // must be delivered

        #expect(titles.elements == ["new, a member"])
    }

    // MARK: Bad input

    /// A path cannot go on from a value that is not an object: `name.count` on a `String`
    /// property is `PathError.notAnObject`. A set member is a `Bool` and an `Int`-valued key is
    /// an `Int`, yet paths that go on from them are accepted and silently never reachable.
    @Test func aPathThatGoesOnFromAMemberOrAPlainValueIsAnError() {
        let model = Adv3Model()
        model.tags.insert("swift")
        model.scores[3] = 30
        #expect(throws: PathError.self) { try ObservedPath(model, path: "tags.swift.count") }
        #expect(throws: PathError.self) { try ObservedPath(model, path: "scores.3.count") }
    }

    // MARK: Codable

    /// "Codable as the plain dictionary": the plain dictionary's keys are not touched by a
    /// key strategy (JSONEncoder special-cases `[String: …]`), but `elements.encode(to:)`
    /// from inside `encode(to:)` goes through a keyed container, which converts them.
    @Test func withAKeyStrategyItEncodesAndDecodesAsThePlainDictionary() throws {
        let plain = ["someKey": 1]
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        #expect(
            String(decoding: try encoder.encode(ObservableDictionary(plain)), as: UTF8.self)
                == String(decoding: try encoder.encode(plain), as: UTF8.self))

        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let data = Data(#"{"some_key":1}"#.utf8)
        #expect(
            try decoder.decode(ObservableDictionary<String, Int>.self, from: data).elements
                == decoder.decode([String: Int].self, from: data))
    }
}
