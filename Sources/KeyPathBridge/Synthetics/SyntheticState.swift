import Synchronization
import Transforms

/// Where a synthetic property's cached value stands.
@usableFromInline
enum Freshness: Equatable {
    /// The cached value is the property's value.
    case valid
    /// A synthetic property it read may have changed: check those before using the value.
    case mayBeStale
    /// Something it read changed (or it was invalidated): compute again.
    case invalid
}

/// The state of one synthetic property but its values (guarded by its messenger's lock; the
/// property keeps the values beside it, so that this is not generic). Its methods decide; the
/// property carries out what they return outside the lock, so this is tested without threads.
///
/// The algorithm is push-pull with versions, as signals libraries do it:
/// - a change marks direct dependents ``Freshness/invalid`` and, through them, everything
///   downstream ``Freshness/mayBeStale`` (push; nothing is computed);
/// - a read of a property that may be stale refreshes its synthetic sources first, in the order
///   it read them, and computes only if one of their versions moved (pull);
/// - a computation whose value equals the cached one keeps the version, so nothing downstream
///   computes again.
@usableFromInline
struct SyntheticState {
    @usableFromInline var freshness = Freshness.invalid
    /// Whether there is a cached value (valid or not).
    @usableFromInline var hasValue = false
    /// Whether a thread checks the property, rather than computing it, if one does (it may then
    /// also compute it inside the check: see `beginRead`).
    /// Beside the other small fields: the state's size is a multiple of 8 bytes.
    @usableFromInline var isChecking = false
    /// Whether an evaluation ever began (only then can the property be among a source's
    /// dependents).
    var wasEverEvaluated = false
    /// Whether the value was set while what the property read may have been stale (see
    /// `set(changed:)`), and nothing marked the property since.
    var isSetOverStale = false
    /// Whether the thread checking the property computes it inside the check (see `beginRead`).
    var isEvaluatingInsideCheck = false
    /// Whether the evaluation or check running got, directly or through what it read, a value
    /// that may be stale, to leave a circle of reads (see `taint(retry:)`).
    @usableFromInline var isTainted = false
    /// Whether the tainted evaluation running is to be run again at once (see `taint(retry:)`).
    var mustRetry = false
    /// Bumped each time the cached value changes.
    @usableFromInline var version: UInt64 = 0
    /// Bumped by every invalidation and set: an evaluation that saw it move while it ran does
    /// not store its result.
    @usableFromInline var marks: UInt64 = 0
    /// The thread computing or checking the value, if one is.
    @usableFromInline var computingThread: ObjectIdentifier?
    /// While a thread checks or computes the property: `marks` when it began.
    @usableFromInline var startMarks: UInt64 = 0
    /// While the thread checking the property computes it inside the check (see `beginRead`):
    /// `marks` when that evaluation began.
    var insideCheckStartMarks: UInt64 = 0
    var dependents: DependentList?
    @usableFromInline var isObserved = false
    /// Waiting in a thread's propagation queue.
    @usableFromInline var isQueued = false
    /// Whether the observers have a value (the one they started from, or the last update's).
    var hasTold = false
    /// `SyntheticState.setsOverStale` when the dependents were last told of a change.
    var toldAtSetsOverStale: UInt64 = 0
    /// The marking that last told the dependents (see `mark`).
    var toldInMarking: UInt64 = 0

    @usableFromInline init() {}

    /// What a reader must do.
    @usableFromInline
    enum ReadStep {
        /// Use the cached value, whose version this is.
        case valid(UInt64)
        /// This thread is already computing or checking the property (and the check was not
        /// overtaken, or it computes it inside the check already): a cycle.
        case cycle
        /// Another thread is computing it: wait for that thread, then read again.
        case wait(ObjectIdentifier)
        /// Check whether the synthetic sources' versions moved (then `finishChecking`): those
        /// the last evaluation read, which the property's frame keeps.
        case check(marks: UInt64)
        /// Compute the value (then `finishEvaluation`).
        case evaluate(marks: UInt64)
        /// Compute the value, after a check that read a value that may be stale to leave a
        /// circle of reads, as the outermost property of it on the thread (see
        /// `taint(retry:)`): as `evaluate`, unless the thread gave way in that circle (see
        /// `giveUpBeforeEvaluating()`).
        case evaluateAgain(marks: UInt64)
        /// Leave the check undone, for a later read: it was interrupted (see
        /// `finishInterruptedCheck`).
        case leftUndone
    }

