import Foundation
import HeraldTestSupport
import KeyPathBridge
import Messaging
import Testing

final class Adv2Leaf: @unchecked Sendable {
    @ObservableVar var value: Int
    init(_ value: Int) { self.value = value }
}

final class Adv2Root: @unchecked Sendable {
    @ObservableVar var leaf: Adv2Leaf?
    init(_ leaf: Adv2Leaf?) { self.leaf = leaf }
}

final class Adv2Item: @unchecked Sendable {
    @ObservableVar var name: String
    init(_ name: String) { self.name = name }
}

final class Adv2List: @unchecked Sendable {
    let items: ObservableArray<Adv2Item> = []
    let numbers: ObservableArray<Int> = []
    @ObservableVar var archive: ObservableArray<Int> = [0, 1]
}

/// Second round of adversarial tests: the direct path for key-path end values (d50f115) and
/// ObservableArray with its parts in paths.
@Suite("Arrays and direct end changes, adversarial")
struct ArrayAndDirectPathAdversarialTests {

    // MARK: ObservableArray batches

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

    // MARK: ObservableArray from many threads

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

    // MARK: Every element of an array in a path

    /// An element that left the array is not followed: a change it makes afterwards is not
    /// delivered. Here the removal and the change happen while the path's wiring is busy (in a
    /// handler of the path): both wait in the wiring's queue, the removal first. The branch's
    /// change carried nothing that the membership change made stale, so it was published.
    @Test(arguments: [true, false])
    func aRemovedElementsLaterChangeIsNotDelivered(typed: Bool) throws {
        let list = Adv2List()
        let kept = Adv2Item("kept")
        let leaving = Adv2Item("leaving")
        list.items.append(contentsOf: [kept, leaving])
        let names = Recording<String?>()
        let observer = TestObserver()
        nonisolated(unsafe) var once = false
        let handle = { (name: String?) in
            names.append(name)
            guard !once else { return }
            once = true
            list.items.remove(at: 1)  // `leaving` leaves
            leaving.name = "too late"  // after it left
        }
        let observed: AnyObject =
            typed
            ? observer.observe(
                list, PropertyPath(\Adv2List.items).appendingEachElement().appending(\.$name),
                receive: handle)
            : try observer.observe(list, path: "items.*.name") { handle($0 as? String) }

        kept.name = "kept 2"

        #expect(!names.elements.contains("too late"), "\(names.elements)")
        withExtendedLifetime(observed) {}
    }

    // MARK: Direct end-value changes (d50f115)

    /// A change of the old end variable whose delivery to the path comes after the path
    /// re-wired (another observer of the variable, registered first, replaces the intermediate
    /// object) is stale and never delivered.
    @Test func aStaleEndChangeDeliveredAfterTheRewireIsDropped() {
        let old = Adv2Leaf(1)
        let new = Adv2Leaf(2)
        let root = Adv2Root(old)
        let first = TestObserver()
        first.observe(old.$value) { _ in root.leaf = new }  // runs before the path's handler
        let values = Recording<Update<Int?>>()
        let path = ObservedPath(root, PropertyPath(\Adv2Root.$leaf).appending(\.$value))
        let observer = TestObserver()
        observer.observe(path) { values.append($0) }

        old.value = 10

        #expect(values.elements.map(\.new) == [2], "\(values.elements)")
        #expect(path.value == 2)
    }

