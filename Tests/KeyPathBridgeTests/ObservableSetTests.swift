import Foundation
import HeraldTestSupport
import KeyPathBridge
import Testing

final class Post {
    let tags: ObservableSet<String> = []
    let numbers: ObservableSet<Int> = []
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

        #expect(names.elements == ["Annie", "Robert"])
        #expect(!bob.$name.isObserved)
    }
}
