import HeraldTestSupport
import KeyPathBridge
import Testing

/// Seeded randomized model tests of dictionaries and sets: 10,000 random edits and batches,
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
}
