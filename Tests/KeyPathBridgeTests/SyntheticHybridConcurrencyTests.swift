import Dispatch
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge

/// `label` reads the synthetic `positive`, whose function can be held at a gate.
final class HeldCheck: @unchecked Sendable {
    @ObservableVar var input = 1
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let hold = Atomic<Bool>(false)
    @Synthetic({ (s: HeldCheck) in
        let positive = s.input > 0
        if s.hold.load(ordering: .sequentiallyConsistent) {
            s.entered.signal()
            s.gate.wait()
        }
        return positive
    })
    var positive: Bool
    @Synthetic({ (s: HeldCheck) in s.positive ? "yes" : "no" }) var label: String
}

@Suite("Synthetic properties: a hybrid set racing a check (concurrency)", .serialized)
struct SyntheticHybridConcurrencyTests {
    /// A set while another thread checks the property's sources (it may be stale) must be kept,
    /// as it is when the set comes during an evaluation (`finishEvaluation`). Found in review:
    /// the check saw the marks move and evaluated, storing its value over the one set.
    @Test func aSetDuringACheckIsKept() {
        let model = HeldCheck()
        #expect(model.label == "yes")
        model.hold.store(true, ordering: .sequentiallyConsistent)
        model.input = 2  // positive: invalid; label: may be stale
        let box = UncheckedBox(model)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = box.value.label  // checks label's sources: evaluates positive, held at the gate
            done.signal()
        }
        model.entered.wait()
        model.label = "set"  // hybrid: valid until the next invalidation
        model.hold.store(false, ordering: .sequentiallyConsistent)
        model.gate.signal()
        done.wait()
        // positive is still true: nothing invalidated label after the set.
        #expect(model.label == "set")
        #expect(model.$label.evaluationCount == 1)
    }

    /// The same set during an evaluation is kept (for comparison).
    @Test func aSetDuringAnEvaluationIsKept() {
        let model = HeldCheck()
        #expect(model.label == "yes")
        model.hold.store(true, ordering: .sequentiallyConsistent)
        model.$label.invalidate()
        model.$positive.invalidate()
        let box = UncheckedBox(model)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = box.value.label  // evaluates label, which evaluates positive, held at the gate
            done.signal()
        }
        model.entered.wait()
        model.label = "set"
        model.hold.store(false, ordering: .sequentiallyConsistent)
        model.gate.signal()
        done.wait()
        #expect(model.label == "set")
    }
}

/// The same rule on the state alone, without threads.
@Suite("Synthetic properties: the state's check and a hybrid set")
struct SyntheticStateCheckTests {
    @Test func aSetDuringACheckMakesTheCheckEndValid() {
        var state = SyntheticState()
        let thread = ObjectIdentifier(SyntheticStateCheckTests.Token())
        _ = state.beginRead(by: thread)
        _ = state.finishEvaluation(changed: true, marks: 0)
        // A synthetic source may have changed.
        _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        guard case .check(let marks) = state.beginRead(by: thread) else {
            Issue.record("expected a check")
            return
        }
        let (store, _, _) = state.set(changed: true)
        #expect(store)
        let versionAfterSet = state.version
        guard case .valid(let version) = state.finishChecking(sourceMoved: false, marks: marks)
        else {
            Issue.record("the set value must stand")
            return
        }
        #expect(version == versionAfterSet)
        #expect(state.computingThread == nil)
    }

    @Test func anInvalidationDuringACheckStillEvaluates() {
        var state = SyntheticState()
        let thread = ObjectIdentifier(SyntheticStateCheckTests.Token())
        _ = state.beginRead(by: thread)
        _ = state.finishEvaluation(changed: true, marks: 0)
        _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        guard case .check(let marks) = state.beginRead(by: thread) else {
            Issue.record("expected a check")
            return
        }
        _ = state.mark(definitely: true, marking: 1, setsOverStale: 0)
        guard case .evaluate = state.finishChecking(sourceMoved: false, marks: marks) else {
            Issue.record("an invalidation during the check must lead to an evaluation")
            return
        }
    }