    /// Many threads set the end value while another replaces the intermediate object: the
    /// path's updates chain (each old is the previous new), no update repeats its value, and
    /// the last value is the model's.
    @Test func directEndChangesRacingRewiresKeepTheUpdatesChained() {
        for round in 0..<30 {
            let leaves = (0..<4).map { Adv2Leaf($0 * 1_000) }
            let root = Adv2Root(leaves[0])
            let path = ObservedPath(root, PropertyPath(\Adv2Root.$leaf).appending(\.$value))
            let updates = Recording<Update<Int?>>()
            let observer = TestObserver()
            observer.observe(path) { updates.append($0) }
            let boxed = UncheckedBox(leaves)
            concurrently(threads: 4) { thread in
                if thread == 3 {
                    for step in 0..<200 { root.leaf = boxed.value[step % 3] }
                    root.leaf = boxed.value[3]
                } else {
                    for step in 0..<300 {
                        boxed.value[thread].value = thread * 1_000 + step % 7
                        boxed.value[3].value = 3_000 + step % 5
                    }
                }
            }
            let all = updates.elements
            var previous: Int? = 0
            var broken = 0
            for update in all {
                if update.old != previous { broken += 1 }
                if update.old == update.new { broken += 1 }
                previous = update.new
            }
            #expect(broken == 0, "round \(round): \(broken) broken of \(all.count)")
            #expect(path.value == leaves[3].value)
            #expect(all.last?.new == leaves[3].value, "round \(round)")
        }
    }

    /// A handler that sets the end variable again (re-entrancy on the direct path) gets its
    /// change queued behind the variable's message it is handling; replacing the intermediate
    /// object meanwhile makes that queued change stale (dropped, as the engine documents), and
    /// the updates stay chained. (Holds.)
    @Test func aHandlerThatSetsTheEndVariableAgainGetsChainedUpdates() {
        let leaf = Adv2Leaf(0)
        let other = Adv2Leaf(100)
        let root = Adv2Root(leaf)
        let path = ObservedPath(root, PropertyPath(\Adv2Root.$leaf).appending(\.$value))
        let updates = Recording<Update<Int?>>()
        let observer = TestObserver()
        observer.observe(path) { update in
            updates.append(update)
            if update.new == 1 {
                leaf.value = 2
                root.leaf = other
                other.value = 101
                leaf.value = 3  // stale: leaf was replaced
            }
        }

        leaf.value = 1

        #expect(updates.elements.map(\.new) == [1, 101], "\(updates.elements)")
        #expect(updates.elements.map(\.old) == [0, 1], "\(updates.elements)")
        #expect(path.value == 101)
    }

    /// The path's objects are freed after stop(), including after direct changes.
    @Test func aPathIsFreedAfterStopAndAfterItsRootDies() {
        let leaf = Adv2Leaf(0)
        weak var weakPath: ObservedPath<Adv2Root, Int>?
        weak var weakRoot: Adv2Root?
        do {
            let root = Adv2Root(leaf)
            weakRoot = root
            let observer = TestObserver()
            let path = observer.observe(root, \.$leaf, \.$value) { _ in }
            weakPath = path
            leaf.value = 5
            leaf.value = 6
        }
        #expect(weakRoot == nil)
        #expect(weakPath == nil)
        leaf.value = 7  // nothing observes it any more
        #expect(leaf.$value.observationCount == 0)

        do {
            let root = Adv2Root(leaf)
            let path = ObservedPath(root, PropertyPath(\Adv2Root.$leaf).appending(\.$value))
            weakPath = path
            leaf.value = 8
            path.stop()
            withExtendedLifetime(root) {}
        }
        #expect(weakPath == nil)
        #expect(leaf.$value.observationCount == 0)
    }

    // MARK: More probes (these hold at d1cbc0b)

    /// The root dies while the end variable lives on: its next change is not published
    /// directly; the path ends with an update to unreachable.
    @Test func aChangeAfterTheRootDiedEndsThePath() {
        let leaf = Adv2Leaf(1)
        var root: Adv2Root? = Adv2Root(leaf)
        let path = ObservedPath(root!, PropertyPath(\Adv2Root.$leaf).appending(\.$value))
        let updates = Recording<Update<Int?>>()
        let observer = TestObserver()
        observer.observe(path) { updates.append($0) }
        leaf.value = 2
        root = nil
        leaf.value = 3
        #expect(!updates.elements.map(\.new).contains(3), "\(updates.elements)")
        #expect(updates.elements.last?.new == nil)
        #expect(!path.isActive)
    }

