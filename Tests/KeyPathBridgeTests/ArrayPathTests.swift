import Foundation
import HeraldTestSupport
import KeyPathBridge
import Messaging
import Testing

final class Todo {
    @ObservableVar var title: String

    init(_ title: String) {
        self.title = title
    }
}

final class TodoList {
    let items: ObservableArray<Todo> = []
    let numbers: ObservableArray<Int> = []
    @ObservableVar var archive: ObservableArray<Int> = [0]
}

final class NamedItem: @unchecked Sendable {
    @ObservableVar var name: String
    init(_ name: String) { self.name = name }
}

final class NamedItemList: @unchecked Sendable {
    let items: ObservableArray<NamedItem> = []
    let numbers: ObservableArray<Int> = []
    @ObservableVar var archive: ObservableArray<Int> = [0, 1]
}

@Suite("Paths into observable arrays")
struct ArrayPathTests {
    @Test func countFiresOnlyWhenTheCountChanges() {
        let list = TodoList()
        let counts = Recording<Int?>()
        let observer = TestObserver()
        observer.observe(list, PropertyPath(\TodoList.numbers).appendingCount()) {
            counts.append($0)
        }

        list.numbers.append(1)
        list.numbers[0] = 2  // a replacement: same count
        list.numbers.append(contentsOf: [3, 4])
        list.numbers.removeAll()

        #expect(counts.elements == [1, 3, 0])
    }

    @Test func anIndexFollowingElementFiresWhenTheElementAtItsIndexChanges() throws {
        let list = TodoList()
        list.numbers.append(contentsOf: [10, 11])
        let values = Recording<Int?>()
        let observer = TestObserver()
        // Index 2 is past the end when the observation starts.
        try observer.observe(list, path: "numbers.#2") { values.append($0 as? Int) }

        list.numbers.append(12)  // reachable now
        list.numbers[0] = 9  // another index: nothing
        list.numbers[2] = 20  // replaced at 2
        list.numbers.insert(5, at: 0)  // shifts 11 to index 2
        list.numbers.remove(at: 3)  // after it: nothing
        list.numbers.removeLast()  // shrinks below it
        list.numbers.append(11)  // reachable again

        #expect(values.elements == [12, 20, 11, nil, 11])
    }

    @Test func anObjectFollowingElementFollowsItsElementUntilItLeaves() throws {
        let list = TodoList()
        let milk = Todo("milk")
        list.items.append(contentsOf: [Todo("bread"), milk])
        let titles = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(list, path: "items.1.title") { titles.append($0 as? String) }

        list.items.insert(Todo("eggs"), at: 0)  // milk moves to 2: still followed
        milk.title = "oat milk"
        list.items.sort { $0.title < $1.title }  // sorting keeps it in the array
        milk.title = "soy milk"
        list.items.removeAll { $0 === milk }  // it leaves: unreachable, for good
        list.items.insert(milk, at: 1)
        milk.title = "milk again"

        #expect(titles.elements == ["oat milk", "soy milk", nil])
    }

