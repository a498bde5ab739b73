import Dispatch
import Messaging
import Observation
import Synchronization
import Transforms

/// Properties of Swift's `@Observable` classes as sources of synthetic properties.
///
/// Each evaluation runs the function inside `withObservationTracking`, so that the `@Observable`
/// properties it reads are tracked, collected again by every evaluation as Herald's sources are.
/// Observation calls a tracking's `onChange` before the new value is stored, and its public API
/// has no call after the store. A change therefore comes in two steps:
/// - announced, on the setting thread, before the store (`observedPropertyWillChange()`): the
///   property and what depends on it are invalid at once, so a read after the set computes from
///   the new value; until the change settles, no evaluation of the property is stored or current
///   (one may have read the old value);
/// - settled, on the next turn of the main queue if the set was made on it (after the setter
///   returned), else on a global queue (`settle(_:)`): the property is invalid again, which
///   drops whatever was computed meanwhile, and the observed properties that the change reached
///   recompute and tell their observers.
extension Synthetic {
    /// Runs the function on `owner` for the evaluation begun at epoch `since`, tracking what it
    /// reads of `@Observable` objects.
    @usableFromInline
    func computeTrackingObservation(from owner: Unmanaged<Owner>, since: UInt64) -> Value {
        // `onChange` is an autoclosure: the handler is made only if the function read an
        // `@Observable` property.
        withObservationTracking(
            { owner._withUnsafeGuaranteedRef(compute) },
            onChange: observedChangeHandler(since: since))
    }

    /// The tracking's `onChange`: announces the change to the property, if it still exists.
    private func observedChangeHandler(since: UInt64) -> @Sendable () -> Void {
        let announce = UncheckedSendable({ [weak self] in
            self?.observedPropertyWillChange(trackedSince: since)
        })
        return { announce.value() }
    }

    /// An `@Observable` property that the evaluation begun at epoch `since` read is about to
    /// change (its new value is not stored yet): invalidates the property and what depends on
    /// it, and settles the change once the set is over. The observed properties that the change
    /// reached are told then, not now: they would compute from the old value. Nothing, if a
    /// later evaluation's tracking replaced that one's (Observation cannot cancel a tracking).
    func observedPropertyWillChange(trackedSince since: UInt64) {
        guard core.lock.withLock({ state.observedChangeAnnounced(trackedSince: since) }) else {
            return
        }
        ObservedChangeSettling.announced()
        let work = UncheckedSendable(DependencyTracking.markDependentForLater(self))
        let property = UncheckedSendable(self)
        let settle: @Sendable () -> Void = { property.value.settle(work.value) }
        if DispatchQueue.getSpecific(key: ObservedChangeSettling.mainQueueKey) == true {
            DispatchQueue.main.async(execute: settle)
        } else {
            DispatchQueue.global().async(execute: settle)
        }
    }

    /// Settles a change that `observedPropertyWillChange()` announced, and propagates `work`, what
    /// its marking queued.
    private func settle(_ work: consuming MarkedWork) {
        // Invalid again before the count drops: an evaluation that began before this and ends
        // after it is not stored (the epoch moved), one that begins after it may be.
        markInvalid()
        core.lock.withLock { state.observedChangeSettled() }
        let waiting = ObservedChangeSettling.settled()
        DependencyTracking.propagate(work)
        for work in waiting { DependencyTracking.enqueue(work) }
        DependencyTracking.propagateQueuedWork()
    }

    /// Queues the property for propagation after an evaluation that was dropped because it read
    /// what was not current: for when the last announced change settles, if one is unsettled.
    @usableFromInline
    func queueForPropagation() {
        guard !ObservedChangeSettling.waitForSettling(self) else { return }
        DependencyTracking.enqueue(self)
    }
}

/// The changes of `@Observable` properties that were announced and are not settled yet, in the
/// process, and the work that waits for them to settle.
///
/// An evaluation dropped because it read what was not current queues its property again, to be
/// computed in the same propagation. While a change is unsettled, that value may be one that
/// waits for the settling (see `SyntheticState.unsettledObservedChanges`): computed again at
/// once, it would only be dropped again — and where the settling is due on this very thread's
/// queue, forever. Such work waits for the last unsettled change instead.
enum ObservedChangeSettling {
    private struct State {
        var unsettled = 0
        var waiting: [any PropagationWork] = []
    }

    private static let lock = Lock()
    nonisolated(unsafe) private static var state = State()
    /// `state.unsettled`, readable without the lock (almost always 0).
    private static let unsettled = Atomic<Int>(0)

    /// A key set on the main queue only: the queue a set was made on, when it is the main one.
    static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    static func announced() {
        lock.withLock {
            state.unsettled += 1
            unsettled.store(state.unsettled, ordering: .relaxed)
        }
    }

    /// A change settled: the work that waited, if it was the last unsettled one.
    static func settled() -> [any PropagationWork] {
        lock.withLock {
            state.unsettled -= 1
            unsettled.store(state.unsettled, ordering: .relaxed)
            guard state.unsettled == 0 else { return [] }
            defer { state.waiting = [] }
            return state.waiting
        }
    }

    /// Keeps `work` for when the last unsettled change settles: false if none is unsettled.
    static func waitForSettling(_ work: any PropagationWork) -> Bool {
        guard unsettled.load(ordering: .relaxed) > 0 else { return false }
        return lock.withLock {
            guard state.unsettled > 0 else { return false }
            state.waiting.append(work)
            return true
        }
    }
}
