import HeraldTestSupport
import KeyPathBridge
import Testing

/// Seeded randomized model tests of dictionaries and sets (and wildcards through every
/// collection kind, below): 10,000 random edits and batches,
/// mirrored on a plain Swift collection; after every message, applying it to the mirror gives
/// the collection's contents, and every key and membership observer (typed and string) has
/// received exactly what a brute-force model says must fire.
@Suite("Dictionaries and sets against a brute-force model")
struct CollectionModelTests {
    @Test func keyObserversFireExactlyWhenTheModelSays() throws {
        var random = SeededGenerator(seed: 17)
        let glossary = Glossary()
        let scores = glossary.scores
        let observer = TestObserver()
        var mirror: [Int: Int] = [:]
        var mirrorMatched = true
        observer.observe(scores) { change in
            change.apply(to: &mirror)
            mirrorMatched = mirrorMatched && mirror == scores.elements
        }
        let keys = Array(0..<8)
        var typed: [Int: Recording<Int?>] = [:]
        var untyped: [Int: Recording<Int?>] = [:]
        for key in keys {
            let typedRecord = Recording<Int?>()
            typed[key] = typedRecord
            observer.observe(glossary, PropertyPath(\Glossary.scores).appendingValue(forKey: key)) {
                typedRecord.append($0)
            }
            let untypedRecord = Recording<Int?>()
            untyped[key] = untypedRecord
            try observer.observe(glossary, path: "scores.\(key)") {
                untypedRecord.append($0 as? Int)
            }
        }
        var expected: [Int: [Int?]] = [:]
        for step in 0..<10_000 {
            let before = scores.elements
            let key = Int.random(in: 0..<12, using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0: scores[key] = step % 4
            case 1: scores.removeValue(forKey: key)
            case 2: scores.updateValue(step % 3, forKey: key)
            case 3:
                scores.mutate { batch in
                    batch[key] = nil
                    batch[(key + 1) % 12] = step % 5
                    batch[(key + 2) % 12] = batch[(key + 2) % 12]  // unchanged
                }
            default: scores.merge([key: step % 2, (key + 5) % 12: 1]) { old, _ in old }
            }
            let after = scores.elements
            for key in keys where before[key] != after[key] {
                expected[key, default: []].append(after[key])
            }
            // When each fires, step by step (records only grow: their values are compared at
            // the end).
            for key in keys {
                let count = expected[key]?.count ?? 0
                #expect(typed[key]?.count == count, "step \(step) key \(key)")
                #expect(untyped[key]?.count == count, "step \(step) key \(key)")
            }
        }
        for key in keys {
            #expect(typed[key]?.elements == expected[key, default: []])
            #expect(untyped[key]?.elements == expected[key, default: []])
        }
        #expect(mirrorMatched)
    }

    @Test func membershipObserversFireExactlyWhenTheModelSays() throws {
        var random = SeededGenerator(seed: 19)
        let post = Post()
        let numbers = post.numbers
        let observer = TestObserver()
        var mirror: Set<Int> = []
        var mirrorMatched = true
        observer.observe(numbers) { change in
            change.apply(to: &mirror)
            mirrorMatched = mirrorMatched && mirror == numbers.elements
        }
        let members = Array(0..<8)
        var typed: [Int: Recording<Bool?>] = [:]
        var untyped: [Int: Recording<Bool?>] = [:]
        for member in members {
            let typedRecord = Recording<Bool?>()
            typed[member] = typedRecord
            observer.observe(post, PropertyPath(\Post.numbers).appendingContains(member)) {
                typedRecord.append($0)
            }
            let untypedRecord = Recording<Bool?>()
            untyped[member] = untypedRecord
            try observer.observe(post, path: "numbers.\(member)") {
                untypedRecord.append($0 as? Bool)
            }
        }
        var expected: [Int: [Bool?]] = [:]
        for step in 0..<10_000 {
            let before = numbers.elements
            let member = Int.random(in: 0..<12, using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0: numbers.insert(member)
            case 1: numbers.remove(member)
            case 2: numbers.formSymmetricDifference(ObservableSet([member, (member + 3) % 12]))
            case 3: numbers.removeAll { $0 % 5 == step % 5 }
            default:
                numbers.mutate { set in
                    set.insert(member)
                    set.remove((member + 1) % 12)
                }
            }
            let after = numbers.elements
            for member in members where before.contains(member) != after.contains(member) {
                expected[member, default: []].append(after.contains(member))
            }
            for member in members {
                let count = expected[member]?.count ?? 0
                #expect(typed[member]?.count == count, "step \(step) member \(member)")
                #expect(untyped[member]?.count == count, "step \(step) member \(member)")
            }
        }
        for member in members {
            #expect(typed[member]?.elements == expected[member, default: []])
            #expect(untyped[member]?.elements == expected[member, default: []])
        }
        #expect(mirrorMatched)
    }

