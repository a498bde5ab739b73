import Foundation
import HeraldTestSupport
import KeyPathBridge
import Messaging
import Testing

/// Records an array's changes and keeps a plain mirror that each change is applied to.
final class ArrayMirror<Element: Equatable>: @unchecked Sendable {
    private let lock = NSLockLike()
    private var mirror: [Element]
    private var changes: [ArrayChange<Element>] = []
    let observer = TestObserver()

    init(_ array: ObservableArray<Element>) {
        mirror = array.elements
        observer.observe(array) { [self] change in
            lock.withLock {
                change.apply(to: &mirror)
                changes.append(change)
            }
        }
    }

    var contents: [Element] { lock.withLock { mirror } }
    var received: [ArrayChange<Element>] { lock.withLock { changes } }
}

/// A class whose instances are `==` when their values are: an array compares them by identity.
private final class EqualByValue: Equatable, Sendable {
    let value: Int
    init(_ value: Int) { self.value = value }
    static func == (lhs: EqualByValue, rhs: EqualByValue) -> Bool { lhs.value == rhs.value }
}

@Suite("Observable arrays")
struct ObservableArrayTests {
    @Test func eachMutationSendsOneChangeWhoseEditsTransformTheOldContents() {
        let array: ObservableArray = [1, 2, 3]
        let mirror = ArrayMirror(array)

        array.append(4)
        array.insert(0, at: 0)
        array.remove(at: 2)
        array[1] = 10
        array.append(contentsOf: [5, 6])
        array.replaceSubrange(1..<3, with: [7])
        array.removeAll(where: { $0 > 5 })
        array.swapAt(0, 1)
        array.sort()
        array.reverse()
        #expect(array.popLast() == 0)
        array.removeFirst()
        array.insert(contentsOf: [8, 9], at: 1)
        array.removeLast(2)
        array.removeSubrange(0..<1)

        #expect(mirror.received.count == 15)
        #expect(mirror.contents == array.elements)
        #expect(
            mirror.received.prefix(3).map(\.edits) == [
                [.inserted([4], at: 3)], [.inserted([0], at: 0)], [.removed([2], at: 2)],
            ])
    }

    @Test func aMutationThatChangesNothingSendsNothing() {
        let array: ObservableArray = [1, 2, 3]
        let mirror = ArrayMirror(array)
        let empty = ObservableArray<Int>()
        let emptyMirror = ArrayMirror(empty)

        array[1] = 2
        array.replaceSubrange(0..<2, with: [1, 2])
        array.removeAll(where: { $0 > 5 })
        array.append(contentsOf: [])
        array.sort()
        array.swapAt(1, 1)
        empty.removeAll()
        #expect(empty.popLast() == nil)

        #expect(mirror.received.isEmpty)
        #expect(emptyMirror.received.isEmpty)
    }

    @Test func aBatchSendsOneChangeByItsAuthor() {
        let array: ObservableArray = ["a", "b", "c"]
        let editor = Author("editor")
        let authors = Recording<Bool>()
        let observer = TestObserver()
        observer.observe(array) { _, author in authors.append(author === editor) }
        let mirror = ArrayMirror(array)

        let removed = array.mutate(as: editor) { items in
            items.append("d")
            items.append("e")  // merged with the one before
            items.remove(at: 0)
            items.sort(by: >)
            return items.count
        }

        #expect(removed == 4)
        #expect(array.elements == ["e", "d", "c", "b"])
        #expect(mirror.contents == array.elements)
        #expect(mirror.received.count == 1)
        #expect(mirror.received.first?.edits.count == 3)
        #expect(authors.elements == [true])
    }

    @Test func aBatchWithoutEditsSendsNothing() {
        let array: ObservableArray = [1, 2]
        let mirror = ArrayMirror(array)
        array.mutate { $0[0] = 1 }
        #expect(mirror.received.isEmpty)
    }

    @Test func aBatchWhoseEditsCancelOutSendsNothing() {
        let array: ObservableArray = [3, 1, 2]
        let mirror = ArrayMirror(array)
        array.mutate {
            $0.append(9)
            $0.removeLast()
        }
        array.mutate {
            $0.sort()
            $0.replaceSubrange(0..<3, with: [3, 1, 2])
        }
        array.mutate {
            $0.insert(7, at: 1)
            $0.swapAt(0, 2)
            $0.swapAt(0, 2)
            $0.remove(at: 1)
        }
        #expect(mirror.received.isEmpty)
        #expect(array.elements == [3, 1, 2])
        // An edit that does not cancel out still sends its change.
        array.mutate {
            $0.append(9)
            $0.removeFirst()
        }
        #expect(mirror.received.count == 1)
        #expect(mirror.contents == [1, 2, 9])
    }

    @Test func aBatchThatPutsBackAnotherEqualObjectSendsItsChange() {
        let (first, equalToFirst) = (EqualByValue(1), EqualByValue(1))
        let array = ObservableArray([first])
        let mirror = ArrayMirror(array)
        array.mutate {
            $0.append(equalToFirst)
            $0.removeFirst()
        }
        #expect(mirror.received.count == 1)
        #expect(array.elements[0] === equalToFirst)
    }

    /// Another thread mutates the array while a batch's body runs: the batch is not applied
    /// onto contents it was not made from; its body runs again on the new contents.
    @Test func aBatchRacingAnotherMutationRunsAgainOnTheNewContents() {
        let array: ObservableArray = [1, 2]
        let mirror = ArrayMirror(array)
        var runs = 0
        array.mutate { items in
            runs += 1
            if runs == 1 {
                concurrently(threads: 1) { _ in array.append(3) }
            }
            items.append(items.count)
        }

        #expect(runs == 2)
        #expect(array.elements == [1, 2, 3, 3])
        #expect(mirror.contents == array.elements)
    }

    @Test func objectElementsAreTheSameByIdentity() {
        let ann = User(name: "Ann")
        let array: ObservableArray = [ann]
        let changes = Recording<Int>()
        let observer = TestObserver()
        observer.observe(array) { changes.append($0.edits.count) }

        array[0] = ann
        array[0] = User(name: "Ann")

        #expect(changes.elements == [1])
    }

    @Test func itIsAPlainJSONArrayWhenEncoded() throws {
        let array: ObservableArray = [1, 2, 3]
        let data = try JSONEncoder().encode(array)
        #expect(String(decoding: data, as: UTF8.self) == "[1,2,3]")
        let decoded = try JSONDecoder().decode(ObservableArray<Int>.self, from: data)
        #expect(decoded == array)
        #expect(decoded.hashValue == array.hashValue)
    }

    @Test func itIsARealSwiftCollection() {
        let array: ObservableArray = [3, 1, 2]
        #expect(array.count == 3)
        #expect(array.map { $0 * 2 } == [6, 2, 4])
        #expect(array.sorted() == [1, 2, 3])
        #expect(array.firstIndex(of: 2) == 2)
        #expect(Array(array[1...]) == [1, 2])
        #expect(array.reduce(0, +) == 6)
        #expect(array.description == "[3, 1, 2]")
    }

    // The same removeAll(where:) message: many replacement edits, and batch updates that
    //    reload and delete the same old index (UIKit rejects that).
    @Test func removeAllWhereIsOneRemoval() {
        let numbers: ObservableArray = [0, 1, 2]
        let observer = TestObserver()
        let changes = Recording<ArrayChange<Int>>()
        observer.observe(numbers) { changes.append($0) }
        numbers.removeAll { $0 == 0 }
        let change = try! #require(changes.elements.first)
        #expect(change.edits == [.removed([0], at: 0)])
        let updates = change.batchUpdates
        #expect(Set(updates.reloads).isDisjoint(with: updates.deletions))
        #expect(
            updates == ArrayBatchUpdates(deletions: [0], insertions: [], reloads: [], moves: []))
    }

    // Shuffle is documented as one replacement, but is recorded swap by swap.
    @Test func shuffleIsOneEdit() {
        let numbers = ObservableArray(0..<20)
        let observer = TestObserver()
        let changes = Recording<ArrayChange<Int>>()
        observer.observe(numbers) { changes.append($0) }
        numbers.shuffle()
        #expect(changes.elements.first?.edits.count == 1)  // once ~2 per swap
    }

    /// `Batch` is a `RangeReplaceableCollection`, so the standard library's
    /// `removeAll(keepingCapacity: false)` default applies to it: `self = Self()`. That throws
    /// away the batch's recorded edits (and its change rule): the batch commits no edit, so the
    /// array is not cleared and nothing is sent.
    @Test func removeAllInABatchClearsTheArrayAndSendsTheRemoval() {
        let array: ObservableArray<Int> = [1, 2, 3]
        let changes = Recording<ArrayChange<Int>>()
        let observer = TestObserver()
        observer.observe(array) { changes.append($0) }

        array.mutate { $0.removeAll() }

        #expect(array.elements == [])
        #expect(changes.count == 1)
    }

    /// The same default, followed by more edits: the message says "insert 9 at 0" of the old
    /// contents, so a mirror applying it becomes [9, 1, 2, 3] while the array is [9].
    @Test func aMirrorOfABatchThatRemovesAllThenAppendsMatchesTheArray() {
        let array: ObservableArray<Int> = [1, 2, 3]
        var mirror = array.elements
        let observer = TestObserver()
        let mirrorLock = NSLockLike()
        nonisolated(unsafe) var mirrorRef = mirror
        observer.observe(array) { change in
            mirrorLock.withLock { change.apply(to: &mirrorRef) }
        }

        array.mutate { batch in
            batch.removeAll()
            batch.append(9)
        }

        mirror = mirrorLock.withLock { mirrorRef }
        #expect(array.elements == [9])
        #expect(mirror == array.elements)
    }

    // A batch whose body catches an error thrown from inside a contiguous-storage mutation
    //    (a throwing sort) leaves the contents changed without an edit: observers that apply
    //    the edits diverge.
    @Test func editsAlwaysDescribeTheCommittedContents() {
        struct Stop: Error {}
        let numbers: ObservableArray = [5, 4, 3, 2, 1]
        let observer = TestObserver()
        let mirror = Recording<[Int]>()
        let base = numbers.elements
        observer.observe(numbers) { change in
            var contents = base
            change.apply(to: &contents)
            mirror.append(contents)
        }
        numbers.mutate { batch in
            batch.append(0)
            var comparisons = 0
            try? batch.sort { x, y in
                comparisons += 1
                if comparisons > 3 { throw Stop() }
                return x < y
            }
        }
        #expect(mirror.elements.last == numbers.elements)  // once not, if the sort moved elements
    }

    /// A throwing sort caught inside the batch body: the standard library's sort has already
    /// moved elements in the batch's storage when the comparator throws, but
    /// `withContiguousMutableStorageIfAvailable` records no edit when its body throws. The
    /// batch then commits contents that its edits do not describe.
    @Test func aSortThatThrowsInsideABatchLeavesMessagesThatDescribeTheContents() {
        struct Stop: Error {}
        let array = ObservableArray(Array((0..<40).reversed()))
        nonisolated(unsafe) var mirror = array.elements
        let observer = TestObserver()
        observer.observe(array) { change in change.apply(to: &mirror) }

        array.mutate { batch in
            var comparisons = 0
            try? batch.sort { a, b in
                comparisons += 1
                if comparisons > 60 { throw Stop() }
                return a < b
            }
            batch.append(100)  // some edit, so the batch commits
        }

        #expect(mirror == array.elements)
    }
}