    /// A read by `thread`.
    @usableFromInline
    mutating func beginRead(by thread: ObjectIdentifier) -> ReadStep {
        if let computingThread {
            guard computingThread == thread else { return .wait(computingThread) }
            // This thread computes or checks the property: a cycle, unless it checks it and the
            // check was overtaken (its dependencies may have switched meanwhile, so that what
            // the check refreshes now reads the property). The check then decides nothing, and
            // the property is read as if it ran none: a value set meanwhile, or one computed
            // now, inside the check (which then finds the property valid).
            // (Once: a read inside that computation is a cycle.)
            guard checkWasOvertaken, !isEvaluatingInsideCheck else { return .cycle }
            if freshness == .valid { return .valid(version) }
            isEvaluatingInsideCheck = true
            insideCheckStartMarks = marks
            return .evaluate(marks: marks)
        }
        switch freshness {
        case .valid:
            return .valid(version)
        case .mayBeStale:
            computingThread = thread
            isChecking = true
            startMarks = marks
            return .check(marks: marks)
        case .invalid:
            computingThread = thread
            wasEverEvaluated = true
            startMarks = marks
            return .evaluate(marks: marks)
        }
    }

    /// After a check: valid again if no source moved and nothing invalidated the property
    /// meanwhile, or if a set made it valid meanwhile; otherwise evaluate.
    @usableFromInline
    mutating func finishChecking(sourceMoved: Bool, marks checkStart: UInt64) -> ReadStep {
        isChecking = false
        // A tainted check decides nothing: the property is computed.
        let sourceMoved = sourceMoved || isTainted
        let again = mustRetry
        isTainted = false
        mustRetry = false
        if !sourceMoved && marks == checkStart && freshness == .mayBeStale {
            freshness = .valid
            computingThread = nil
            return .valid(version)
        }
        if marks != checkStart && freshness == .valid {
            // A set made it valid meanwhile (an invalidation after it would have left it stale):
            // its value stands, as in `finishEvaluation`.
            computingThread = nil
            return .valid(version)
        }
        startMarks = marks
        return again ? .evaluateAgain(marks: marks) : .evaluate(marks: marks)
    }

    /// Whether the property is being checked, and was invalidated or set since the check began:
    /// the check decides nothing any more (the property is computed, or a set value stands,
    /// whatever the sources' versions).
    @usableFromInline
    var checkWasOvertaken: Bool {
        isChecking && marks != startMarks
    }

    /// Whether the property is being checked or computed, and was invalidated or set since that
    /// began: what the thread does decides nothing any more. (An evaluation inside an overtaken
    /// check is overtaken only if the property was invalidated or set since it began: it is
    /// computed anew, as the check decides nothing.)
    var wasOvertaken: Bool {
        guard computingThread != nil else { return false }
        return marks != (isEvaluatingInsideCheck ? insideCheckStartMarks : startMarks)
    }

    /// After a check that stopped waiting for another thread's evaluation of a source, because a
    /// check open on the thread was overtaken (see `SyntheticCycle.wait(for:computedBy:mayGiveUp:)`):
    /// - if `mayLeaveUndone` (the check was made for another's, one of those open on the thread)
    ///   and either `outerCheckOvertaken` (one of those further out was overtaken: what this one
    ///   finds decides nothing for it) or this one was not: the check is left undone, the
    ///   property as it was (`leftUndone`);
    /// - otherwise, as if a source had moved: evaluate, unless a set made it valid meanwhile.
    @usableFromInline
    mutating func finishInterruptedCheck(
        marks checkStart: UInt64, mayLeaveUndone: Bool, outerCheckOvertaken: Bool
    ) -> ReadStep {
        if mayLeaveUndone && (outerCheckOvertaken || marks == checkStart) {
            isChecking = false
            isTainted = false
            mustRetry = false
            computingThread = nil
            return .leftUndone
        }
        return finishChecking(sourceMoved: true, marks: checkStart)
    }

