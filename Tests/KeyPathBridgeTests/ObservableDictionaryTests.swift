import Foundation
import HeraldTestSupport
import KeyPathBridge
import Testing

final class Glossary {
    let words: ObservableDictionary<String, String> = [:]
    let entries: ObservableDictionary<String, Todo> = [:]
    let scores: ObservableDictionary<Int, Int> = [:]
}

@Suite("Observable dictionaries")
struct ObservableDictionaryTests {
    @Test func eachMutationSendsWhatHappenedToEachKey() {
        let settings: ObservableDictionary = ["theme": "dark"]
        let changes = Recording<[String: KeyChange<String>]>()
        let observer = TestObserver()
        observer.observe(settings) { changes.append($0.keys) }

        settings["font"] = "Menlo"
        settings["theme"] = "dark"  // the same: nothing
        settings["theme"] = "light"
        #expect(settings.updateValue("Monaco", forKey: "font") == "Menlo")
        #expect(settings.removeValue(forKey: "font") == "Monaco")
        #expect(settings.removeValue(forKey: "absent") == nil)  // nothing
        settings.merge(["a": "1", "theme": "light"]) { _, new in new }

        #expect(
            changes.elements == [
                ["font": .inserted("Menlo")],
                ["theme": .updated(old: "dark", new: "light")],
                ["font": .updated(old: "Menlo", new: "Monaco")],
                ["font": .removed("Monaco")],
                ["a": .inserted("1")],
            ])
    }

    @Test func aBatchSendsOneChangeAndKeysThatEndAsTheyBeganAreNotInIt() {
        let settings: ObservableDictionary = ["theme": "dark", "font": "Menlo"]
        let editor = Author("editor")
        let received = Recording<(DictionaryChange<String, String>, Bool)>()
        let observer = TestObserver()
        observer.observe(settings) { change, author in received.append((change, author === editor))
        }

        settings.mutate(as: editor) { settings in
            settings["theme"] = "light"
            settings["font"] = nil
            settings["font"] = "Menlo"  // back as it began
            settings["new"] = "1"
        }

        #expect(received.count == 1)
        #expect(
            received.elements.first?.0.keys == [
                "theme": .updated(old: "dark", new: "light"), "new": .inserted("1"),
            ])
        #expect(received.elements.first?.1 == true)
        #expect(received.elements.first?.0.newCount == 3)
    }

    @Test func applyingEveryChangeToAMirrorGivesTheContents() {
        var random = SeededGenerator(seed: 7)
        let dictionary = ObservableDictionary<Int, Int>()
        var mirror: [Int: Int] = [:]
        let observer = TestObserver()
        let lock = NSLockLike()
        observer.observe(dictionary) { change in lock.withLock { change.apply(to: &mirror) } }
        for step in 0..<10_000 {
            let key = Int.random(in: 0..<50, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: dictionary[key] = step % 5
            case 1: dictionary.removeValue(forKey: key)
            case 2:
                dictionary.mutate {
                    $0[key] = nil
                    $0[key + 1] = step % 3
                }
            default: dictionary.updateValue(step % 7, forKey: key)
            }
        }
        #expect(lock.withLock { mirror } == dictionary.elements)
    }

    @Test func itIsAPlainJSONObjectWhenEncoded() throws {
        let dictionary: ObservableDictionary = ["a": 1]
        let data = try JSONEncoder().encode(dictionary)
        #expect(String(decoding: data, as: UTF8.self) == #"{"a":1}"#)
        #expect(
            try JSONDecoder().decode(ObservableDictionary<String, Int>.self, from: data)
                == dictionary)
        #expect(Dictionary(uniqueKeysWithValues: dictionary.map { ($0.key, $0.value) }) == ["a": 1])
    }
}

@Suite("Paths into observable dictionaries")
struct DictionaryPathTests {
    /// EBN's rule: a key may be absent; it fires when the key is added, when its value changes,
    /// and on removal only if it was there.
    @Test func aKeyFiresOnAddChangeAndRemovalOnlyIfPresent() throws {
        let glossary = Glossary()
        let values = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(glossary, path: "words.steampunk") { values.append($0 as? String) }

        glossary.words["other"] = "x"  // another key: nothing
        glossary.words["steampunk"] = "retro-futurism"
        glossary.words["steampunk"] = "retro-futurism"  // the same: nothing
        glossary.words["steampunk"] = "gears"
        glossary.words["steampunk"] = nil
        glossary.words.removeValue(forKey: "steampunk")  // absent: nothing

        #expect(values.elements == ["retro-futurism", "gears", nil])
    }

    @Test func aPathGoesOnThroughAKeysValue() {
        let glossary = Glossary()
        let titles = Recording<String?>()
        let observer = TestObserver()
        observer.observe(
            glossary,
            PropertyPath(\Glossary.entries).appendingValue(forKey: "a").appending(\.$title)
        ) { titles.append($0) }

        let todo = Todo("first")
        glossary.entries["a"] = todo
        todo.title = "second"
        glossary.entries["a"] = nil

        #expect(titles.elements == ["first", "second", nil])
    }