@Suite("Array batch updates")
struct ArrayBatchUpdatesTests {
    @Test func insertionsAreNewIndicesDeletionsOldOnesAndReplacementsReloads() {
        let array: ObservableArray = [0, 1, 2, 3, 4]
        let mirror = ArrayMirror(array)
        array.mutate { items in
            items.remove(at: 1)  // old 1
            items.insert(9, at: 0)  // new 0
            items[4] = 8  // old 4, replaced in place
        }
        let updates = mirror.received[0].batchUpdates
        #expect(updates.deletions == [1])
        #expect(updates.insertions == [0])
        #expect(updates.reloads == [4])
        #expect(updates.moves.isEmpty)
    }

    @Test func anInsertedElementThatIsReplacedStaysAnInsertion() {
        let array: ObservableArray = [0]
        let mirror = ArrayMirror(array)
        array.mutate { items in
            items.append(1)
            items[1] = 2
            items.remove(at: 0)
        }
        let updates = mirror.received[0].batchUpdates
        #expect(
            updates == ArrayBatchUpdates(deletions: [0], insertions: [0], reloads: [], moves: []))
    }

    /// Seeded random batches: deleting `deletions` from the old contents, then inserting at
    /// `insertions`, lines the old elements kept up with the new contents, and an old element
    /// kept at its place equals the new one unless it is reloaded.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomBatchesGiveConsistentBatchUpdates(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let array = ObservableArray((0..<20).map { $0 })
        let mirror = ArrayMirror(array)
        var next = 100
        for _ in 0..<300 {
            let before = array.elements
            array.mutate { items in
                for _ in 0..<Int.random(in: 1...5, using: &random) {
                    let count = items.count
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0 where count > 0:
                        items.remove(at: Int.random(in: 0..<count, using: &random))
                    case 1 where count > 0:
                        items[Int.random(in: 0..<count, using: &random)] = next
                    case 2 where count > 1:
                        let start = Int.random(in: 0..<count, using: &random)
                        let end = Int.random(in: start...count, using: &random)
                        items.replaceSubrange(start..<end, with: [next, next + 1])
                        next += 1
                    default:
                        items.insert(next, at: Int.random(in: 0...count, using: &random))
                    }
                    next += 1
                }
            }
            let after = array.elements
            guard let change = mirror.received.last, before != after else { continue }
            let updates = change.batchUpdates
            var lineUp: [Int?] = before.indices.filter { !updates.deletions.contains($0) }
            for index in updates.insertions { lineUp.insert(nil, at: index) }
            #expect(lineUp.count == after.count, "seed \(seed)")
            for (position, old) in lineUp.enumerated() {
                guard let old, !updates.reloads.contains(old) else { continue }
                #expect(before[old] == after[position], "seed \(seed)")
            }
        }
        #expect(mirror.contents == array.elements)
    }
}

