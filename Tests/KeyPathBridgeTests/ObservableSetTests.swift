import Foundation
import HeraldTestSupport
import KeyPathBridge
import Messaging
import Testing

final class Post {
    let tags: ObservableSet<String> = []
    let numbers: ObservableSet<Int> = []
}

/// A value equal to another by `id` alone.
struct SameIDValue: Hashable, Sendable {
    let id: Int
    var payload: String
    static func == (lhs: SameIDValue, rhs: SameIDValue) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

@Suite("Observable sets")
struct ObservableSetTests {
    @Test func onlyRealInsertionsAndRemovalsAreSent() {
        let tags: ObservableSet = ["swift"]
        let changes = Recording<SetChange<String>>()
        let observer = TestObserver()
        observer.observe(tags) { changes.append($0) }

        #expect(tags.insert("linux").inserted)
        #expect(!tags.insert("swift").inserted)  // already there: nothing
        #expect(tags.remove("absent") == nil)  // nothing
        tags.formUnion(["a", "swift"])
        tags.subtract(["a", "b"])
        tags.mutate {
            $0.remove("linux")
            $0.insert("c")
        }

        #expect(
            changes.elements.map { [$0.inserted, $0.removed] } == [
                [["linux"], []], [["a"], []], [[], ["a"]], [["c"], ["linux"]],
            ])
        #expect(tags.elements == ["swift", "c"])
        #expect(changes.elements.last?.newCount == 2)
    }

    @Test func applyingEveryChangeToAMirrorGivesTheContents() {
        var random = SeededGenerator(seed: 11)
        let set = ObservableSet<Int>()
        var mirror: Set<Int> = []
        let observer = TestObserver()
        let lock = NSLockLike()
        observer.observe(set) { change in lock.withLock { change.apply(to: &mirror) } }
        for _ in 0..<10_000 {
            let member = Int.random(in: 0..<40, using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0: set.insert(member)
            case 1: set.remove(member)
            case 2: set.formSymmetricDifference(ObservableSet([member, member + 1]))
            case 3: set.removeAll { $0 % 7 == member % 7 }
            default: set.formUnion([member, member * 2])
            }
        }
        #expect(lock.withLock { mirror } == set.elements)
    }

    @Test func itIsASetAlgebraAndAPlainJSONArrayWhenEncoded() throws {
        let a: ObservableSet = [1, 2]
        let b: ObservableSet = [2, 3]
        #expect(a.union(b).elements == [1, 2, 3])
        #expect(a.intersection(b).elements == [2])
        #expect(a.isSubset(of: ObservableSet([1, 2, 3])))
        let data = try JSONEncoder().encode(ObservableSet([5]))
        #expect(String(decoding: data, as: UTF8.self) == "[5]")
        #expect(try JSONDecoder().decode(ObservableSet<Int>.self, from: data) == ObservableSet([5]))
    }

    /// `update(with:)` says "Inserts `member`, replacing an equal one" (SetAlgebra: the new
    /// member replaces the existing one). It runs as a batch whose commit sees no difference
    /// by `==` and so keeps the old contents: the old member stays.
    @Test func updateWithReplacesTheEqualMember() {
        let set = ObservableSet<SameIDValue>()
        set.insert(SameIDValue(id: 1, payload: "old"))

        let replaced = set.update(with: SameIDValue(id: 1, payload: "new"))

        #expect(replaced?.payload == "old")
        #expect(set.elements.first?.payload == "new")
        // And a later insert of an equal member reports the one there now.
        #expect(set.insert(SameIDValue(id: 1, payload: "probe")).memberAfterInsert.payload == "new")
    }

    /// `remove(_:)` of a member equal to one in the set: `Set` returns the member that was in
    /// the set, and the change's `removed` must hold that member (it is the one that left).
    /// `edit(removing:)` records the argument instead.
    @Test func removingAnEqualMemberReportsTheMemberThatWasThere() {
        let set = ObservableSet<SameIDItem>()
        let stored = SameIDItem(1, "stored")
        set.insert(stored)
        let removed = Recording<SameIDItem>()
        let observer = TestObserver()
        observer.observe(set) { change in
            for member in change.removed { removed.append(member) }
        }

        let returned = set.remove(SameIDItem(1, "proxy"))

        #expect(returned === stored)
        #expect(removed.elements.count == 1)
        #expect(removed.elements.first === stored)
    }
}