    /// A state checked by `thread` after a value was computed and a synthetic source marked,
    /// and the marks the check began at.
    static func checking(by thread: ObjectIdentifier) -> (SyntheticState, UInt64)? {
        var state = SyntheticState()
        _ = state.beginRead(by: thread)
        _ = state.finishEvaluation(changed: true, marks: 0)
        _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        guard case .check(let marks) = state.beginRead(by: thread) else { return nil }
        return (state, marks)
    }

    @Test func aCheckIsOvertakenByAnInvalidationUntilItEnds() throws {
        let thread = ObjectIdentifier(Token())
        var (state, marks) = try #require(Self.checking(by: thread))
        #expect(!state.checkWasOvertaken)
        _ = state.mark(definitely: true, marking: 1, setsOverStale: 0)
        #expect(state.checkWasOvertaken)
        _ = state.finishChecking(sourceMoved: false, marks: marks)
        #expect(!state.checkWasOvertaken)
    }

    /// A state that was computed and has a dependent.
    private static func computedWithADependent() -> SyntheticState {
        var state = SyntheticState()
        _ = state.beginRead(by: ObjectIdentifier(Token()))
        _ = state.finishEvaluation(changed: true, marks: 0)
        state.dependents = DependentList.adding(Synthetic<Token, Int>({ _ in 0 }), to: nil)
        return state
    }

    @Test func aStalePropertyTellsItsDependentsAgainAfterASetOverStale() {
        var state = Self.computedWithADependent()
        // Was valid: tells. Told then: does not. A set since: tells. Told again: does not.
        #expect(state.mark(definitely: true, marking: 1, setsOverStale: 0).dependents != nil)
        #expect(state.mark(definitely: true, marking: 2, setsOverStale: 0).dependents == nil)
        #expect(state.mark(definitely: true, marking: 3, setsOverStale: 1).dependents != nil)
        #expect(state.mark(definitely: true, marking: 4, setsOverStale: 1).dependents == nil)
    }

    @Test func aPropertyTellsItsDependentsOncePerMarking() {
        var state = Self.computedWithADependent()
        #expect(state.mark(definitely: false, marking: 1, setsOverStale: 0).dependents != nil)
        // Reached again in the same marking: neither a set since nor a computation running
        // makes it tell again.
        #expect(state.mark(definitely: false, marking: 1, setsOverStale: 1).dependents == nil)
        _ = state.beginRead(by: ObjectIdentifier(Token()))  // checks: a computation running
        #expect(state.mark(definitely: false, marking: 1, setsOverStale: 2).dependents == nil)
        #expect(state.mark(definitely: false, marking: 2, setsOverStale: 2).dependents != nil)
    }

    @Test func aSetOverStaleSourcesIsInvalidatedByAnyChangeAbove() {
        var state = Self.computedWithADependent()
        _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        #expect(state.set(changed: true).overStale)
        _ = state.mark(definitely: false, marking: 2, setsOverStale: 1)
        #expect(state.freshness == .invalid)
        // A set over a computed valid value is not over stale sources: a change above may
        // leave it.
        var computed = Self.computedWithADependent()
        #expect(!computed.set(changed: true).overStale)
        _ = computed.mark(definitely: false, marking: 3, setsOverStale: 1)
        #expect(computed.freshness == .mayBeStale)
    }

    /// Found by the adversarial round: a second set, over the value the first one set over stale
    /// sources, made the property forget that, so that the next change above left the value
    /// standing (and a check then followed what it read before the change, which could close a
    /// circle that no state has).
    @Test func aSetOverAValueSetOverStaleSourcesIsOverThemToo() {
        var state = Self.computedWithADependent()
        _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        #expect(state.set(changed: true).overStale)
        _ = state.set(changed: true)
        _ = state.mark(definitely: false, marking: 2, setsOverStale: 1)
        #expect(state.freshness == .invalid)
    }

    @Test func aSetOfAPropertyNeverEvaluatedIsNotOverStale() {
        var state = SyntheticState()
        #expect(!state.set(changed: true).overStale)  // it read nothing: in no dependents list
        _ = state.mark(definitely: true, marking: 1, setsOverStale: 0)
        #expect(!state.set(changed: true).overStale)
    }

