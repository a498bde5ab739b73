import HeraldTestSupport
import KeyPathBridge
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
        list.items.append(milk)  // joins
        milk.title = "oat milk"
        list.items.append(milk)  // held twice
        list.items.remove(at: 1)  // still held once
        milk.title = "soy milk"
        list.items.removeAll { $0 === milk }  // leaves
        milk.title = "gone"

        #expect(titles.elements == ["rye bread", "oat milk", "soy milk"])
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
        #expect(each.elements == ["oat milk"])
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