@Suite("Observable array model")
struct ObservableArrayModelTests {
    /// 10,000 seeded random operations and batches, mirrored on a plain Swift array: after
    /// every message, applying it to the mirror gives the array's contents.
    @Test func tenThousandRandomOperationsKeepTheMirrorEqual() {
        var random = SeededGenerator(seed: 42)
        let array = ObservableArray<Int>()
        let mirror = ArrayMirror(array)
        var plain: [Int] = []
        for step in 0..<10_000 {
            let count = plain.count
            switch Int.random(in: 0..<9, using: &random) {
            case 0:
                array.append(step)
                plain.append(step)
            case 1:
                let index = Int.random(in: 0...count, using: &random)
                array.insert(step, at: index)
                plain.insert(step, at: index)
            case 2 where count > 0:
                let index = Int.random(in: 0..<count, using: &random)
                #expect(array.remove(at: index) == plain.remove(at: index))
            case 3 where count > 0:
                let index = Int.random(in: 0..<count, using: &random)
                array[index] = step % 7
                plain[index] = step % 7
            case 4:
                let start = Int.random(in: 0...count, using: &random)
                let end = Int.random(in: start...count, using: &random)
                let new = (0..<Int.random(in: 0..<4, using: &random)).map { step + $0 }
                array.replaceSubrange(start..<end, with: new)
                plain.replaceSubrange(start..<end, with: new)
            case 5:
                array.removeAll { $0 % 5 == step % 5 }
                plain.removeAll { $0 % 5 == step % 5 }
            case 6 where count > 1:
                let i = Int.random(in: 0..<count, using: &random)
                let j = Int.random(in: 0..<count, using: &random)
                array.swapAt(i, j)
                plain.swapAt(i, j)
            case 7:
                array.mutate { items in
                    items.append(step)
                    items.sort()
                    if items.count > 3 { items.removeFirst(2) }
                }
                plain.append(step)
                plain.sort()
                if plain.count > 3 { plain.removeFirst(2) }
            default:
                array.append(contentsOf: [step, step + 1])
                plain.append(contentsOf: [step, step + 1])
            }
            #expect(array.elements == plain, "step \(step)")
        }
        #expect(mirror.contents == plain)
    }
}