    @Test func aReadInsideTheThreadsOwnCheckIsACycleUnlessTheCheckWasOvertaken() throws {
        let thread = ObjectIdentifier(Token())
        var (state, checkStart) = try #require(Self.checking(by: thread))
        guard case .cycle = state.beginRead(by: thread) else {
            Issue.record("a read inside the thread's own check that was not overtaken is a cycle")
            return
        }
        _ = state.mark(definitely: true, marking: 2, setsOverStale: 0)
        guard case .evaluate(let marks) = state.beginRead(by: thread) else {
            Issue.record("an overtaken check lets the property be computed inside it")
            return
        }
        let stored = state.finishEvaluation(changed: true, marks: marks)
        #expect(stored)
        #expect(state.computingThread == thread)  // the check goes on
        guard case .valid = state.beginRead(by: thread) else {
            Issue.record("computed inside the check: valid")
            return
        }
        guard case .valid = state.finishChecking(sourceMoved: true, marks: checkStart) else {
            Issue.record("the check finds the property valid")
            return
        }
        #expect(state.computingThread == nil)
    }

    /// What happened during an interrupted check, and what it may do.
    struct Interruption: Sendable, CustomTestStringConvertible {
        enum Meanwhile: Sendable { case nothing, invalidated, markedMayBeStale, set }
        enum Outcome: Sendable { case leftUndone, evaluate, valid }
        let meanwhile: Meanwhile
        let mayLeaveUndone: Bool
        let outerCheckOvertaken: Bool
        let outcome: Outcome
        var testDescription: String {
            "\(meanwhile), mayLeaveUndone \(mayLeaveUndone), outer overtaken "
                + "\(outerCheckOvertaken) → \(outcome)"
        }
    }

    @Test(arguments: [
        // Not overtaken, made for an overtaken check: left for a later read.
        Interruption(
            meanwhile: .nothing, mayLeaveUndone: true, outerCheckOvertaken: true,
            outcome: .leftUndone),
        // Overtaken: it is the check that decides nothing, so it computes.
        Interruption(
            meanwhile: .invalidated, mayLeaveUndone: true, outerCheckOvertaken: false,
            outcome: .evaluate),
        // Overtaken, inside an overtaken one: that one decides.
        Interruption(
            meanwhile: .markedMayBeStale, mayLeaveUndone: true, outerCheckOvertaken: true,
            outcome: .leftUndone),
        // Made for a read, which needs a value.
        Interruption(
            meanwhile: .nothing, mayLeaveUndone: false, outerCheckOvertaken: true,
            outcome: .evaluate),
        // A set stands.
        Interruption(
            meanwhile: .set, mayLeaveUndone: true, outerCheckOvertaken: false, outcome: .valid),
    ])
    func anInterruptedCheck(_ interruption: Interruption) throws {
        let thread = ObjectIdentifier(Token())
        var (state, marks) = try #require(Self.checking(by: thread))
        switch interruption.meanwhile {
        case .nothing: break
        case .invalidated: _ = state.mark(definitely: true, marking: 1, setsOverStale: 0)
        case .markedMayBeStale: _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        case .set: _ = state.set(changed: true)
        }
        let step = state.finishInterruptedCheck(
            marks: marks, mayLeaveUndone: interruption.mayLeaveUndone,
            outerCheckOvertaken: interruption.outerCheckOvertaken)
        switch (step, interruption.outcome) {
        case (.leftUndone, .leftUndone):
            #expect(state.computingThread == nil)
            #expect(state.freshness == .mayBeStale)
            guard case .check = state.beginRead(by: thread) else {
                Issue.record("the next read must check again")
                break
            }
        case (.evaluate, .evaluate):
            #expect(state.computingThread == thread)
        case (.valid, .valid):
            #expect(state.computingThread == nil)
        default:
            Issue.record("expected \(interruption.outcome), got \(step)")
        }
        #expect(!state.checkWasOvertaken)
    }

    final class Token {}
}
