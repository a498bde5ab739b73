import HeraldTestSupport
import KeyPathBridge
import Messaging
import Testing

final class PartShelf {
    let numbers: ObservableArray<Int> = []
    let tags: ObservableSet<String> = []
    let labels: ObservableDictionary<String, String> = [:]
    @ObservableVar var archive: ObservableArray<Int> = [0]
}

/// A collection's part at the end of a typed path (a count, an element, a key's value, a
/// membership) reaches the end without the engine's hop when nothing else is being handled:
/// the updates must be those of the engine's way.
@Suite("Collection parts at the end of typed paths")
struct CollectionPartEndTests {
    @Test func anIndexFollowingElementGoesUnreachableAndBack() {
        let shelf = PartShelf()
        shelf.numbers.append(contentsOf: [10, 11])
        let path = ObservedPath(shelf, PropertyPath(\PartShelf.numbers).appendingElement(at: 2))
        let updates = Recording<Update<Int?>>()
        let observer = TestObserver()
        observer.observe(path) { updates.append($0) }

        shelf.numbers.append(12)  // reachable now
        shelf.numbers[0] = 9  // another index: nothing
        shelf.numbers[2] = 20
        shelf.numbers.insert(5, at: 0)  // shifts 11 to index 2
        shelf.numbers.removeLast(2)  // shrinks below it
        shelf.numbers.removeLast()  // still unreachable: nothing

        #expect(updates.elements.map(\.new) == [12, 20, 11, nil])
        #expect(updates.elements.map(\.old) == [nil, 12, 20, 11])
    }

    @Test func aCountHandlerThatAppendsGetsItsChangeQueuedBehind() {
        let shelf = PartShelf()
        let counts = Recording<Update<Int?>>()
        let observer = TestObserver()
        let path = ObservedPath(shelf, PropertyPath(\PartShelf.numbers).appendingCount())
        observer.observe(path) { update in
            counts.append(update)
            if let count = update.new, count < 3 { shelf.numbers.append(count) }
        }

        shelf.numbers.append(0)

        #expect(counts.elements.map(\.new) == [1, 2, 3])
        #expect(counts.elements.map(\.old) == [0, 1, 2])
        #expect(shelf.numbers.elements == [0, 1, 2])
    }

    @Test func aKeyAndAMembershipFireOnlyOnRealChanges() {
        let shelf = PartShelf()
        let observer = TestObserver()
        let theme = Recording<String?>()
        let tagged = Recording<Bool?>()
        observer.observe(shelf, PropertyPath(\PartShelf.labels).appendingValue(forKey: "theme")) {
            theme.append($0)
        }
        observer.observe(shelf, PropertyPath(\PartShelf.tags).appendingContains("swift")) {
            tagged.append($0)
        }

        shelf.labels["theme"] = "dark"
        shelf.labels["theme"] = "dark"  // equal: nothing
        shelf.labels["font"] = "Menlo"  // another key: nothing
        shelf.labels["theme"] = nil
        shelf.tags.insert("swift")
        shelf.tags.insert("swift")  // already in: nothing
        shelf.tags.remove("swift")

        #expect(theme.elements == ["dark", nil])
        #expect(tagged.elements == [true, false])
    }

    @Test func aReplacedArraysLateChangesDoNotReachTheEnd() {
        let shelf = PartShelf()
        let old = shelf.archive
        let counts = Recording<Int?>()
        let observer = TestObserver()
        // The handler replaces the array while the old one's change is being delivered; the
        // change the old array sends next is stale.
        observer.observe(shelf, PropertyPath(\PartShelf.$archive).appendingCount()) { count in
            counts.append(count)
            if count == 2 {
                shelf.archive = [7, 7, 7, 7]
                old.append(1)
            }
        }

        old.append(1)

        #expect(counts.elements == [2, 4])
        #expect(old.count == 3)
    }

    @Test func aManualTriggerAlongThePathDeliversThePartAgain() {
        let shelf = PartShelf()
        let counts = Recording<Int?>()
        let observer = TestObserver()
        observer.observe(shelf, PropertyPath(\PartShelf.$archive).appendingCount()) {
            counts.append($0)
        }
        shelf.archive.append(2)
        shelf.archive[0] = 5  // no count change

        Inspector(shelf).trigger(\.$archive)

        #expect(counts.elements == [2, 2])
    }
}
