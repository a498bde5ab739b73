import HeraldTestSupport
import KeyPathBridge
import Testing

/// EBN's rule for wildcards through collections: a path that becomes reachable or unreachable
/// has changed, so each element that joins or leaves fires the observation, once per place it
/// joins or leaves (an element held twice counts twice); an element that a change moves (a
/// sort) neither joins nor leaves.
@Suite("Wildcards through collections: elements joining and leaving")
struct WildcardMembershipTests {
    final class Shelf {
        let list: ObservableArray<Todo> = []
        let byName: ObservableDictionary<String, Todo> = [:]
        let members: ObservableSet<Member> = []
    }

    /// What an observation of `path` from `shelf` delivers.
    private static func recording(_ shelf: Shelf, _ path: String) throws -> (
        Recording<String?>, TestObserver
    ) {
        let values = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(shelf, path: path) { values.append($0 as? String) }
        return (values, observer)
    }

    @Test func anElementJoiningOrLeavingANonEmptyArrayFiresOnce() throws {
        let shelf = Shelf()
        shelf.list.append(contentsOf: [Todo("a"), Todo("b")])
        let (titles, observer) = try Self.recording(shelf, "list.*.title")
        let c = Todo("c")

        shelf.list.insert(c, at: 1)  // joins
        shelf.list.remove(at: 0)  // a leaves
        c.title = "c2"

        #expect(titles.elements == ["c", nil, "c2"])
        withExtendedLifetime(observer) {}
    }

    @Test func anElementHeldTwiceFiresOncePerPlace() throws {
        let shelf = Shelf()
        shelf.list.append(Todo("a"))
        let (titles, observer) = try Self.recording(shelf, "list.*.title")
        let b = Todo("b")

        shelf.list.append(contentsOf: [b, b])  // two places join
        shelf.list.remove(at: 1)  // one place leaves
        shelf.list.remove(at: 1)  // the other leaves
        b.title = "gone"

        #expect(titles.elements == ["b", "b", nil, nil])
        withExtendedLifetime(observer) {}
    }

    @Test func reorderingAnArrayFiresNothing() throws {
        let shelf = Shelf()
        shelf.list.append(contentsOf: [Todo("c"), Todo("a"), Todo("b")])
        let (titles, observer) = try Self.recording(shelf, "list.*.title")

        shelf.list.sort { $0.title < $1.title }
        shelf.list.swapAt(0, 2)
        shelf.list.mutate { $0.append($0.removeFirst()) }

        #expect(titles.elements.isEmpty)
        withExtendedLifetime(observer) {}
    }

    /// A batch that adds k elements fires k times (one mutation, one update per element).
    @Test func aBatchFiresOncePerElementThatJoinsOrLeaves() throws {
        let shelf = Shelf()
        shelf.list.append(Todo("a"))
        let (titles, observer) = try Self.recording(shelf, "list.*.title")

        shelf.list.mutate {
            $0.append(Todo("b"))
            $0.append(Todo("c"))
            $0.remove(at: 0)
        }

        #expect(titles.elements == ["b", "c", nil])
        withExtendedLifetime(observer) {}
    }

    @Test func aValueJoiningOrLeavingANonEmptyDictionaryFiresOnce() throws {
        let shelf = Shelf()
        shelf.byName["a"] = Todo("a")
        let (titles, observer) = try Self.recording(shelf, "byName.*.title")
        let b = Todo("b")

        shelf.byName["b"] = b  // joins
        shelf.byName["a"] = nil  // leaves
        shelf.byName.mutate {  // moved to another key: neither joins nor leaves
            $0["b"] = nil
            $0["c"] = b
        }
        b.title = "b2"

        #expect(titles.elements == ["b", nil, "b2"])
        withExtendedLifetime(observer) {}
    }

    @Test func aMemberJoiningOrLeavingANonEmptySetFiresOnce() throws {
        let shelf = Shelf()
        let ann = Member("Ann")
        shelf.members.insert(ann)
        let (names, observer) = try Self.recording(shelf, "members.*.name")
        let bob = Member("Bob")

        shelf.members.insert(bob)  // joins
        shelf.members.insert(bob)  // already a member: nothing
        shelf.members.remove(ann)  // leaves
        ann.name = "gone"

        #expect(names.elements == ["Bob", nil])
        withExtendedLifetime(observer) {}
    }

    /// The first element joining an empty collection and the last leaving it fire as any other.
    @Test func theFirstJoiningAndTheLastLeavingFireAsAnyOther() throws {
        let shelf = Shelf()
        let (titles, observer) = try Self.recording(shelf, "list.*.title")

        shelf.list.append(Todo("a"))
        shelf.list.removeAll()

        #expect(titles.elements == ["a", nil])
        withExtendedLifetime(observer) {}
    }

    /// Reachability is per element: one whose rest of the path is unreachable (no address)
    /// neither becomes reachable as it joins nor unreachable as it leaves.
    @Test func anElementThatCannotReachTheEndFiresNothingAsItJoinsOrLeaves() throws {
        final class People {
            let users: ObservableArray<User> = []
        }
        let people = People()
        let zips = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(people, path: "users.*.address.zipCode") { zips.append($0 as? String) }

        let homeless = User(name: "Ann")
        people.users.append(homeless)
        people.users.append(User(name: "Bob", address: Address(zipCode: "1")))
        people.users.removeAll { $0 === homeless }
        homeless.address = Address(zipCode: "2")  // left: not followed

        #expect(zips.elements == ["1"])
        withExtendedLifetime(observer) {}
    }

    /// The typed forms follow the same rule.
    @Test func theTypedFormsFireAsTheStringForms() {
        let shelf = Shelf()
        let titles = Recording<String?>()
        let observer = TestObserver()
        observer.observe(
            shelf, PropertyPath(\Shelf.list).appendingEachElement().appending(\.$title)
        ) { titles.append($0) }
        observer.observe(
            shelf, PropertyPath(\Shelf.byName).appendingEachValue().appending(\.$title)
        ) { titles.append($0) }

        shelf.list.append(Todo("a"))
        shelf.byName["b"] = Todo("b")
        shelf.list.removeAll()
        shelf.byName.removeAll()

        #expect(titles.elements == ["a", "b", nil, nil])
    }
}