    @Test func anObjectFollowingIndexOutsideTheArrayIsAnError() {
        let list = TodoList()
        list.numbers.append(1)
        #expect(throws: PathError.indexOutOfRange(3, count: 1, path: "numbers.3")) {
            try ObservedPath(list, path: "numbers.3")
        }
    }

    @Test func aStarAtTheEndDeliversEveryMutation() throws {
        let list = TodoList()
        let path = try ObservedPath(list, path: "numbers.*")
        let changes = RecordingObserver<Update<Any?>>()
        changes.record(path)

        list.numbers.append(1)
        list.numbers.append(1)
        list.numbers.removeFirst()

        let edits = changes.messages.elements.map { ($0.new as? ArrayChange<Int>)?.edits }
        #expect(
            edits == [[.inserted([1], at: 0)], [.inserted([1], at: 1)], [.removed([1], at: 0)]])
    }

    @Test func everyElementIsFollowedWhileItIsInTheArray() throws {
        let list = TodoList()
        let bread = Todo("bread")
        list.items.append(bread)
        let titles = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(list, path: "items.*.title") { titles.append($0 as? String) }

        bread.title = "rye bread"
        let milk = Todo("milk")
        list.items.append(milk)  // joins: it fires
        milk.title = "oat milk"
        list.items.append(milk)  // held twice: the second place fires too
        list.items.remove(at: 1)  // one place leaves (to unreachable); still held once
        milk.title = "soy milk"
        list.items.removeAll { $0 === milk }  // leaves
        milk.title = "gone"

        #expect(
            titles.elements == ["rye bread", "milk", "oat milk", "oat milk", nil, "soy milk", nil])
        #expect(!milk.$title.isObserved)
        #expect(bread.$title.isObserved)
    }

    @Test func typedPathsReachTheSameParts() {
        let list = TodoList()
        let milk = Todo("milk")
        list.items.append(milk)
        let observer = TestObserver()
        let first = Recording<String?>()
        let each = Recording<String?>()
        observer.observe(
            list, PropertyPath(\TodoList.items).appendingElement(at: 0).appending(\.$title)
        ) {
            first.append($0)
        }
        observer.observe(
            list, PropertyPath(\TodoList.items).appendingEachElement().appending(\.$title)
        ) {
            each.append($0)
        }
        let followed = ObservedPath(
            list, PropertyPath(\TodoList.items).appendingElement(startingAt: 0).appending(\.$title))

        milk.title = "oat milk"
        list.items.insert(Todo("bread"), at: 0)

        #expect(first.elements == ["oat milk", "bread"])
        #expect(each.elements == ["oat milk", "bread"])  // bread joins
        #expect(followed.value == "oat milk")
    }

    @Test func anArrayInAnObservablePropertyIsFollowedWhenReplaced() {
        let list = TodoList()
        let counts = Recording<Int?>()
        let observer = TestObserver()
        observer.observe(list, PropertyPath(\TodoList.$archive).appendingCount()) {
            counts.append($0)
        }

        list.archive.append(1)
        let old = list.archive
        list.archive = [1, 2, 3]
        old.append(9)  // no longer followed

        #expect(counts.elements == [2, 3])
    }

    @Test func aBindingWritesAnIndexFollowingElement() {
        let list = TodoList()
        list.numbers.append(contentsOf: [1, 2])
        let source = Node()
        source.value.value = 5
        let binding = bind(
            source, PropertyPath(\Node.value),
            to: list, PropertyPath(\TodoList.numbers).appendingElement(at: 1)
        ) { $0 }
        #expect(list.numbers.elements == [1, 5])
        source.value.value = 7
        #expect(list.numbers.elements == [1, 7])
        _ = binding
    }

    /// The consequence in paths: an every-element path follows the objects that replaceAll put
    /// in (each joins: it fires), not the ones that left (each fires as it leaves).
    @Test func everyElementPathFollowsObjectsThatReplaceAllPutIn() {
        let model = CollectionsModel()
        let a = SameIDItem(1, "a")
        let b = SameIDItem(2, "b")
        model.objects.append(contentsOf: [a, b, SameIDItem(3, "c")])
        let observer = TestObserver()
        let titles = Recording<String?>()
        observer.observe(
            model,
            PropertyPath(\CollectionsModel.objects).appendingEachElement().appending(\.$title)
        ) { titles.append($0) }
        let b2 = SameIDItem(2, "b2")
        model.objects.replaceAll(with: [a, b2, SameIDItem(4, "d")])
        b.title = "old b changed"  // b left the array: nothing
        b2.title = "new b changed"
        #expect(titles.elements == ["b2", "d", nil, nil, "new b changed"])
    }

    // An every-element path keeps a stale value after its elements leave.
    @Test func anEveryElementPathIsUnreachableWhenTheArrayEmpties() {
        let list = TodoList()
        list.items.append(Todo("milk"))
        let titles = ObservedPath(
            list, PropertyPath(\TodoList.items).appendingEachElement().appending(\.$title))
        #expect(titles.value == "milk")
        list.items.removeAll()
        #expect(titles.value == nil)  // once still "milk"
        #expect(!titles.isReachable)
    }

    /// An element that left the array is not followed: a change it makes afterwards is not
    /// delivered. Here the removal and the change happen while the path's wiring is busy (in a
    /// handler of the path): both wait in the wiring's queue, the removal first. The branch's
    /// change carried nothing that the membership change made stale, so it was published.
    @Test(arguments: [true, false])
    func aRemovedElementsLaterChangeIsNotDelivered(typed: Bool) throws {
        let list = NamedItemList()
        let kept = NamedItem("kept")
        let leaving = NamedItem("leaving")
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
                list, PropertyPath(\NamedItemList.items).appendingEachElement().appending(\.$name),
                receive: handle)
            : try observer.observe(list, path: "items.*.name") { handle($0 as? String) }

        kept.name = "kept 2"

        #expect(!names.elements.contains("too late"), "\(names.elements)")
        withExtendedLifetime(observed) {}
    }

    /// An element that left an `items.*.name` path is freed, and the array's observations end
    /// with the path.
    @Test func aLeavingElementIsFreedAndThePathIsFreedWithItsRoot() {
        weak var weakItem: NamedItem?
        weak var weakPath: ObservedPath<NamedItemList, String>?
        let observer = TestObserver()
        do {
            let list = NamedItemList()
            do {
                let item = NamedItem("a")
                weakItem = item
                list.items.append(item)
            }
            let path = observer.observe(
                list, PropertyPath(\NamedItemList.items).appendingEachElement().appending(\.$name)
            ) { _ in }
            weakPath = path
            list.items.removeAll()
            #expect(weakItem == nil)
        }
        #expect(weakPath == nil)
    }

    // SwapAt is recorded as two single-element replacements, so an object-following element
    //    "leaves" the array although it only moved.
    @Test func anObjectFollowingElementSurvivesSwapAt() throws {
        let list = TodoList()
        let a = Todo("a")
        list.items.append(contentsOf: [a, Todo("b")])
        let titles = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(list, path: "items.0.title") { titles.append($0 as? String) }
        list.items.swapAt(0, 1)  // a moves to 1
        a.title = "a2"
        #expect(titles.elements == ["a2"])  // once [nil] (left, ended for good)
    }

    /// "An object-following element follows its place": an element held twice is at two
    /// places; the path follows the one it reached, through moves, and ends when that place
    /// is removed, though the element is still held at the other.
    @Test func anObjectFollowingElementFollowsThePlaceItReachedNotItsOtherPlaces() throws {
        let list = TodoList()
        let (a, b, c) = (Todo("a"), Todo("b"), Todo("c"))
        list.items.append(contentsOf: [a, b, c])
        let titles = Recording<String?>()
        let observer = TestObserver()
        let path = try observer.observe(list, path: "items.1.title") {
            titles.append($0 as? String)
        }
        list.items.append(b)  // b at 1 and 3: the path follows the place at 1
        list.items.remove(at: 0)  // that place moves to 0
        b.title = "b2"
        #expect(titles.elements == ["b2"])

        list.items.remove(at: 0)  // [c, b]: the followed place left; b is still held at 1

        #expect(titles.elements == ["b2", nil])
        #expect(path.value == nil)
        b.title = "b3"  // unreachable for good: the place is gone
        #expect(titles.elements == ["b2", nil])
    }

    // RemoveAll(where:) of an element *before* the followed one: the stdlib's default goes
    //    through swapAt, so the followed element "leaves".
    @Test func anObjectFollowingElementSurvivesARemovalBeforeIt() throws {
        let list = TodoList()
        let x = Todo("x")
        let done = Todo("done")
        list.items.append(contentsOf: [done, Todo("a"), x])
        let titles = Recording<String?>()
        let observer = TestObserver()
        try observer.observe(list, path: "items.2.title") { titles.append($0 as? String) }
        list.items.removeAll { $0 === done }
        x.title = "x2"
        #expect(titles.elements == ["x2"])  // once [nil]
    }

    /// The same doc: "it is followed through moves". replaceAll(with:) reports the element
    /// as a move (`batchUpdates.moves`), but its edits remove it and insert it elsewhere, and
    /// the object-following path takes the removal for the element leaving: unreachable for
    /// good, though it is still in the array.
    @Test func anObjectFollowingElementIsFollowedThroughAMoveByReplaceAll() {
        let model = CollectionsModel()
        let a = SameIDItem(1)
        let b = SameIDItem(2)
        let c = SameIDItem(3)
        model.objects.append(contentsOf: [a, b, c])
        let observer = TestObserver()
        let moves = Recording<[ArrayBatchUpdates.Move]>()
        observer.observe(model.objects) { moves.append($0.batchUpdates.moves) }
        let path = ObservedPath(
            model, PropertyPath(\CollectionsModel.objects).appendingElement(startingAt: 2))
        let values = Recording<SameIDItem?>()
        observer.observe(path) { values.append($0.new) }

        model.objects.replaceAll(with: [c, a, b])

        #expect(moves.elements == [[ArrayBatchUpdates.Move(from: 2, to: 0)]])  // holds
        #expect(values.count == 0)
        #expect(path.value === c)
    }

    /// An object-following element that left stays unreachable, even when it comes back.
    @Test func anObjectFollowingElementStaysUnreachableAfterItLeaves() {
        let list = NamedItemList()
        let a = NamedItem("a")
        list.items.append(contentsOf: [NamedItem("x"), a])
        let names = Recording<String?>()
        let observer = TestObserver()
        let observed = observer.observe(
            list,
            PropertyPath(\NamedItemList.items).appendingElement(startingAt: 1).appending(\.$name)
        ) { names.append($0) }
        list.items.insert(NamedItem("y"), at: 0)
        a.name = "a2"
        list.items.sort { $0.name < $1.name }  // moves, does not leave
        a.name = "a3"
        list.items.removeAll { $0 === a }
        list.items.append(a)
        a.name = "a4"
        #expect(names.elements == ["a2", "a3", nil])
        withExtendedLifetime(observed) {}
    }

    /// An object-following element of the root itself that left ends its observation in every
    /// form, the coalesced ones too: it can never fire again, so it no longer counts as an
    /// observation of the array and is freed.
    @Test(arguments: ["observe", "ObservedPath", "coalesced", "coalesced string"])
    func aDeadObjectFollowingElementOfTheRootEndsItsObservation(form: String) throws {
        let items: ObservableArray<Todo> = [Todo("bread"), Todo("milk")]
        let milk = items[1]
        let observer = TestObserver()
        let coalescer = Coalescer(scheduler: TestMessageScheduler())
        let path = try PropertyPath<ObservableArray<Todo>, Any>("1")
        var kept: ObservedPath<ObservableArray<Todo>, Any>?
        var coalesced: CoalescedObservation?
        switch form {
        case "observe": observer.observe(items, path) { _ in }
        case "ObservedPath":
            kept = ObservedPath(items, path)
            observer.observe(kept!) { _ in }
        case "coalesced":
            coalesced = observer.observeCoalesced(items, path, in: coalescer) { _, _ in }
        default:
            coalesced = try observer.observeCoalesced(items, paths: "1", in: coalescer) { _, _ in }
        }
        #expect(items.observationCount == 1)

        items.removeAll { $0 === milk }

        #expect(items.observationCount == 0)
        #expect(!observer.isObserving(items))
        #expect(kept?.isActive != true)
        #expect(coalesced?.isActive != true)
    }

    /// "Object-following `n` … fires when it leaves, then ends": behind a constant link (a `let`
    /// array) the part can never be reached again, so the path can never change again and
    /// ends, as it does at a root array; it does not linger as an observation of the root.
    @Test(arguments: ["string", "typed", "typed, the element at the end"])
    func aDeadObjectFollowingElementBehindALetArrayEndsItsObservation(form: String) throws {
        let list = TodoList()
        let bread = Todo("bread")
        list.items.append(contentsOf: [bread, Todo("milk")])
        let titles = Recording<String?>()
        let observer = TestObserver()
        weak var path: AnyObject?
        switch form {
        case "typed":
            path = observer.observe(
                list,
                PropertyPath(\TodoList.items).appendingElement(startingAt: 0).appending(\.$title)
            ) { titles.append($0) }
        case "typed, the element at the end":
            path = observer.observe(
                list, PropertyPath(\TodoList.items).appendingElement(startingAt: 0)
            ) { titles.append($0?.title) }
        default:
            path = try observer.observe(list, path: "items.0.title") {
                titles.append($0 as? String)
            }
        }

        list.items.remove(at: 0)

        #expect(titles.elements == [nil])
        #expect(!observer.isObserving(list))
        #expect(path == nil)  // ended, and freed
    }

    /// When the array stops being observed, an object-following element's position is lost
    /// (only its observation followed it): the part is unreachable for good, as when the
    /// element leaves. (Observed again at its starting index, it would be another element.)
    @Test func anObjectFollowingElementIsLostWhenTheArrayStopsBeingObserved() {
        let model = CollectionsModel()
        model.items.append(contentsOf: [10, 11, 12])
        let observer = TestObserver()
        let values = Recording<Int?>()
        let path = observer.observe(
            model, PropertyPath(\CollectionsModel.items).appendingElement(startingAt: 1)
        ) { values.append($0) }
        model.items.insert(9, at: 0)  // 11 moves to index 2: nothing
        model.items.stopBeingObserved()
        #expect(path.value == nil)
        model.items.remove(at: 2)  // 11 leaves: nothing more
        model.items.insert(11, at: 1)
        #expect(values.elements == [nil])
    }

    /// Two paths follow the same index; one stops: the other still fires.
    @Test func anIndexFollowedTwiceStillFiresAfterOnePathStops() {
        let list = NamedItemList()
        list.numbers.append(contentsOf: [1, 2, 3])
        let path = PropertyPath(\NamedItemList.numbers).appendingElement(at: 1)
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
        let list = NamedItemList()
        let oldArray = list.archive
        let values = Recording<Int?>()
        let observer = TestObserver()
        let observed = observer.observe(
            list, PropertyPath(\NamedItemList.$archive).appendingElement(at: 0)
        ) { values.append($0) }
        list.archive = [5]
        oldArray[0] = 99
        list.archive[0] = 6
        #expect(values.elements == [5, 6])
        #expect(oldArray.observationCount == 0)
        withExtendedLifetime(observed) {}
    }
}