    /// After an evaluation that started at `startMarks`, whose value differs from the cached one
    /// if `changed` (or there was none): whether to store the value.
    /// It is not stored if the property was invalidated or set meanwhile (the reader still gets
    /// the value it computed, and the next read computes again).
    @usableFromInline
    mutating func finishEvaluation(changed: Bool, marks startMarks: UInt64) -> Bool {
        // An evaluation inside this thread's overtaken check of the property (see `beginRead`)
        // leaves the check running.
        if !isChecking { computingThread = nil }
        isEvaluatingInsideCheck = false
        guard marks == startMarks else {
            // The sources' versions now are those this dropped evaluation saw: a later check
            // would find none moved. Compute again instead (unless a set made it valid).
            if freshness != .valid { freshness = .invalid }
            return false
        }
        freshness = .valid
        isSetOverStale = false
        guard changed || !hasValue else { return false }
        hasValue = true
        version &+= 1
        return true
    }

    /// The thread computing or checking the property (the caller) left a circle of reads that
    /// passes through it, reading a value that may be stale (see
    /// `SyntheticCycle.wait(for:computedBy:mayGiveUp:)`): what the running evaluation or check
    /// finds decides nothing (see `finishTaintedEvaluation()` and `finishChecking`). `retry` if
    /// the property is the circle's outermost on the thread: then it is computed again at once.
    mutating func taint(retry: Bool) {
        isTainted = true
        mustRetry = mustRetry || retry
    }

    /// After a tainted evaluation (see `taint(retry:)`): its value is not stored, and the
    /// property is computed again, by the same reader at once if it must retry, else at the next
    /// read (unless a set made it valid meanwhile). Returns whether the reader computes it again
    /// (`retry`), and whether to queue the property for propagation (`queue`): it is observed,
    /// so it must not wait for a read.
    @usableFromInline
    mutating func finishTaintedEvaluation() -> (retry: Bool, queue: Bool) {
        let retry = mustRetry
        isTainted = false
        mustRetry = false
        if !isChecking { computingThread = nil }
        isEvaluatingInsideCheck = false
        guard freshness != .valid else { return (retry, false) }
        freshness = .invalid
        return (retry, !retry && enqueueIfObserved())
    }

    /// Gives up the evaluation that `finishChecking` just started (`evaluateAgain`), before it
    /// ran: the thread gave way in a circle of waits (see
    /// `SyntheticCycle.wait(for:computedBy:mayGiveUp:)`), and leaves the property for any thread
    /// to compute.
    @usableFromInline
    mutating func giveUpBeforeEvaluating() {
        computingThread = nil
        // What the check found decides nothing (unless a set made the property valid).
        if freshness != .valid { freshness = .invalid }
    }

    /// Gives up computing (the owner died): the next read tries again.
    @usableFromInline
    mutating func abandonEvaluation() {
        // Inside this thread's overtaken check (see `beginRead`): the check goes on.
        if !isChecking { computingThread = nil }
        isEvaluatingInsideCheck = false
    }

    /// What an invalidation asks of the property.
    struct MarkAction {
        /// Tell these dependents they may be stale.
        var dependents: DependentList?
        /// Queue the property for propagation (it is observed).
        var enqueue = false
        /// The dependents are told again though the property was stale (see `mark`).
        var retells = false
    }