    /// A manual trigger of the end variable goes through the engine (forced): one update whose
    /// old and new are the current value, after direct changes.
    @Test func aManualTriggerAfterDirectChangesIsDelivered() {
        let leaf = Adv2Leaf(1)
        let root = Adv2Root(leaf)
        let path = ObservedPath(root, PropertyPath(\Adv2Root.$leaf).appending(\.$value))
        let updates = Recording<Update<Int?>>()
        let observer = TestObserver()
        observer.observe(path) { updates.append($0) }
        leaf.value = 2
        leaf.value = 2
        Inspector(leaf).trigger(\.$value)
        leaf.value = 3
        #expect(updates.elements.map(\.new) == [2, 2, 3])
        #expect(updates.elements.map(\.old) == [1, 2, 2])
    }

    /// Two paths follow the same index; one stops: the other still fires.
    @Test func anIndexFollowedTwiceStillFiresAfterOnePathStops() {
        let list = Adv2List()
        list.numbers.append(contentsOf: [1, 2, 3])
        let path = PropertyPath(\Adv2List.numbers).appendingElement(at: 1)
        let first = ObservedPath(list, path)
        let second = ObservedPath(list, path)
        let values = Recording<Int?>()
        let observer = TestObserver()
        observer.observe(second) { values.append($0.new) }
        first.stop()
        list.numbers[1] = 20
        list.numbers.remove(at: 0)
        #expect(values.elements == [20, 3])
    }

    /// An array in an observable property, replaced while `#0` is observed: the old array's
    /// changes are no longer delivered; the new one's are.
    @Test func aReplacedArrayIsNoLongerFollowed() {
        let list = Adv2List()
        let oldArray = list.archive
        let values = Recording<Int?>()
        let observer = TestObserver()
        let observed = observer.observe(
            list, PropertyPath(\Adv2List.$archive).appendingElement(at: 0)
        ) { values.append($0) }
        list.archive = [5]
        oldArray[0] = 99
        list.archive[0] = 6
        #expect(values.elements == [5, 6])
        #expect(oldArray.observationCount == 0)
        withExtendedLifetime(observed) {}
    }

    /// An element that left an `items.*.name` path is freed, and the array's observations end
    /// with the path.
    @Test func aLeavingElementIsFreedAndThePathIsFreedWithItsRoot() {
        weak var weakItem: Adv2Item?
        weak var weakPath: ObservedPath<Adv2List, String>?
        let observer = TestObserver()
        do {
            let list = Adv2List()
            do {
                let item = Adv2Item("a")
                weakItem = item
                list.items.append(item)
            }
            let path = observer.observe(
                list, PropertyPath(\Adv2List.items).appendingEachElement().appending(\.$name)
            ) { _ in }
            weakPath = path
            list.items.removeAll()
            #expect(weakItem == nil)
        }
        #expect(weakPath == nil)
    }

    /// An object-following element that left stays unreachable, even when it comes back.
    @Test func anObjectFollowingElementStaysUnreachableAfterItLeaves() {
        let list = Adv2List()
        let a = Adv2Item("a")
        list.items.append(contentsOf: [Adv2Item("x"), a])
        let names = Recording<String?>()
        let observer = TestObserver()
        let observed = observer.observe(
            list, PropertyPath(\Adv2List.items).appendingElement(startingAt: 1).appending(\.$name)
        ) { names.append($0) }
        list.items.insert(Adv2Item("y"), at: 0)
        a.name = "a2"
        list.items.sort { $0.name < $1.name }  // moves, does not leave
        a.name = "a3"
        list.items.removeAll { $0 === a }
        list.items.append(a)
        a.name = "a4"
        #expect(names.elements == ["a2", "a3", nil])
        withExtendedLifetime(observed) {}
    }
}