final class Grid {
    let rows: ObservableArray<ObservableArray<Int>> = [[1, 2], [3, 4]]
}

extension ArrayPathTests {
    /// Paths through nested collections: `rows.1.0` follows the second row, then its first
    /// element.
    @Test func aPathGoesThroughNestedArrays() throws {
        let grid = Grid()
        let values = Recording<Int?>()
        let observer = TestObserver()
        try observer.observe(grid, path: "rows.1.#0") { values.append($0 as? Int) }

        grid.rows[1][0] = 30
        grid.rows.insert([9], at: 0)  // the followed row moves to index 2
        grid.rows[2][0] = 31
        grid.rows[1][0] = 90  // another row

        #expect(values.elements == [30, 31])
    }

    /// One mutation that touches many observed parts calls each observer once; the
    /// object-following observation that fired ends, the others stay.
    @Test func oneMutationCallsEachObserverOnce() throws {
        let list = TodoList()
        list.numbers.append(contentsOf: [0, 1, 2, 3, 4])
        let calls = Recording<String>()
        let observer = TestObserver()
        try observer.observe(list, path: "numbers.#3") { calls.append("#3 \($0 as? Int ?? -1)") }
        try observer.observe(list, path: "numbers.3") { calls.append("3 \($0 as? Int ?? -1)") }
        try observer.observe(list, path: "numbers.*") { _ in calls.append("*") }
        try observer.observe(list, path: "numbers.count") { calls.append("count \($0 ?? "-")") }

        list.numbers.removeAll()
        #expect(calls.elements.sorted() == ["#3 -1", "*", "3 -1", "count 0"])

        list.numbers.append(contentsOf: [5, 6, 7, 8])
        #expect(calls.elements.count == 7)  // #3, * and count again; 3 ended
        #expect(calls.elements.suffix(3).sorted() == ["#3 8", "*", "count 4"])
    }

