import HeraldTestSupport
import KeyPathBridge
import Testing

final class AnyBag {
    let anything = Var<Any>(1)
}

@Suite("Review findings")
struct ReviewFindingsTests {
    // 1. Direct end-change path compares with Variable<Any>'s rule, not the end type's
    //    held-value rule that the engine path (and string paths) use.
    @Test func typedPathToAVarOfAnyDoesNotFireForAnEqualValue() throws {
        let bag = AnyBag()
        let typed = Recording<Any?>()
        let string = Recording<Any?>()
        let observer = TestObserver()
        observer.observe(bag, \.anything) { typed.append($0) }
        try observer.observe(bag, path: "anything") { string.append($0) }
        bag.anything.value = 1  // equal value: the Var itself sends (Any has no ==)
        #expect(string.count == 0)
        #expect(typed.count == 0)  // FAILS: 1 (direct path uses the Var's "always changed" rule)
    }

    // 2. swapAt is recorded as two single-element replacements, so an object-following element
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
        #expect(titles.elements == ["a2"])  // FAILS: [nil] (left, and ended for good)
    }

    // 3. removeAll(where:) of an element *before* the followed one: the stdlib's default goes
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
        #expect(titles.elements == ["x2"])  // FAILS: [nil]
    }

    // 4. The same removeAll(where:) message: many replacement edits, and batch updates that
    //    reload and delete the same old index (UIKit rejects that).
    @Test func removeAllWhereIsOneRemoval() {
        let numbers: ObservableArray = [0, 1, 2]
        let observer = TestObserver()
        let changes = Recording<ArrayChange<Int>>()
        observer.observe(numbers) { changes.append($0) }
        numbers.removeAll { $0 == 0 }
        let change = try! #require(changes.elements.first)
        #expect(change.edits == [.removed([0], at: 0)])  // FAILS
        let updates = change.batchUpdates
        #expect(Set(updates.reloads).isDisjoint(with: updates.deletions))
        #expect(
            updates == ArrayBatchUpdates(deletions: [0], insertions: [], reloads: [], moves: []))
    }

    // 5. shuffle is documented as one replacement, but is recorded swap by swap.
    @Test func shuffleIsOneEdit() {
        let numbers = ObservableArray(0..<20)
        let observer = TestObserver()
        let changes = Recording<ArrayChange<Int>>()
        observer.observe(numbers) { changes.append($0) }
        numbers.shuffle()
        #expect(changes.elements.first?.edits.count == 1)  // FAILS: ~2 per swap
    }

    // 6. A batch whose body catches an error thrown from inside a contiguous-storage mutation
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
        #expect(mirror.elements.last == numbers.elements)  // FAILS if the sort moved elements
    }

    // 7. An every-element path keeps a stale value after its elements leave.
    @Test func anEveryElementPathIsUnreachableWhenTheArrayEmpties() {
        let list = TodoList()
        list.items.append(Todo("milk"))
        let titles = ObservedPath(
            list, PropertyPath(\TodoList.items).appendingEachElement().appending(\.$title))
        #expect(titles.value == "milk")
        list.items.removeAll()
        #expect(titles.value == nil)  // FAILS: still "milk"
        #expect(!titles.isReachable)
    }

    // 8. A fan-out sends an update whose old and new are equal.
    @Test func aFanOutNeverSendsEqualOldAndNew() {
        let home = Household(owner: User(name: "A"), tenant: User(name: "B"))
        let names = ObservedPath(
            home, PropertyPath<Household, User?>(everyPropertyHolding: User.self).appending(\.$name)
        )
        let observer = TestObserver()
        let updates = Recording<Update<String?>>()
        observer.observe(names) { updates.append($0) }
        home.tenant?.name = "A"
        #expect(updates.elements.allSatisfy { $0.old != $0.new })  // FAILS: Update("A", "A")
    }
}

extension StringPathTests {
    // 9. A negative object-following index trapped inside the array's lock; it is an error.
    @Test func aNegativeObjectFollowingIndexIsAnErrorNotACrash() {
        let reports = Recording<PathError>()
        PathDiagnostics.setHandler { reports.append($0) }
        defer { PathDiagnostics.setHandler(nil) }
        let list = TodoList()
        list.numbers.append(1)
        let path = ObservedPath(
            list, PropertyPath(\TodoList.numbers).appendingElement(startingAt: -1))
        #expect(path.value == nil)
        #expect(reports.elements == [.indexOutOfRange(-1, count: 1, path: "-1")])
    }
}

@Suite("Review: direct end changes under contention")
struct ReviewDirectPathStressTests {
    @Test func directAndEngineChangesAgreeWithTheModel() {
        for _ in 0..<200 {
            let root = Node()
            let a = Node()
            let b = Node()
            root.child.value = a
            let path = ObservedPath(root, PropertyPath(\Node.child).appending(\.value))
            let observer = TestObserver()
            let updates = Recording<Update<Int?>>()
            observer.observe(path) { updates.append($0) }
            concurrently(threads: 3) { index in
                for step in 1...50 {
                    switch index {
                    case 0: a.value.value = step
                    case 1: b.value.value = -step
                    default: root.child.value = step % 2 == 0 ? a : b
                    }
                }
            }
            let expected = root.child.value?.value.value
            #expect(path.value == expected)
            let sent = updates.elements
            #expect(sent.allSatisfy { $0.old != $0.new })
            // Each update starts where the previous one ended (in order, none lost).
            var last: Int?? = .some(0)
            for update in sent {
                #expect(update.old == last)
                last = update.new
            }
            #expect(last == .some(expected))
        }
    }
}

@Suite("Review: direct end changes, re-entrancy")
struct ReviewDirectPathReentrancyTests {
    @Test func aHandlerThatSetsTheEndAndReplacesTheIntermediateSeesOrderedUpdates() {
        let root = Node()
        let a = Node()
        let b = Node()
        b.value.value = 100
        root.child.value = a
        let path = ObservedPath(root, PropertyPath(\Node.child).appending(\.value))
        let observer = TestObserver()
        let updates = Recording<Update<Int?>>()
        observer.observe(path) { update in
            updates.append(update)
            if update.new == 1 { a.value.value = 2 }  // same variable, re-entrant
            if update.new == 2 {
                root.child.value = b  // replace the intermediate
                a.value.value = 3  // stale now: must not be seen
            }
        }
        a.value.value = 1
        #expect(updates.elements.map(\.new) == [1, 2, 100])
        #expect(updates.elements.map(\.old) == [0, 1, 2])
    }
}