    /// A change upstream, in the marking `marking` (see `Dependent.sourceChanged`): `definitely`
    /// for a direct source (or a manual invalidation), else it may be stale (invalid if its value
    /// was set over stale sources). `setsOverStale` is `SyntheticState.setsOverStale` now.
    mutating func mark(definitely: Bool, marking: UInt64, setsOverStale: UInt64) -> MarkAction {
        marks &+= 1
        let wasValid = freshness == .valid
        if definitely || (wasValid && isSetOverStale) {
            freshness = .invalid
        } else if wasValid {
            freshness = .mayBeStale
        }
        isSetOverStale = false
        var action = MarkAction()
        // If the property was stale already, its dependents were told then, unless a
        // computation is running, which may hand its value to a dependent that read it meanwhile,
        // or a set made a property valid since, which may be one of them. Once per marking: one
        // that reaches the property again (where what properties read last forms a circle,
        // which switched dependencies and sets allow) stops here.
        // (Two markings at once would each find the other's in `toldInMarking`: a stale
        // property that tells again asks the marking thread too; see `retells`.)
        if toldInMarking != marking,
            wasValid || computingThread != nil || toldAtSetsOverStale != setsOverStale
        {
            action.dependents = dependents
            action.retells = !wasValid
            toldInMarking = marking
            toldAtSetsOverStale = setsOverStale
        }
        action.enqueue = enqueueIfObserved()
        return action
    }

    /// Stores a value set from outside (a hybrid property), which differs from the cached one
    /// if `changed`: valid until the next invalidation. Returns whether to store it, what to
    /// tell, and whether it was set over stale sources (then the caller counts the set in
    /// `SyntheticState.setsOverStale`).
    ///
    /// A stale property's dependents are stale too, so that a further change of what it read
    /// need not reach them (they were told when it became stale), except where a set made one
    /// valid, set over stale sources: a property that was stale or computing, and read what may
    /// be stale. Each stale property tells its dependents again at its next marking after such
    /// a set (see `mark`), and the set value lasts until the next change above it, even one
    /// that leaves the sources' values as they were (the property is then invalid, not only
    /// possibly stale: the versions it read last say nothing about the value set).
    mutating func set(changed: Bool) -> (store: Bool, action: MarkAction, overStale: Bool) {
        let overStale = freshness != .valid && wasEverEvaluated
        marks &+= 1
        freshness = .valid
        // A set over a value set over stale sources, with nothing marked since, is over them too.
        isSetOverStale = overStale || isSetOverStale
        guard changed || !hasValue else { return (false, MarkAction(), overStale) }
        hasValue = true
        version &+= 1
        return (true, MarkAction(dependents: dependents, enqueue: enqueueIfObserved()), overStale)
    }

    /// How many sets were made over stale sources, in the process (see `set(changed:)`).
    static let setsOverStale = Atomic<UInt64>(0)

    private mutating func enqueueIfObserved() -> Bool {
        guard isObserved, !isQueued else { return false }
        isQueued = true
        return true
    }

    /// The observers came (true) or went (false). Returns whether the property just became
    /// observed (then it is evaluated at once, and `startTelling()`).
    mutating func setObserved(_ observed: Bool) -> Bool {
        defer { isObserved = observed }
        if !observed { hasTold = false }
        return observed && !isObserved
    }

    /// Whether the observers now start from the value just read (they had none).
    mutating func startTelling() -> Bool {
        guard isObserved, !hasTold else { return false }
        hasTold = true
        return true
    }

    /// After the observers' starting value was recorded: whether the property must be queued
    /// for propagation, because it was invalidated since that value was computed (and so
    /// possibly before it was observed, when nothing queued it).
    mutating func mustPropagateAfterStart() -> Bool {
        guard freshness != .valid, !isQueued else { return false }
        isQueued = true
        return true
    }

    /// In the propagation pass, after refreshing: whether the observers may be told of the
    /// cached value (if it differs from what they last heard of), and whether they have heard of
    /// one yet.
    @usableFromInline
    mutating func mayTell() -> (may: Bool, hasTold: Bool) {
        guard isObserved, freshness == .valid, hasValue else { return (false, hasTold) }
        defer { hasTold = true }
        return (true, hasTold)
    }
}
