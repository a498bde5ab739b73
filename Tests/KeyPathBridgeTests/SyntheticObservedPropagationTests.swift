import HeraldTestSupport
import Testing

@testable import KeyPathBridge
@testable import Messaging

/// A variable and a synthetic property ten times it.
final class Tenfold {
    @ObservableVar var x = 1
    @Synthetic({ (t: Tenfold) in t.x * 10 }) var tenfold: Int
}

/// An observed property is brought up to date at once after each change, and sends one
/// `Update(old, new)` per change of its value; an equal recomputation sends nothing and
/// recomputes nothing after it.
@Suite("Synthetic properties: observed means eager; updates only on change")
struct SyntheticObservedPropagationTests {
    @Test("observed means eager: starting to observe evaluates the property and its sources")
    func startingToObserveEvaluatesThePropertyAndItsSources() {
        let contact = Contact()
        let observer = TestObserver()
        observer.observe(contact.$address) { _ in }
        #expect(contact.$address.evaluationCount == 1)
        #expect(contact.$fullName.evaluationCount == 1)
        #expect(contact.$address.isValid)
    }

    @Test("observed means eager: one update per change, computed at once")
    func anObservedPropertySendsOneUpdatePerChangeComputedAtOnce() {
        let contact = Contact()
        let observer = TestObserver()
        let updates = Recording<Update<String>>()
        observer.observe(contact.$fullName) { updates.append($0) }
        contact.first = "Grace"
        #expect(contact.$fullName.isValid)
        #expect(updates.elements == [Update("Ada Lovelace", "Grace Lovelace")])
        contact.last = "Hopper"
        #expect(
            updates.elements == [
                Update("Ada Lovelace", "Grace Lovelace"), Update("Grace Lovelace", "Grace Hopper"),
            ])
        #expect(contact.$fullName.evaluationCount == 3)
    }

    @Test("observed means eager: an equal recomputation sends nothing and recomputes nothing")
    func anEqualRecomputationSendsNothingAndRecomputesNothing() {
        let contact = Contact()
        let observer = TestObserver()
        let updates = Recording<Update<String>>()
        observer.observe(contact.$address) { updates.append($0) }
        contact.$fullName.invalidate()
        #expect(contact.$fullName.evaluationCount == 2)
        #expect(contact.$address.evaluationCount == 1)
        #expect(updates.elements.isEmpty)
    }

    /// The same with `top` and `branch` observed (so they are brought up to date eagerly, in
    /// the propagation after each write): one write at a time, each property runs exactly when
    /// something it read changed, and the observers hear exactly the value changes, old and new,
    /// with no intermediate or repeated update.
    @Test("branchy dependencies observed: exact evaluation counts and exact updates")
    func anObservedPropertyRunsAndTellsExactlyWhenWhatItReadChanges() {
        let model = PCBranchy()
        var random = SeededGenerator(seed: 0x0B5E_4FED)
        let observer = TestObserver()
        let topHeard = Recording<String>()
        let branchHeard = Recording<String>()
        observer.observe(model.$top) { topHeard.append("\($0.old)→\($0.new)") }
        observer.observe(model.$branch) { branchHeard.append("\($0.old)→\($0.new)") }
        var values = model.values
        var expectedTop: [String] = []
        var expectedBranch: [String] = []
        for step in 0..<3000 {
            let before = values
            let counts = model.evaluationCounts
            let source = PCSource.base.randomElement(using: &random)!
            let value = Int.random(in: 0...(source == .flag ? 9 : 5), using: &random)
            guard value != values[source] else { continue }
            values[source] = value
            model.write(source, value)
            let read = before.branch.read
            let mustRun =
                read.contains(source)
                || read.contains { PCSource.synthetic.contains($0) && before[$0] != values[$0] }
            let branchChanged = before.branch.value != values.branch.value
            let topMustRun = branchChanged || before.a != values.a
            #expect(
                model.$branch.evaluationCount - counts[3] == (mustRun ? 1 : 0),
                "step \(step): wrote \(source), read \(read)")
            #expect(
                model.$top.evaluationCount - counts[4] == (topMustRun ? 1 : 0), "step \(step)")
            if branchChanged {
                expectedBranch.append("\(before.branch.value)→\(values.branch.value)")
            }
            if before.top != values.top { expectedTop.append("\(before.top)→\(values.top)") }
            if step % 100 == 99 {
                // Reads after the propagation run nothing.
                let after = model.evaluationCounts
                #expect(model.top == values.top && model.branch == values.branch.value)
                #expect(model.evaluationCounts == after, "step \(step)")
            }
        }
        #expect(branchHeard.elements == expectedBranch)
        #expect(topHeard.elements == expectedTop)
    }

    @Test("the variable's own observers run before the observers of what is computed from it")
    func theVariablesObserversRunBeforeThoseOfWhatIsComputedFromIt() {
        let model = Tenfold()
        let observer = TestObserver()
        let order = Recording<String>()
        observer.observe(model.$x) { _ in order.append("x") }
        observer.observe(model.$tenfold) { _ in order.append("tenfold") }
        model.x = 2
        #expect(order.elements == ["x", "tenfold"])
    }

    @Test("order: a handler's change of the variable is heard before the value computed from it")
    func aHandlersChangeOfTheVariableIsHeardBeforeTheValueComputedFromIt() {
        let tens = Tens()
        let observer = TestObserver()
        let log = Recording<String>()
        observer.observe(tens.$a) { update in
            log.append("a \(update.new)")
            if update.new == 1 { tens.a = 2 }
        }
        observer.observe(tens.$tenfold) { update in log.append("tenfold \(update.new)") }
        tens.a = 1
        #expect(log.elements == ["a 1", "a 2", "tenfold 20"])
    }

    /// Observers that, inside their callbacks, read the property, set its sources (a bounded
    /// number of times), invalidate its synthetic sources and set one (hybrid).
    @Test("observers that read, set, invalidate and set (hybrid) inside their callbacks")
    func observersThatReadSetAndInvalidateInsideTheirCallbacksHearChainedUpdates() {
        let model = PCBranchy()
        let observer = TestObserver()
        let log = Recording<String>()
        observer.observe(model.$branch) { update in
            // Each update is a change, and starts from the value the one before it told of.
            let told = log.elements.last { $0.hasPrefix("branch") }
            #expect(update.old != update.new)
            #expect(told == nil || told == "branch \(update.old)", "\(update)")
            log.append("branch \(update.new)")
            if model.a < 5 { model.a += 1 }  // re-marks branch (maybe) and top
            model.$twiceA.invalidate()
        }
        observer.observe(model.$top) { update in
            log.append("top \(update.new)")
            _ = model.branch
            if model.d < 8 { model.d += 1 }
        }
        observer.observe(model.$a) { update in
            if update.new == 3 { model.$bc.set(1000, as: model.$bc) }
        }
        for flag in [1, 0, 2, 3, 4, 1] {
            model.flag = flag
            model.a = 0
            model.b += 1
        }
        model.$bc.invalidate()
        let values = model.values
        #expect(model.branch == values.branch.value)
        #expect(model.top == values.top)
        #expect(log.elements.last(where: { $0.hasPrefix("top") }) == "top \(values.top)")
    }

    @Test("an observed synthetic property as an intermediate of a path is eager")
    func anObservedPropertyAlongAPathIsEager() {
        final class Holder {
            @ObservableVar var contact = Contact()
            @Synthetic({ (holder: Holder) in holder.contact.first == "Ada" ? holder.contact : nil })
            var ada: Contact?
        }
        let holder = Holder()
        let observer = TestObserver()
        let names = Recording<String?>()
        observer.observe(holder, \.$ada, \.$last) { names.append($0) }
        holder.contact.last = "Byron"
        holder.contact.first = "Grace"
        #expect(names.elements == ["Byron", nil])
    }

    @Test("a synthetic property is a binding's source")
    func aSyntheticPropertyIsABindingsSource() {
        let contact = Contact()
        let label = Var("")
        let binding = bind(contact.$fullName, to: label)
        #expect(label.value == "Ada Lovelace")
        contact.first = "Grace"
        #expect(label.value == "Grace Lovelace")
        _ = binding
    }

    @Test("a synthetic property is reachable through string paths and Inspector")
    func aSyntheticPropertyIsReachableThroughStringPathsAndTheInspector() throws {
        let contact = Contact()
        let observer = TestObserver()
        let names = Recording<String?>()
        try observer.observe(contact, path: "fullName") { names.append($0 as? String) }
        contact.last = "King"
        #expect(names.elements == ["Ada King"])
        #expect(try Inspector(contact).observationCount(of: "fullName") == 1)
    }
}