    /// The three shelves a wildcard goes through, over one pool of objects.
    final class WildcardShelf {
        let list: ObservableArray<Member> = []
        let byKey: ObservableDictionary<Int, Member> = [:]
        let members: ObservableSet<Member> = []
    }

    /// Wildcard paths (`list.*.name`, typed and string, and through a dictionary and a set)
    /// against a brute-force model, over 5,000 random edits, batches, sorts and name changes:
    /// after each step every observation has received, in some order, one update per place an
    /// object joined (its name) or left (nil), and one per change of a held object's name (the
    /// new name), nothing else, computed from scratch from the contents before and after.
    @Test(arguments: ["list", "byKey", "members"])
    func wildcardObserversFireExactlyWhenTheModelSays(collection: String) throws {
        var random = SeededGenerator(seed: 23)
        let shelf = WildcardShelf()
        let pool = (0..<6).map { Member("m\($0)") }
        let observer = TestObserver()
        let untyped = Recording<String?>()
        try observer.observe(shelf, path: "\(collection).*.name") { untyped.append($0 as? String) }
        let typed = Recording<String?>()
        switch collection {
        case "list":
            observer.observe(
                shelf, PropertyPath(\WildcardShelf.list).appendingEachElement().appending(\.$name)
            ) { typed.append($0) }
        case "byKey":
            observer.observe(
                shelf, PropertyPath(\WildcardShelf.byKey).appendingEachValue().appending(\.$name)
            ) { typed.append($0) }
        default:
            observer.observe(
                shelf,
                PropertyPath(\WildcardShelf.members).appendingEachMember().appending(\.$name)
            ) { typed.append($0) }
        }
        /// How many places hold each object now.
        func places() -> [ObjectIdentifier: Int] {
            let held: [Member] =
                switch collection {
                case "list": shelf.list.elements
                case "byKey": Array(shelf.byKey.elements.values)
                default: Array(shelf.members.elements)
                }
            return held.reduce(into: [:]) { $0[ObjectIdentifier($1), default: 0] += 1 }
        }
        func key(_ value: String?) -> String { value ?? "<unreachable>" }
        var delivered = 0
        for step in 0..<5_000 {
            let before = places()
            let member = pool[Int.random(in: 0..<pool.count, using: &random)]
            let other = pool[Int.random(in: 0..<pool.count, using: &random)]
            let slot = Int.random(in: 0..<4, using: &random)
            var renamed: Member?
            switch (collection, Int.random(in: 0..<6, using: &random)) {
            case (_, 0):
                member.name = "m\(step)"
                renamed = member
            case ("list", 1): shelf.list.append(member)
            case ("list", 2):
                if !shelf.list.isEmpty { shelf.list.remove(at: slot % shelf.list.count) }
            case ("list", 3): shelf.list.sort { $0.name < $1.name }
            case ("list", 4):
                if !shelf.list.isEmpty { shelf.list[slot % shelf.list.count] = member }
            case ("list", _):
                shelf.list.mutate {
                    $0.append(member)
                    $0.insert(other, at: 0)
                    if $0.count > 4 { $0.removeLast(2) }
                }
            case ("byKey", 1), ("byKey", 4): shelf.byKey[slot] = member
            case ("byKey", 2): shelf.byKey[slot] = nil
            case ("byKey", 3):
                shelf.byKey.mutate {
                    $0[slot] = nil
                    $0[(slot + 1) % 4] = other
                }
            case ("byKey", _):
                shelf.byKey.merge([slot: member, (slot + 2) % 4: other]) { _, new in new }
            case (_, 1), (_, 4): shelf.members.insert(member)
            case (_, 2): shelf.members.remove(member)
            case (_, 3): shelf.members.formSymmetricDifference(ObservableSet([member, other]))
            default:
                shelf.members.mutate {
                    $0.insert(member)
                    $0.remove(other)
                }
            }
            let after = places()
            var expected: [String] = []
            for candidate in pool {
                let id = ObjectIdentifier(candidate)
                let change = after[id, default: 0] - before[id, default: 0]
                let value = change > 0 ? candidate.name : nil
                expected += repeatElement(key(value), count: abs(change))
            }
            if let renamed, after[ObjectIdentifier(renamed), default: 0] > 0 {
                expected.append(key(renamed.name))
            }
            for record in [typed, untyped] {
                let new = record.elements.dropFirst(delivered).map(key)
                #expect(new.sorted() == expected.sorted(), "\(collection) step \(step)")
            }
            delivered += expected.count
            if typed.count != delivered || untyped.count != delivered { break }  // reported
        }
    }
}