@Suite("Observable array concurrency")
struct ObservableArrayConcurrencyTests {
    /// Mutations from several threads: messages arrive in the order the mutations happened,
    /// each relative to the contents just before it, so the mirror ends equal.
    @Test func mutationsFromSeveralThreadsKeepTheMirrorEqual() {
        let array = ObservableArray<Int>()
        let mirror = ArrayMirror(array)
        concurrently(threads: 3) { thread in
            for index in 0..<1_000 {
                switch index % 4 {
                case 0, 1: array.append(thread * 10_000 + index)
                case 2: array.mutate { if !$0.isEmpty { $0.removeFirst() } }
                default: array.insert(index, at: 0)
                }
            }
        }
        #expect(mirror.contents == array.elements)
        #expect(array.count == 3 * 500)
    }

    /// An observer that mutates the array in its handler gets its change queued behind the
    /// message it is handling: the mirror stays consistent.
    @Test func anObserverThatMutatesTheArrayIsQueued() {
        let array: ObservableArray = [1]
        let mirror = ArrayMirror(array)
        let observer = TestObserver()
        observer.observe(array) { change in
            if change.newCount < 4 { array.append(change.newCount + 1) }
        }
        array.append(2)
        #expect(array.elements == [1, 2, 3, 4])
        #expect(mirror.contents == array.elements)
    }

