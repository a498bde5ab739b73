import Foundation
import HeraldTestSupport
import KeyPathBridge
import Messaging
import Testing

final class Glossary {
    let words: ObservableDictionary<String, String> = [:]
    let entries: ObservableDictionary<String, Todo> = [:]
    let scores: ObservableDictionary<Int, Int> = [:]
}

final class DictionaryHolder: @unchecked Sendable {
    @ObservableVar var words: ObservableDictionary<String, String> = [:]
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

    /// Docs/Collections.md: "A key of a string path is the text itself for `String` keys". The
    /// grammar reads `007` as the object-following index 7, and the dictionary turns the index
    /// back into text with `String(index)`: the path observes the key "7", not "007".
    @Test func aStringKeyOfDigitsWithLeadingZerosIsTheTextItself() throws {
        let model = KeyedCollections()
        let values = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(model, path: "words.007") { values.append($0 as? String) }

        model.words["7"] = "seven"  // another key: nothing
        model.words["007"] = "bond"

        #expect(values.elements == ["bond"])
    }

    /// Bad input must not crash: `Character` is `LosslessStringConvertible`, but its
    /// `init(_:)` traps on text of more than one character instead of returning nil, and
    /// `key(_:as:on:path:)` calls it for the component text. Expected: `unknownProperty`.
    @Test func aKeyTextThatIsNoCharacterIsAnErrorNotACrash() {
        let model = KeyedCollections()
        #expect(throws: PathError.self) { try ObservedPath(model, path: "letters.ab") }
        #expect(throws: Never.self) { try ObservedPath(model, path: "letters.a") }
    }

    /// Docs/KeyPathBridge.md: "if a property along the path merely stops being observed …, the
    /// path observes it again". An array's parts do. A dictionary's key paths are fed by one
    /// observation of the dictionary (the dispatcher, no receiver): `stopBeingObserved()` ends
    /// it silently, `dispatcher` stays set, and every key path — also those started later — is
    /// deaf for good.
    @Test func aKeyPathObservesTheDictionaryAgainAfterItStopsBeingObserved() throws {
        let model = CollectionsModel()
        let observer = TestObserver()
        let typed = Recording<String?>()
        observer.observe(model, PropertyPath(\CollectionsModel.words).appendingValue(forKey: "k")) {
            typed.append($0)
        }
        let untyped = Recording<Any?>()
        try observer.observe(model, path: "words.k") { untyped.append($0) }
        let counts = Recording<Int?>()
        observer.observe(model, PropertyPath(\CollectionsModel.items).appendingCount()) {
            counts.append($0)
        }
        model.words["k"] = "a"

        model.words.stopBeingObserved()
        model.items.stopBeingObserved()
        model.words["k"] = "b"
        model.items.append(1)
        let later = Recording<String?>()
        observer.observe(
            model, PropertyPath(\CollectionsModel.words).appendingValue(forKey: "other")
        ) {
            later.append($0)
        }
        model.words["other"] = "c"

        #expect(counts.elements == [1])  // holds: the array's part is observed again
        #expect(typed.elements == ["a", "b"])
        #expect(untyped.count == 2)
        #expect(later.elements == ["c"])
    }

    /// A dictionary's change that another dictionary sends (`send` is public on every
    /// messenger) is that other dictionary's message: it must not reach the key observers of
    /// the dictionary that made it (6fcf60c: the dispatcher sends to the watchers recorded in
    /// the change, whoever's they are).
    @Test func aChangeSentByAnotherDictionaryDoesNotReachTheKeyObserversOfTheFirst() throws {
        let shelf = TwoDictionaryShelf()
        let observer = TestObserver()
        let captured = Recording<DictionaryChange<String, String>>()
        observer.observe(shelf.words) { captured.append($0) }
        let theme = Recording<String?>()
        observer.observe(
            shelf, PropertyPath(\TwoDictionaryShelf.words).appendingValue(forKey: "theme")
        ) {
            theme.append($0)
        }
        // A key observation on `other`, so that `other` dispatches its key changes.
        observer.observe(shelf, PropertyPath(\TwoDictionaryShelf.other).appendingValue(forKey: "x"))
        {
            _ in
        }
        shelf.words["theme"] = "dark"
        shelf.words["theme"] = "light"
        let light = try #require(captured.elements.last)
        shelf.words["theme"] = "blue"

        shelf.other.send(light)

        #expect(shelf.words["theme"] == "blue")
        #expect(theme.elements == ["dark", "light", "blue"])
    }

    /// An old change of the dictionary sent through it again (`send` is public) is no news for
    /// its keys: their observers must not get the old value back.
    @Test func anOldChangeSentAgainDoesNotReachTheKeyObservers() throws {
        let shelf = TwoDictionaryShelf()
        let observer = TestObserver()
        let captured = Recording<DictionaryChange<String, String>>()
        observer.observe(shelf.words) { captured.append($0) }
        let theme = Recording<String?>()
        observer.observe(
            shelf, PropertyPath(\TwoDictionaryShelf.words).appendingValue(forKey: "theme")
        ) {
            theme.append($0)
        }
        shelf.words["theme"] = "dark"
        let dark = try #require(captured.elements.last)
        shelf.words["theme"] = "light"

        shelf.words.send(dark)

        #expect(theme.elements == ["dark", "light"])
    }

    /// The dispatcher passes on only "its own" changes (`change.origin ==
    /// ObjectIdentifier(self)`), each once (`version > dispatchedVersion`). An identifier is
    /// an address: a change kept from a dead dictionary and sent (public `send`) through a new
    /// one at the same address passes both checks and raises `dispatchedVersion` to the old
    /// dictionary's version; the new dictionary's next 50 changes then reach no key.
    @Test func aChangeOfADeadDictionaryDoesNotSilenceTheKeysOfOneAtTheSameAddress() throws {
        let holder = DictionaryHolder()
        let observer = TestObserver()
        let values = Recording<String?>()
        observer.observe(holder, PropertyPath(\DictionaryHolder.$words).appendingValue(forKey: "k"))
        {
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
