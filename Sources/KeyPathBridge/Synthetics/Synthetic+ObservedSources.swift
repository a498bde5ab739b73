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
    /// Runs the function on `owner`, tracking what it reads of `@Observable` objects.
    @usableFromInline
    func computeTrackingObservation(from owner: Unmanaged<Owner>) -> Value {
        // `onChange` is an autoclosure: the handler is made only if the function read an
        // `@Observable` property.
        withObservationTracking(
            { owner._withUnsafeGuaranteedRef(compute) }, onChange: observedChangeHandler())
    }

    /// The tracking's `onChange`: announces the change to the property, if it still exists.
    private func observedChangeHandler() -> @Sendable () -> Void {
        let announce = UncheckedSendable({ [weak self] in self?.observedPropertyWillChange() })
        return { announce.value() }
    }

    /// An `@Observable` property that an evaluation read is about to change (its new value is
    /// not stored yet): invalidates the property and what depends on it, and settles the change
    /// on the main queue's next turn. The observed properties that the change reached are told
    /// then, not now: they would compute from the old value.
    ///
    /// (A tracking that an earlier evaluation installed counts too, though the last one may no
    /// longer read what it tracks: Observation cannot cancel a tracking, and one installed by an
    /// evaluation that began before the announcement did not see it. The property then computes
    /// once more, and tells nothing if its value is the same.)
    func observedPropertyWillChange() {
        // Announced inside the property's own evaluation on this thread: its function changes
        // what it read (as a Herald source, that is reported, and a retry would not end).
        if _slowPath(DependencyTracking.currentFrame?.takeUnretainedValue().dependent === self) {
            SyntheticCycle.reportWrite(of: "an @Observable property", readBy: self)
        }
        core.lock.withLock { state.observedChangeAnnounced() }
        let work = UncheckedSendable(DependencyTracking.markDependentForLater(self))
        let property = UncheckedSendable(self)
        // On the main queue, for any setting thread: the evaluations that settling runs read the
        // `@Observable` objects, which an app uses on the main actor.
        DispatchQueue.main.async { property.value.settle(work.value) }
    }

    /// Settles a change that `observedPropertyWillChange()` announced, and propagates `work`, what
    /// its marking queued.
    private func settle(_ work: consuming MarkedWork) {
        // Invalid again before the count drops: an evaluation that began before this and ends
        // after it is not stored (the epoch moved). Unless a set made the property valid since:
        // its value is newer than the change; what was dropped for the change is reached all
        // the same.
        let (invalidates, dependents) = core.lock.withLock {
            (state.settlingInvalidates(), state.dependents)
        }
        if invalidates {
            markInvalid()
        } else {
            if let dependents {
                DependencyTracking.mark(
                    dependents, definitely: false, changing: ObjectIdentifier(self))
            }
            trackAgain()
        }
        core.lock.withLock { state.observedChangeSettled() }
        DependencyTracking.propagate(work)
        DependencyTracking.propagateQueuedWork()
    }

    /// Runs the function once more, only to track what it reads of `@Observable` objects now:
    /// the change that the settling ends used up the last evaluation's tracking, and a value
    /// set since is valid until the next change — of those objects too. The value computed is
    /// not used.
    private func trackAgain() {
        guard let owner = core.lock.withLock({ self.owner.object }) else { return }
        DependencyTracking.withoutFrames {
            _ = computeTrackingObservation(from: Unmanaged.passUnretained(owner))
        }
        withExtendedLifetime(owner) {}
        core.lock.withLock { evaluations += 1 }
    }

    /// Whether the value, read while not current, is one that a settling replaces (see
    /// `SyntheticState.awaitsSettling`).
    @usableFromInline
    var awaitsSettling: Bool {
        core.lock.withLock { state.awaitsSettling || state.unsettledObservedChanges > 0 }
    }
}