    /// Mutations and batches from many threads: a mirror that applies every message equals the
    /// array, and every change's oldCount is the mirror's count.
    @Test func aMirrorOfConcurrentMutationsEqualsTheArray() {
        for round in 0..<20 {
            let array: ObservableArray<Int> = []
            let lock = NSLockLike()
            nonisolated(unsafe) var mirror: [Int] = []
            nonisolated(unsafe) var countMismatches = 0
            let observer = TestObserver()
            observer.observe(array) { change in
                lock.withLock {
                    if change.oldCount != mirror.count { countMismatches += 1 }
                    change.apply(to: &mirror)
                }
            }
            concurrently(threads: 4) { thread in
                var random = SeededGenerator(seed: UInt64(round * 10 + thread + 1))
                for step in 0..<150 {
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0: array.append(step)
                    case 1: array.mutate { if !$0.isEmpty { $0.remove(at: 0) } }
                    case 2: array.mutate { $0.insert(step, at: $0.count / 2) }
                    case 3: array.mutate { $0.sort() }
                    case 4: _ = array.popLast()
                    default:
                        array.mutate { batch in
                            batch.append(step)
                            batch.reverse()
                            if batch.count > 3 { batch.removeSubrange(1..<3) }
                        }
                    }
                }
            }
            let final = lock.withLock { mirror }
            #expect(final == array.elements, "round \(round)")
            #expect(lock.withLock { countMismatches } == 0)
        }
    }
}

