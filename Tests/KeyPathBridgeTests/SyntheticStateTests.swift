import Testing

@testable import KeyPathBridge
@testable import Messaging

/// The state machine of one synthetic property, without threads: who holds it, what a read
/// does, and which results are stored.
@Suite("Synthetic properties: the state of one property")
struct SyntheticStateTests {
    private let me = ObjectIdentifier(Parker())
    private let other = ObjectIdentifier(Parker())
    private final class OverStaleOwner {}

    /// A state that was computed and has a dependent.
    private func computedWithADependent() -> SyntheticState {
        var state = SyntheticState()
        _ = state.beginRead(by: ObjectIdentifier(OverStaleOwner()), knownNotReentering: true)
        _ = state.finishEvaluation(changed: true, tainted: false, since: 0)
        state.dependents = DependentList.adding(
            Synthetic<OverStaleOwner, Int>({ _ in 0 }), to: nil, of: OverStaleOwner())
        return state
    }

    @Test func aFirstReadComputesAndHoldsTheProperty() {
        var state = SyntheticState()
        let step1 = state.beginRead(by: me, knownNotReentering: true)
        #expect(step1 == .evaluate(since: 0))
        #expect(state.phase == .computing(by: me, since: 0))
        let end = state.finishEvaluation(changed: true, tainted: false, since: 0)
        #expect(end.store && end.isCurrent && !end.requeue)
        #expect(state.phase == .idle)
        let step2 = state.beginRead(by: other, knownNotReentering: true)
        #expect(step2 == .valid(1))
    }

    @Test func aReadOfAHeldPropertyIsBusyAndAWaiterIsWokenWhenTheHolderLetsGo() {
        var state = SyntheticState()
        _ = state.beginRead(by: me, knownNotReentering: true)
        let step3 = state.beginRead(by: other, knownNotReentering: true)
        #expect(step3 == .busy)
        let parker = Parker()
        let step4 = state.wait(with: parker)
        #expect(step4)
        let end = state.finishEvaluation(changed: true, tainted: false, since: 0)
        #expect(end.release.waiters?.count == 1)
        #expect(state.waiters.isEmpty)
        // Once it is valid, or nobody holds it, there is nothing to wait for.
        let waits = state.wait(with: parker)
        #expect(!waits)
    }

    @Test func anEvaluationOvertakenByAnInvalidationIsNotStoredNorCurrent() {
        var state = SyntheticState()
        _ = state.beginRead(by: me, knownNotReentering: true)
        _ = state.mark(definitely: true, marking: 1, setsOverStale: 0)
        let end = state.finishEvaluation(changed: true, tainted: false, since: 0)
        #expect(!end.store && !end.isCurrent)
        #expect(state.freshness == .invalid)
        let step5 = state.beginRead(by: me, knownNotReentering: true)
        #expect(step5 == .evaluate(since: 1))
    }

    @Test func aTaintedEvaluationIsNotStoredAndAnObservedOneIsQueuedAgain() {
        var state = SyntheticState()
        _ = state.setObserved(true)
        _ = state.beginRead(by: me, knownNotReentering: true)
        let end = state.finishEvaluation(changed: true, tainted: true, since: 0)
        #expect(!end.store && !end.isCurrent && end.requeue)
        #expect(state.freshness == .invalid)
    }

    @Test func aSetDuringAnEvaluationStandsAndTheEvaluationIsNotStored() {
        var state = SyntheticState()
        _ = state.beginRead(by: me, knownNotReentering: true)
        let step6 = state.set(changed: true)
        #expect(step6.store)
        let end = state.finishEvaluation(changed: true, tainted: false, since: 0)
        #expect(!end.store)
        #expect(state.freshness == .valid)
    }

    @Test func aCheckThatFindsNothingMovedMakesThePropertyValid() {
        var state = SyntheticState()
        _ = state.beginRead(by: me, knownNotReentering: true)
        _ = state.finishEvaluation(changed: true, tainted: false, since: 0)
        _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        let step7 = state.beginRead(by: me, knownNotReentering: true)
        #expect(step7 == .check(since: 1))
        let (step, _) = state.finishChecking(sourceMoved: false, since: 1)
        #expect(step == .valid(1))
        #expect(state.phase == .idle)
    }

    @Test func aCheckThatFindsASourceMovedOrWasOvertakenComputes() {
        var state = SyntheticState()
        _ = state.beginRead(by: me, knownNotReentering: true)
        _ = state.finishEvaluation(changed: true, tainted: false, since: 0)
        _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        _ = state.beginRead(by: me, knownNotReentering: true)
        let step8 = state.finishChecking(sourceMoved: true, since: 1)
        #expect(step8.0 == .evaluate(since: 1))
        #expect(state.phase == .computing(by: me, since: 1))
        _ = state.finishEvaluation(changed: false, tainted: false, since: 1)
        _ = state.mark(definitely: false, marking: 2, setsOverStale: 0)
        _ = state.beginRead(by: me, knownNotReentering: true)
        _ = state.mark(definitely: false, marking: 3, setsOverStale: 0)
        let step9 = state.finishChecking(sourceMoved: false, since: 2)
        #expect(step9.0 == .evaluate(since: 3))
    }

    @Test func whileAComputationAsideRunsAReadThatMayBeAReentryIsBusy() {
        var state = SyntheticState()
        _ = state.beginRead(by: other, knownNotReentering: true)
        state.beginAside()
        _ = state.finishEvaluation(changed: true, tainted: false, since: 0)
        _ = state.mark(definitely: true, marking: 1, setsOverStale: 0)
        // Idle, but a thread computing aside may be re-entering: it must look at its stack.
        let mayReenter = state.beginRead(by: me, knownNotReentering: false)
        #expect(mayReenter == .busy)
        let known = state.beginRead(by: me, knownNotReentering: true)
        #expect(known == .evaluate(since: 1))
        state.finishAside()
        #expect(state.asides == 0)
    }

    // A property set over stale sources (see `SyntheticState.set(changed:)`).

    @Test func aStalePropertyTellsItsDependentsAgainAfterASetOverStale() {
        var state = computedWithADependent()
        // Was valid: tells. Told then: does not. A set since: tells. Told again: does not.
        #expect(state.mark(definitely: true, marking: 1, setsOverStale: 0).dependents != nil)
        #expect(state.mark(definitely: true, marking: 2, setsOverStale: 0).dependents == nil)
        #expect(state.mark(definitely: true, marking: 3, setsOverStale: 1).dependents != nil)
        #expect(state.mark(definitely: true, marking: 4, setsOverStale: 1).dependents == nil)
    }

    @Test func aSetOverStaleSourcesIsInvalidatedByAnyChangeAbove() {
        var state = computedWithADependent()
        _ = state.mark(definitely: false, marking: 1, setsOverStale: 0)
        #expect(state.set(changed: true).overStale)
        _ = state.mark(definitely: false, marking: 2, setsOverStale: 1)
        #expect(state.freshness == .invalid)
        // A set over a computed valid value is not over stale sources: a change above may
        // leave it.
        var computed = computedWithADependent()
        #expect(!computed.set(changed: true).overStale)
        _ = computed.mark(definitely: false, marking: 3, setsOverStale: 1)
        #expect(computed.freshness == .mayBeStale)
    }

    /// Found by the adversarial round: a second set, over the value the first one set over stale
    /// sources, made the property forget that, so that the next change above left the value
    /// standing (and a check then followed what it read before the change, which could close a
    /// circle that no state has).
    @Test func aSetOverAValueSetOverStaleSourcesIsOverThemToo() {
        var state = computedWithADependent()
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
}
