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
///
/// Threads: one thread at a time *holds* the property (``Phase``), checking or computing it
/// with the property's frame, and only a result computed from an unchanged state (the `epoch`,
/// moved by every invalidation and set, is what it was when the work began) is stored. A thread
/// that holds nothing waits for the holder (``ReadStep/busy``); a thread that holds something
/// computes the property itself, beside the holder, and stores nothing.
@usableFromInline
struct SyntheticState {
    /// Who holds the property, and since which epoch.
    @usableFromInline
    enum Phase: Equatable {
        case idle
        /// A thread checks whether the sources' versions moved.
        case checking(by: ObjectIdentifier, since: UInt64)
        /// A thread computes the value.
        case computing(by: ObjectIdentifier, since: UInt64)

        /// The holding thread, if any.
        @usableFromInline var holder: ObjectIdentifier? {
            switch self {
            case .idle: nil
            case .checking(let thread, _), .computing(let thread, _): thread
            }
        }
    }

    @usableFromInline var phase = Phase.idle
    @usableFromInline var freshness = Freshness.invalid
    /// Whether there is a cached value (valid or not).
    @usableFromInline var hasValue = false
    /// Whether an evaluation ever began (only then can the property be among a source's
    /// dependents).
    var wasEverEvaluated = false
    /// Whether the value was set while what the property read may have been stale (see
    /// `set(changed:)`), and nothing marked the property since.
    var isSetOverStale = false
    @usableFromInline var isObserved = false
    /// Waiting in a thread's propagation queue.
    @usableFromInline var isQueued = false
    /// Whether the observers have a value (the one they started from, or the last update's).
    var hasTold = false
    /// Bumped each time the cached value changes.
    @usableFromInline var version: UInt64 = 0
    /// Bumped by every invalidation and set: work that saw it move while it ran decides
    /// nothing (an evaluation is not stored, a check computes).
    @usableFromInline var epoch: UInt64 = 0
    /// Threads that wait for the holder to let go.
    var waiters: [Parker] = []
    /// How many computations aside are running (see `beginAside()`).
    var asides = 0
    var dependents: DependentList?
    /// A `tracked` read came (ever): each invalidation or set then queues the property, and its
    /// propagation pass reports the change to Swift's Observation (see
    /// `Synthetic.tellObservers()`). Never cleared: a tracking installs itself after the read,
    /// so clearing it at a change in between would leave that tracking never told.
    @usableFromInline var isTracked = false
    /// Whether its last evaluation was dropped for a value that a settling replaces (its own
    /// unsettled change, or a source's): that settling's marking reaches it then, though it is
    /// not valid (see `mark`), instead of a queue at once, where it would only compute the same.
    var awaitsSettling = false
    /// How many changes of `@Observable` properties that its evaluations read were announced
    /// and are not settled yet. Swift's Observation announces a change before the value is
    /// stored, so an evaluation until the settling may have read the old value: none is stored
    /// or current meanwhile (see `Synthetic.observedPropertyWillChange()`).
    var unsettledObservedChanges: UInt32 = 0
    /// `SyntheticState.setsOverStale` when the dependents were last told of a change.
    var toldAtSetsOverStale: UInt64 = 0
    /// The marking that last told the dependents (see `mark`).
    var toldInMarking: UInt64 = 0

    @usableFromInline init() {}

    /// What a reader must do.
    @usableFromInline
    enum ReadStep: Equatable {
        /// Use the cached value, whose version this is.
        case valid(UInt64)
        /// Check whether the synthetic sources' versions moved (then `finishChecking`): those
        /// the last evaluation read, which the property's frame keeps. The reader holds it.
        case check(since: UInt64)
        /// Compute the value (then `finishEvaluation`). The reader holds it.
        case evaluate(since: UInt64)
        /// Another thread holds it, or this one may have it on its stack (a re-entry): a
        /// reader that holds nothing waits (`wait(with:)`); one that holds something looks
        /// at its stack: re-entering, it reports a cycle unless the property was overtaken;
        /// otherwise it reads again, `knownNotReentering`, and computes the property aside
        /// if it is still busy.
        case busy
    }

    /// A read by `thread`, which holds nothing or knows it is not re-entering the property if
    /// `knownNotReentering` (a thread re-enters a property it holds, or computes aside: a
    /// computation aside does not hold it).
    @usableFromInline
    mutating func beginRead(by thread: ObjectIdentifier, knownNotReentering: Bool) -> ReadStep {
        if freshness == .valid { return .valid(version) }
        guard phase == .idle, knownNotReentering || asides == 0 else { return .busy }
        if freshness == .mayBeStale {
            phase = .checking(by: thread, since: epoch)
            return .check(since: epoch)
        }
        phase = .computing(by: thread, since: epoch)
        wasEverEvaluated = true
        return .evaluate(since: epoch)
    }

    /// A reader that holds nothing waits, with `parker`, for the holder to let go: true if it
    /// must park, false if the holder let go already (read again).
    mutating func wait(with parker: Parker) -> Bool {
        guard phase != .idle, freshness != .valid else { return false }
        waiters.append(parker)
        return true
    }

    /// What ends a check or an evaluation: the waiters to wake (once the holder let go).
    @usableFromInline
    struct Release {
        /// Nil when none waits (the common case: no array to retain and release).
        @usableFromInline var waiters: [Parker]? = nil
    }