@Suite("Replacing all contents of an array")
struct ArrayReplaceAllTests {
    @Test func oneMovedElementIsOneMove() {
        let array: ObservableArray = ["a", "b", "c", "d"]
        let mirror = ArrayMirror(array)
        array.replaceAll(with: ["a", "c", "d", "b"])

        let change = mirror.received[0]
        #expect(change.edits == [.removed(["b"], at: 1), .inserted(["b"], at: 3)])
        #expect(
            change.batchUpdates
                == ArrayBatchUpdates(
                    deletions: [], insertions: [], reloads: [], moves: [.init(from: 1, to: 3)]))
        #expect(mirror.contents == array.elements)
    }

    @Test func equalContentsSendNothing() {
        let array: ObservableArray = [1, 2]
        let mirror = ArrayMirror(array)
        array.replaceAll(with: [1, 2])
        #expect(mirror.received.isEmpty)
    }

    /// Seeded random old and new contents (with repeated elements): the edits transform the old
    /// contents into the new, and the batch updates line the kept and moved elements up.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomContentsGiveConsistentChanges(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        for _ in 0..<200 {
            let old = (0..<Int.random(in: 0..<30, using: &random)).map { _ in
                Int.random(in: 0..<25, using: &random)
            }
            var new = old.shuffled(using: &random).filter { _ in Bool.random(using: &random) }
            new += (0..<Int.random(in: 0..<5, using: &random)).map { _ in
                Int.random(in: 0..<40, using: &random)
            }
            new.shuffle(using: &random)
            let array = ObservableArray(old)
            let mirror = ArrayMirror(array)
            array.replaceAll(with: new)
            #expect(array.elements == new)
            #expect(mirror.contents == new, "seed \(seed): \(old) → \(new)")
            guard let change = mirror.received.first else {
                #expect(old == new)
                continue
            }
            let updates = change.batchUpdates
            let movedFrom = Set(updates.moves.map(\.from))
            let movedTo = Set(updates.moves.map(\.to))
            var lineUp: [Int?] = old.indices.filter {
                !updates.deletions.contains($0) && !movedFrom.contains($0)
            }
            for index in (Set(updates.insertions).union(movedTo)).sorted() {
                lineUp.insert(nil, at: index)
            }
            #expect(lineUp.count == new.count, "seed \(seed)")
            for (position, oldIndex) in lineUp.enumerated() {
                guard let oldIndex else { continue }
                #expect(old[oldIndex] == new[position], "seed \(seed)")
            }
            for move in updates.moves {
                #expect(old[move.from] == new[move.to], "seed \(seed)")
            }
        }
    }

    /// Docs/Collections.md: elements compare "with `==`, or `===` for objects". replaceAll
    /// returns early on `old != new` (Element's `==`), so objects equal by `==` but not
    /// identical are never stored: the array keeps the stale objects.
    @Test func replaceAllWithEqualButOtherObjectsStoresTheNewObjects() {
        let model = CollectionsModel()
        model.objects.append(SameIDItem(1, "old"))
        let fresh = SameIDItem(1, "fresh")
        model.objects.replaceAll(with: [fresh])
        #expect(model.objects[0] === fresh)
    }

    /// When other elements differ, the new contents are stored, but ArrayDiff links the `==`
    /// objects as "kept": the change omits them, so applying it to a mirror leaves the old
    /// object where the array now holds the new one.
    @Test func replaceAllChangeAppliedToAMirrorGivesTheSameObjects() {
        let model = CollectionsModel()
        let a = SameIDItem(1)
        let b = SameIDItem(2)
        model.objects.append(contentsOf: [a, b])
        var mirror = model.objects.elements
        let observer = TestObserver()
        observer.observe(model.objects) { change in change.apply(to: &mirror) }
        let b2 = SameIDItem(2)  // == b, another object
        model.objects.replaceAll(with: [a, b2, SameIDItem(3)])
        #expect(
            mirror.map(ObjectIdentifier.init) == model.objects.elements.map(ObjectIdentifier.init))
    }

    /// `replaceAll(with:)` on object elements that are equal (`==`) but other objects: the
    /// array's rule for objects is `===`, so the new objects must be stored and `#0` fire, and
    /// the change set must say so.
    @Test func replaceAllWithEqualButOtherObjectsStoresThemAndFires() {
        let shelf = TwoDictionaryShelf()
        shelf.boxes.append(SameValueBox(1))
        let observer = TestObserver()
        let updates = Recording<SameValueBox?>()
        observer.observe(shelf, PropertyPath(\TwoDictionaryShelf.boxes).appendingElement(at: 0)) {
            updates.append($0)
        }
        let replacement = SameValueBox(1)
        let kept = SameValueBox(2)
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
