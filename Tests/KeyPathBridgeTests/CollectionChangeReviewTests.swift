import HeraldTestSupport
import KeyPathBridge
import Messaging
import Testing

final class ReviewShelf {
    let words: ObservableDictionary<String, String> = [:]
    let other: ObservableDictionary<String, String> = [:]
    let boxes: ObservableArray<ReviewBox> = []
}

/// Equal by value, but each box is an object of its own (`===` decides for objects).
final class ReviewBox: Hashable {
    let value: Int
    init(_ value: Int) { self.value = value }
    static func == (lhs: ReviewBox, rhs: ReviewBox) -> Bool { lhs.value == rhs.value }
    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}

@Suite("Collection changes (review findings)")
struct CollectionChangeReviewTests {
    /// A dictionary's change that another dictionary sends (`send` is public on every
    /// messenger) is that other dictionary's message: it must not reach the key observers of
    /// the dictionary that made it (6fcf60c: the dispatcher sends to the watchers recorded in
    /// the change, whoever's they are).
    @Test func aChangeSentByAnotherDictionaryDoesNotReachTheKeyObserversOfTheFirst() throws {
        let shelf = ReviewShelf()
        let observer = TestObserver()
        let captured = Recording<DictionaryChange<String, String>>()
        observer.observe(shelf.words) { captured.append($0) }
        let theme = Recording<String?>()
        observer.observe(shelf, PropertyPath(\ReviewShelf.words).appendingValue(forKey: "theme")) {
            theme.append($0)
        }
        // A key observation on `other`, so that `other` dispatches its key changes.
        observer.observe(shelf, PropertyPath(\ReviewShelf.other).appendingValue(forKey: "x")) {
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
        let shelf = ReviewShelf()
        let observer = TestObserver()
        let captured = Recording<DictionaryChange<String, String>>()
        observer.observe(shelf.words) { captured.append($0) }
        let theme = Recording<String?>()
        observer.observe(shelf, PropertyPath(\ReviewShelf.words).appendingValue(forKey: "theme")) {
            theme.append($0)
        }
        shelf.words["theme"] = "dark"
        let dark = try #require(captured.elements.last)
        shelf.words["theme"] = "light"

        shelf.words.send(dark)

        #expect(theme.elements == ["dark", "light"])
    }

    /// `replaceAll(with:)` on object elements that are equal (`==`) but other objects: the
    /// array's rule for objects is `===`, so the new objects must be stored and `#0` fire, and
    /// the change set must say so.
    @Test func replaceAllWithEqualButOtherObjectsStoresThemAndFires() {
        let shelf = ReviewShelf()
        shelf.boxes.append(ReviewBox(1))
        let observer = TestObserver()
        let updates = Recording<ReviewBox?>()
        observer.observe(shelf, PropertyPath(\ReviewShelf.boxes).appendingElement(at: 0)) {
            updates.append($0)
        }
        let replacement = ReviewBox(1)
        let kept = ReviewBox(2)
        shelf.boxes.append(kept)
        var mirror = shelf.boxes.elements
        observer.observe(shelf.boxes) { $0.apply(to: &mirror) }

        shelf.boxes.replaceAll(with: [replacement, kept])
        #expect(
            mirror.map(ObjectIdentifier.init) == [replacement, kept].map(ObjectIdentifier.init))

        #expect(shelf.boxes[0] === replacement)
        #expect(updates.count == 1)
    }
}