@Suite("Paths into observable sets")
struct SetPathTests {
    /// A member's observation fires only on a real insert or removal of that member.
    @Test func membershipFiresOnlyOnRealInsertsAndRemovals() throws {
        let post = Post()
        let tagged = Recording<Bool?>()
        let numbered = Recording<Bool?>()
        let observer = TestObserver()
        try observer.observe(post, path: "tags.swift") { tagged.append($0 as? Bool) }
        observer.observe(post, PropertyPath(\Post.numbers).appendingContains(3)) {
            numbered.append($0)
        }

        post.tags.insert("linux")  // another member
        post.tags.insert("swift")
        post.tags.insert("swift")  // already there
        post.tags.remove("swift")
        post.numbers.formUnion([3, 4])
        post.numbers.remove(3)

        #expect(tagged.elements == [true, false])
        #expect(numbered.elements == [true, false])
    }

    @Test func countAndAnyMutation() throws {
        let post = Post()
        let counts = Recording<Int?>()
        let changes = Recording<Int>()
        let observer = TestObserver()
        try observer.observe(post, path: "tags.count") { counts.append($0 as? Int) }
        observer.observe(post, PropertyPath(\Post.tags).appendingChanges()) { change in
            changes.append(change?.inserted.count ?? -1)
        }

        post.tags.formUnion(["a", "b"])
        post.tags.insert("a")  // nothing
        post.tags.removeAll()

        #expect(counts.elements == [2, 0])
        #expect(changes.elements == [2, 0])
    }

    /// The same for a set of strings: `tags.007` is whether "007" is a member.
    @Test func aStringMemberOfDigitsWithLeadingZerosIsTheTextItself() throws {
        let model = KeyedCollections()
        let values = Recording<Bool?>()
        let observer = TestObserver()
        try observer.observe(model, path: "tags.007") { values.append($0 as? Bool) }

        model.tags.insert("7")  // another member: nothing
        #expect(values.elements.isEmpty)
        model.tags.insert("007")
        #expect(values.elements == [true])
    }

    /// A member removed through an equal value (`remove`, `subtract`) leaves the set, so its
    /// later changes must not be delivered and the path becomes unreachable. The change names
    /// the argument, not the member, so the fan-out looks up the wrong object and keeps the
    /// branch of the member that left.
    @Test func aMemberRemovedThroughAnEqualValueIsNoLongerFollowed() throws {
        let model = KeyedCollections()
        let member = SameIDItem(1, "a")
        model.members.insert(member)
        let titles = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(model, path: "members.*.title") { titles.append($0 as? String) }

        model.members.remove(SameIDItem(1, "proxy"))
        member.title = "changed after leaving"

        #expect(model.members.isEmpty)
        #expect(titles.elements == [nil])  // unreachable once no member is there
    }

    /// A batch that replaces a member by an equal object (`update(with:)`) and changes
    /// something else: the fan-out follows the object that is a member now, not the one it
    /// replaced (the new one joins and the old one leaves, each firing once).
    @Test func aMemberReplacedByAnEqualObjectInABatchIsTheOneFollowed() throws {
        let model = KeyedCollections()
        let old = SameIDItem(1, "old")
        model.members.insert(old)
        let titles = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(model, path: "members.*.title") { titles.append($0 as? String) }

        let new = SameIDItem(1, "new")
        model.members.mutate { members in
            members.update(with: new)
            members.insert(SameIDItem(2, "other"))
        }
        #expect(model.members.elements.contains { $0 === new })

        old.title = "old, no longer a member"  // must not be delivered
        new.title = "new, a member"  // must be delivered

        // Both join (fired in the set's order), old leaves, then only new is followed.
        #expect(Set(titles.elements.prefix(2)) == ["new", "other"])
        #expect(Array(titles.elements.dropFirst(2)) == [nil, "new, a member"])
    }
}

/// A member compared by identity.
final class Member: Hashable {
    @ObservableVar var name: String

    init(_ name: String) {
        self.name = name
    }

    static func == (lhs: Member, rhs: Member) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

final class Club {
    let members: ObservableSet<Member> = []
}

extension SetPathTests {
    @Test func everyMemberIsFollowedWhileItIsInTheSet() {
        let club = Club()
        let ann = Member("Ann")
        club.members.insert(ann)
        let names = Recording<String?>()
        let observer = TestObserver()
        observer.observe(club, PropertyPath(\Club.members).appendingEachMember().appending(\.$name))
        {
            names.append($0)
        }

        ann.name = "Annie"
        let bob = Member("Bob")
        club.members.insert(bob)
        bob.name = "Robert"
        club.members.remove(bob)
        bob.name = "gone"

        #expect(names.elements == ["Annie", "Bob", "Robert", nil])  // bob joins, then leaves
        #expect(!bob.$name.isObserved)
    }
}
