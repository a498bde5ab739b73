import HeraldTestSupport
import Messaging
import Testing

@Suite("Variable")
struct VariableTests {
    @Test func aVariableSendsAnUpdateOnlyWhenItsValueChanges() {
        let number = Var(1)
        let observer = RecordingObserver<Update<Int>>()
        observer.record(number)
        number.value = 1
        number.value = 2
        number.value = 2
        number <- 3
        #expect(observer.messages.elements == [Update(1, 2), Update(2, 3)])
    }

    @Test func sendOnAVariableSendsTheCurrentValueAsOldAndNew() {
        let text = Var("hello")
        let observer = RecordingObserver<Update<String>>()
        observer.record(text)
        text.send()
        #expect(observer.messages.elements == [Update("hello", "hello")])
        #expect(text.latestMessage == Update("hello", "hello"))
    }

    @Test func classReferencesChangeByIdentityEvenWhenNotEquatable() {
        final class User {}
        let first = User()
        let second = User()
        let user = Var<User?>(first)
        let observer = RecordingObserver<Update<User?>>()
        observer.record(user)

        user.value = first
        user.value = second
        user.value = nil
        user.value = nil

        let updates = observer.messages.elements
        #expect(updates.count == 2)
        #expect(updates.first?.old === first)
        #expect(updates.first?.new === second)
        #expect(updates.last?.new == nil)
    }

    @Test func equatableClassesAlsoChangeByIdentity() {
        final class Point: Equatable {
            let x: Int
            init(_ x: Int) { self.x = x }
            static func == (lhs: Point, rhs: Point) -> Bool { lhs.x == rhs.x }
        }
        let point = Var(Point(1))
        let observer = RecordingObserver<Update<Point>>()
        observer.record(point)
        point.value = Point(1)  // equal but another object: a change (key paths must re-wire)
        #expect(observer.messages.count == 1)
    }

    @Test func classBoundExistentialsAndAnyObjectChangeByIdentity() {
        final class Service: Identified {}
        let first = Service()
        let second = Service()
        let service = Var<any Identified>(first)
        let optionalService = Var<(any Identified)?>(first)
        let object = Var<AnyObject>(first)
        let optionalObject = Var<AnyObject?>(nil)
        let log = Recording<String>()
        let observer = TestObserver()
        observer.observe(service) { _ in log.append("service") }
        observer.observe(optionalService) { _ in log.append("optional service") }
        observer.observe(object) { _ in log.append("object") }
        observer.observe(optionalObject) { _ in log.append("optional object") }

        service.value = first
        optionalService.value = first
        object.value = first
        optionalObject.value = nil
        #expect(log.elements.isEmpty)

        service.value = second
        optionalService.value = nil
        object.value = second
        optionalObject.value = first
        #expect(log.elements == ["service", "optional service", "object", "optional object"])
    }

    @Test func nestedOptionalClassReferencesDistinguishTheirNils() {
        final class Node {}
        let node = Node()
        let nested = Var<Node??>(.some(nil))
        let observer = RecordingObserver<Update<Node??>>()
        observer.record(nested)
        nested.value = .some(nil)  // same: no change
        nested.value = nil  // another nil: a change
        nested.value = .some(node)
        nested.value = .some(node)
        #expect(observer.messages.count == 2)
    }

    @Test func nonEquatableValuesAlwaysCountAsChanged() {
        struct Opaque { var number: Int }
        let opaque = Var(Opaque(number: 1))
        let observer = RecordingObserver<Update<Opaque>>()
        observer.record(opaque)
        opaque.value = Opaque(number: 1)
        #expect(observer.messages.count == 1)
    }

    @Test func optionalEquatableValuesChangeByEquality() {
        let text = Var<String?>()
        #expect(text.value == nil)
        let observer = RecordingObserver<Update<String?>>()
        observer.record(text)
        text.value = nil
        text.value = "a"
        text.value = "a"
        #expect(observer.messages.elements == [Update(nil, "a")])
    }

    @Test func handlersRunAfterTheChange() {
        let number = Var(0)
        let seen = Recording<Int>()
        let observer = TestObserver()
        observer.observe(number) { _ in seen.append(number.value) }
        number.value = 5
        #expect(seen.elements == [5])
    }

    @Test func setWithAnAuthorDeliversThatAuthor() {
        let number = Var(0)
        let author = Author("controller")
        let observer = RecordingObserver<Update<Int>>()
        observer.record(number)
        number.set(42, as: author)
        number.value = 43
        #expect(observer.authors.elements.first === author)
        #expect(observer.authors.elements.last === number)
    }

    @Test func reentrantSetsDeliverAConsistentChainOfUpdates() {
        let number = Var(0)
        let clamp = TestObserver()
        let observer = RecordingObserver<Update<Int>>()
        clamp.observe(number) { update in
            if update.new > 10 { number.value = 10 }
        }
        observer.record(number)
        number.value = 15
        #expect(observer.messages.elements == [Update(0, 15), Update(15, 10)])
        #expect(number.value == 10)
    }

    /// A value that a set replaces is released after the variable's lock, observed or not: its
    /// deinit may use the variable (under the lock, this read would wait for itself).
    @Test(arguments: [false, true])
    func aReplacedValueIsReleasedOutsideTheLock(observed: Bool) {
        let variable = Var<OnDeinit?>(nil)
        let observer = TestObserver()
        // Counted, not kept: a kept update would keep the token alive.
        let updates = Recording<Bool>()
        if observed { observer.observe(variable) { updates.append($0.new == nil) } }
        let seenInDeinit = Recording<Bool>()
        variable.value = OnDeinit { [unowned variable] in
            seenInDeinit.append(variable.value == nil)
        }
        variable.value = nil
        #expect(seenInDeinit.elements == [true])
        #expect(updates.elements == (observed ? [false, true] : []))
    }

    @Test func observableVarExposesItsVariableAsProjectedValue() {
        final class Model {
            @ObservableVar var title = "Untitled"
        }
        let model = Model()
        let observer = RecordingObserver<Update<String>>()
        observer.record(model.$title)
        model.title = "Draft"
        #expect(model.title == "Draft")
        #expect(model.$title.value == "Draft")
        #expect(observer.messages.elements == [Update("Untitled", "Draft")])
    }

    @Test func variablesCompareByValue() {
        #expect(Var(1) == Var(1))
        #expect(Var(1) < Var(2))
        #expect(Var("a").description == "a")
    }
}

/// A class-bound protocol for the change-rule tests.
protocol Identified: AnyObject {}