    /// After the holder's check (`since` the epoch it began at): valid again if no source moved
    /// and nothing invalidated or set the property meanwhile, or if a set made it valid
    /// meanwhile (`.valid`, and the holder lets go); otherwise the holder computes it
    /// (`.evaluate`).
    @usableFromInline
    mutating func finishChecking(sourceMoved: Bool, since start: UInt64) -> (ReadStep, Release) {
        if freshness == .valid || (!sourceMoved && epoch == start && freshness == .mayBeStale) {
            freshness = .valid
            return (.valid(version), letGo())
        }
        phase = .computing(by: phase.holder.unsafelyUnwrapped, since: epoch)
        wasEverEvaluated = true
        return (.evaluate(since: epoch), Release())
    }

    /// After the holder's evaluation (`since` the epoch it began at), whose value differs from
    /// the cached one if `changed` (or there was none), and which read something not current
    /// if `tainted`: whether to store the value, and whether it is current (a result may be
    /// stored from it). It is not stored if the property was invalidated or set meanwhile, if it
    /// is tainted, or while an announced change of an `@Observable` property is unsettled (the
    /// reader still gets the value, and the next read computes again); `requeue` then asks to
    /// queue a tainted property for propagation, if it is observed: no marking will (the
    /// settling marks the property, so an unsettled one is not queued).
    @usableFromInline
    mutating func finishEvaluation(
        changed: Bool, tainted: Bool, awaitsSettling awaits: Bool = false, since start: UInt64
    ) -> (store: Bool, isCurrent: Bool, requeue: Bool, release: Release) {
        let release = letGo()
        guard epoch == start, !tainted, unsettledObservedChanges == 0 else {
            // The sources' versions now are those this dropped evaluation saw: a later check
            // would find none moved. Compute again instead (unless a set made it valid). One
            // that waits for a settling is reached by its marking (see `awaitsSettling`).
            if freshness != .valid { freshness = .invalid }
            let waits = unsettledObservedChanges > 0 || (tainted && awaits)
            if waits { awaitsSettling = true }
            return (false, false, tainted && !waits && enqueueIfObserved(), release)
        }
        awaitsSettling = false
        freshness = .valid
        isSetOverStale = false
        guard changed || !hasValue else { return (false, true, false, release) }
        hasValue = true
        version &+= 1
        return (true, true, false, release)
    }

    /// The holder gives up (the owner died): the next read tries again.
    @usableFromInline
    mutating func abandon() -> Release {
        letGo()
    }

    /// After a computation aside (by a thread that holds something while another thread holds
    /// the property, or re-entering an overtaken property). Nothing is stored, and its value is
    /// never current: it is not the stored value (a check of a dependent would compare the
    /// stored one's version), and the property, stale, would tell a dependent stored from it
    /// nothing of a later change.
    @usableFromInline
    mutating func finishAside() {
        asides -= 1
    }

    /// A computation aside begins (see `finishAside()`).
    @usableFromInline
    mutating func beginAside() {
        asides += 1
    }

    private mutating func letGo() -> Release {
        phase = .idle
        guard !waiters.isEmpty else { return Release() }
        defer { waiters = [] }
        return Release(waiters: waiters)
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
        epoch &+= 1
        let wasValid = freshness == .valid
        // Waiting for a settling, it tells its dependents as if valid: some were dropped for it
        // too, and wait for this marking.
        let awaited = awaitsSettling
        if _slowPath(awaited), unsettledObservedChanges == 0 { awaitsSettling = false }
        if definitely || (wasValid && isSetOverStale) {
            freshness = .invalid
        } else if wasValid {
            freshness = .mayBeStale
        }
        isSetOverStale = false
        var action = MarkAction()
        // If the property was stale already, its dependents were told then, unless a set made
        // a property valid since, which may be one of them. Once per marking: one that reaches
        // the property again (where what properties read last forms a circle, which switched
        // dependencies and sets allow) stops here.
        // (Two markings at once would each find the other's in `toldInMarking`: a stale
        // property that tells again asks the marking thread too; see `retells`.)
        if toldInMarking != marking, wasValid || awaited || toldAtSetsOverStale != setsOverStale {
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
        epoch &+= 1
        freshness = .valid
        // A set over a value set over stale sources, with nothing marked since, is over them too.
        isSetOverStale = overStale || isSetOverStale
        guard changed || !hasValue else { return (false, MarkAction(), overStale) }
        hasValue = true
        version &+= 1
        return (true, MarkAction(dependents: dependents, enqueue: enqueueIfObserved()), overStale)
    }

    /// An `@Observable` property that an evaluation read announced a change (see
    /// `unsettledObservedChanges`).
    mutating func observedChangeAnnounced() {
        unsettledObservedChanges += 1
        awaitsSettling = true
    }

    /// Whether the settling of an announced change invalidates the property: not if a set made
    /// it valid since (the value set is newer than the change).
    func settlingInvalidates() -> Bool {
        freshness != .valid
    }

    /// The change `observedChangeAnnounced()` counted settled: the value stored by then.
    mutating func observedChangeSettled() {
        unsettledObservedChanges -= 1
    }

    /// How many sets were made over stale sources, in the process (see `set(changed:)`).
    static let setsOverStale = Atomic<UInt64>(0)

    /// Queues the property for its propagation pass if it is observed, or if a read armed its
    /// report to Observation (see `observation`).
    private mutating func enqueueIfObserved() -> Bool {
        guard isObserved || isTracked, !isQueued else { return false }
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