    /// A collection made from another carries none of its observations.
    @Test func aCollectionMadeFromAnotherCarriesNoObservations() throws {
        let list = TodoList()
        let observer = TestObserver()
        try observer.observe(list, path: "numbers.count") { _ in }
        let copy = ObservableArray(list.numbers)
        #expect(list.numbers.observationCount == 1)
        #expect(copy.observationCount == 0)
    }
}

@Suite("Array parts against a brute-force model")
struct ArrayPartModelTests {
    /// 10,000 seeded random edits (ranges replaced by fewer or more elements among them) and
    /// batches on an array of distinct elements, with
    /// index-following observers on several indices (some past the end) and object-following
    /// observers: after every mutation, what each observer received is what a brute-force
    /// model of EBN's rules says must fire.
    @Test(arguments: [5, 6] as [UInt64])
    func indexAndObjectFollowingObserversFireExactlyWhenTheModelSays(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let list = TodoList()
        list.numbers.append(contentsOf: 0..<12)
        var next = 100
        let observer = TestObserver()
        let indices = [0, 3, 7, 11, 14]
        var indexRecords: [Int: Recording<Int?>] = [:]
        for index in indices {
            let record = Recording<Int?>()
            indexRecords[index] = record
            try observer.observe(list, path: "numbers.#\(index)") { record.append($0 as? Int) }
        }
        // Object-following: the elements at 2, 5 and 9 when the observation starts.
        var followed: [(element: Int, record: Recording<Int?>, gone: Bool)] = []
        for index in [2, 5, 9] {
            let record = Recording<Int?>()
            followed.append((list.numbers[index], record, false))
            try observer.observe(list, path: "numbers.\(index)") { record.append($0 as? Int) }
        }
        var expectedIndex: [Int: [Int?]] = [:]
        for step in 0..<10_000 {
            let before = list.numbers.elements
            let count = before.count
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                list.numbers.insert(next, at: Int.random(in: 0...count, using: &random))
            case 1 where count > 0:
                list.numbers.remove(at: Int.random(in: 0..<count, using: &random))
            case 2 where count > 0:
                list.numbers[Int.random(in: 0..<count, using: &random)] = next
            case 4:
                // A range replaced by a different number of elements, some of them the same.
                let lower = Int.random(in: 0...count, using: &random)
                let upper = Int.random(in: lower...min(count, lower + 3), using: &random)
                var new = (0..<Int.random(in: 0...3, using: &random)).map { next + $0 }
                if !new.isEmpty, lower < upper, Bool.random(using: &random) {
                    new[0] = before[lower]
                }
                list.numbers.replaceSubrange(lower..<upper, with: new)
                next += 3
            case 3 where count > 1:
                list.numbers.swapAt(
                    Int.random(in: 0..<count, using: &random),
                    Int.random(in: 0..<count, using: &random))
            default:
                list.numbers.mutate { numbers in
                    numbers.append(next)
                    numbers.append(next + 1)
                    if numbers.count > 20 { numbers.removeFirst(3) }
                }
                next += 1
            }
            next += 1
            let after = list.numbers.elements
            // The model: an index fires when the element there (or reachability) changed.
            for index in indices {
                let old = index < before.count ? before[index] : nil
                let new = index < after.count ? after[index] : nil
                if old != new { expectedIndex[index, default: []].append(new) }
                // When each fires, step by step (the values are compared at the end).
                #expect(
                    indexRecords[index]?.count == expectedIndex[index]?.count ?? 0,
                    "seed \(seed) step \(step) index \(index)")
            }
            // Object-following: fires (unreachable) once, when its element leaves; then ends.
            for slot in followed.indices where !followed[slot].gone {
                if !after.contains(followed[slot].element) { followed[slot].gone = true }
                let expected: [Int?] = followed[slot].gone ? [nil] : []
                #expect(
                    followed[slot].record.elements == expected, "seed \(seed) step \(step)")
            }
        }
        for index in indices {
            #expect(indexRecords[index]?.elements == expectedIndex[index, default: []])
        }
    }
}