    @Test func aNumericKeyAndCountAndEveryValue() throws {
        let glossary = Glossary()
        let observer = TestObserver()
        let scores = Recording<Int?>()
        let counts = Recording<Int?>()
        let titles = Recording<String?>()
        try observer.observe(glossary, path: "scores.3") { scores.append($0 as? Int) }
        observer.observe(glossary, PropertyPath(\Glossary.scores).appendingCount()) {
            counts.append($0)
        }
        try observer.observe(glossary, path: "entries.*.title") { titles.append($0 as? String) }

        glossary.scores[3] = 30
        glossary.scores[3] = 31
        glossary.scores[4] = 40
        let todo = Todo("a")
        glossary.entries["x"] = todo
        todo.title = "b"
        glossary.entries["x"] = nil
        todo.title = "c"  // left: not followed

        #expect(scores.elements == [30, 31])
        #expect(counts.elements == [1, 2])
        // Reachable once a value is there, unreachable once none is.
        #expect(titles.elements == ["a", "b", nil])
    }

    /// An observation of an absent key that stops leaves nothing behind.
    @Test func absentKeyObservationsThatStopLeaveNothingBehind() throws {
        let glossary = Glossary()
        for index in 0..<10_000 {
            let path = try ObservedPath(glossary, path: "words.absent\(index)")
            #expect(path.value == nil)
        }
        #expect(glossary.words.observationCount == 0)
        #expect(glossary.words.elements.isEmpty)
    }

    @Test func aBindingWritesAKey() {
        let glossary = Glossary()
        let source = Node()
        source.value.value = 5
        let binding = bind(
            source, PropertyPath(\Node.value),
            to: glossary, PropertyPath(\Glossary.scores).appendingValue(forKey: 1)
        ) { $0 }
        #expect(glossary.scores[1] == 5)
        source.value.value = 6
        #expect(glossary.scores[1] == 6)
        _ = binding
    }

    @Test func aKeyOfTheWrongTypeIsAnError() {
        let glossary = Glossary()
        #expect(throws: PathError.self) { try ObservedPath(glossary, path: "scores.x") }
        #expect(throws: PathError.self) { try ObservedPath(glossary, path: "words.#1") }
    }
}

final class Shelf {
    @ObservableVar var words: ObservableDictionary<String, Int> = [:]
}

extension DictionaryPathTests {
    /// The observations of single keys are on messengers of their own, fed by one observation
    /// of the dictionary: a mutation reaches only the observers of the keys it changed.
    @Test func keyObservationsAreOneObservationOfTheDictionary() throws {
        let glossary = Glossary()
        let calls = Recording<Int>()
        let observer = TestObserver()
        for key in 0..<100 {
            observer.observe(glossary, PropertyPath(\Glossary.scores).appendingValue(forKey: key)) {
                _ in calls.append(key)
            }
        }
        #expect(glossary.scores.observationCount == 1)

        glossary.scores[7] = 1
        glossary.scores[500] = 1  // not observed

        #expect(calls.elements == [7])
        observer.stopObserving(glossary)
        #expect(glossary.scores.observationCount == 0)
    }

    /// A dictionary that is replaced lets its key observations go, and is freed.
    @Test func aReplacedDictionaryIsFreedWithItsKeyObservations() {
        let shelf = Shelf()
        weak let old = shelf.words
        let values = Recording<Int?>()
        let observer = TestObserver()
        observer.observe(shelf, PropertyPath(\Shelf.$words).appendingValue(forKey: "a")) {
            values.append($0)
        }
        shelf.words["a"] = 1
        shelf.words = ["a": 2]
        shelf.words["a"] = 3

        #expect(values.elements == [1, 2, 3])
        #expect(old == nil)
    }
}

@Suite("Dictionary key concurrency")
struct DictionaryKeyConcurrencyTests {
    /// Key observations that start while another thread keeps changing the key never see an
    /// older value after a newer one (a change already in the starting value is dropped).
    @Test func aKeyObservationStartingDuringChangesNeverGoesBack() {
        let glossary = Glossary()
        glossary.scores[1] = 0
        let backwards = Recording<String>()
        let box = UncheckedBox(glossary)
        concurrently(threads: 2) { thread in
            if thread == 0 {
                for value in 1...20_000 { box.value.scores[1] = value }
            } else {
                for _ in 0..<200 {
                    let path = ObservedPath(
                        box.value, PropertyPath(\Glossary.scores).appendingValue(forKey: 1))
                    let lock = NSLockLike()
                    nonisolated(unsafe) var last = path.value ?? 0
                    let observer = TestObserver()
                    observer.observe(path) { update in
                        lock.withLock {
                            guard let new = update.new else { return }
                            if new < last { backwards.append("\(last) → \(new)") }
                            last = new
                        }
                    }
                    withExtendedLifetime(path) {}
                }
            }
        }
        #expect(backwards.elements.isEmpty)
        #expect(glossary.scores.observationCount == 0)
    }
}
