import Transforms

/// Where a synthetic property's cached value stands.
enum Freshness: Equatable {
    /// The cached value is the property's value.
    case valid
    /// A synthetic property it read may have changed: check those before using the value.
    case mayBeStale
    /// Something it read changed (or it was invalidated): compute again.
    case invalid
}

/// What a synthetic property's evaluation read: a source, and for a synthetic source the version
/// it had.
struct SourceLink {
    let source: any DependencySource
    /// The source as a synthetic property, if it is one (its version is then checked before a
    /// recomputation, so an unchanged value recomputes nothing downstream).
    let node: (any SyntheticNode)?
    var version: UInt64

    var identity: ObjectIdentifier { ObjectIdentifier(source) }
}

/// The state of one synthetic property (guarded by its messenger's lock). Its methods decide;
/// the property carries out what they return outside the lock, so this is tested without
/// threads.
///
/// The algorithm is push-pull with versions, as signals libraries do it:
/// - a change marks direct dependents ``Freshness/invalid`` and, through them, everything
///   downstream ``Freshness/mayBeStale`` (push; nothing is computed);
/// - a read of a property that may be stale refreshes its synthetic sources first, in the order
///   it read them, and computes only if one of their versions moved (pull);
/// - a computation whose value equals the cached one keeps the version, so nothing downstream
///   computes again.
struct SyntheticState<Value> {
    var freshness = Freshness.invalid
    var cached: Value?
    /// Bumped each time the cached value changes.
    var version: UInt64 = 0
    /// Bumped by every invalidation and set: an evaluation that saw it move while it ran does
    /// not store its result.
    var marks: UInt64 = 0
    /// The thread computing or checking the value, if one is.
    var computingThread: ObjectIdentifier?
    var sources: [SourceLink] = []
    var dependents: DependentList?
    var isObserved = false
    /// Waiting in a thread's propagation queue.
    var isQueued = false
    /// The value the observers last heard of (their starting value, or the last update's new).
    var told: Value?

    /// What a reader must do.
    enum ReadStep {
        /// Use this value (and version).
        case value(Value, UInt64)
        /// This thread is already computing the property: a cycle.
        case cycle
        /// Another thread is computing it: wait for that thread, then read again.
        case wait(ObjectIdentifier)
        /// Check whether the synthetic sources' versions moved (see `finishChecking`).
        case check([SourceLink], marks: UInt64)
        /// Compute the value (then `finishEvaluation`).
        case evaluate(marks: UInt64, previous: [SourceLink])
    }

    /// A read by `thread`.
    mutating func beginRead(by thread: ObjectIdentifier) -> ReadStep {
        if let computingThread {
            return computingThread == thread ? .cycle : .wait(computingThread)
        }
        switch freshness {
        case .valid:
            return .value(cached!, version)
        case .mayBeStale:
            computingThread = thread
            return .check(sources, marks: marks)
        case .invalid:
            computingThread = thread
            return .evaluate(marks: marks, previous: sources)
        }
    }

    /// After a check: valid again if no source moved and nothing invalidated the property
    /// meanwhile; otherwise evaluate.
    mutating func finishChecking(sourceMoved: Bool, marks checkedMarks: UInt64) -> ReadStep {
        if !sourceMoved && marks == checkedMarks && freshness == .mayBeStale {
            freshness = .valid
            computingThread = nil
            return .value(cached!, version)
        }
        return .evaluate(marks: marks, previous: sources)
    }

    /// After an evaluation that started at `startMarks` and read `sources`: stores the value
    /// unless the property was invalidated or set meanwhile (then this reader still gets the
    /// value it computed, and the next read computes again). Returns the value and version for
    /// the reader and the sources no longer read, to stop depending on.
    mutating func finishEvaluation(
        _ value: Value, sources newSources: [SourceLink], marks startMarks: UInt64,
        isChange: (Value, Value) -> Bool
    ) -> (value: Value, version: UInt64, dropped: [SourceLink]) {
        computingThread = nil
        let kept = Set(newSources.map(\.identity))
        let dropped = sources.filter { !kept.contains($0.identity) }
        sources = newSources
        guard marks == startMarks else { return (value, version, dropped) }
        if let cached, !isChange(cached, value) {
            // Equal: keep the old value and version (nothing downstream needs to compute).
        } else {
            cached = value
            version &+= 1
        }
        freshness = .valid
        return (cached!, version, dropped)
    }

    /// Gives up computing (the owner died): the next read tries again.
    mutating func abandonEvaluation() {
        computingThread = nil
    }

    /// What an invalidation asks of the property.
    struct MarkAction {
        /// Tell these dependents they may be stale.
        var dependents: DependentList?
        /// Queue the property for propagation (it is observed).
        var enqueue = false
    }

    /// A change upstream: `invalid` for a direct source (or a manual invalidation),
    /// `mayBeStale` for a source further up.
    mutating func mark(_ level: Freshness) -> MarkAction {
        marks &+= 1
        let wasValid = freshness == .valid
        if level == .invalid {
            freshness = .invalid
        } else if freshness == .valid {
            freshness = .mayBeStale
        }
        var action = MarkAction()
        // If the property was stale already, its dependents were told then, unless a
        // computation is running, which may hand its value to a dependent that read it meanwhile.
        if wasValid || computingThread != nil { action.dependents = dependents }
        action.enqueue = enqueueIfObserved()
        return action
    }

    /// Stores a value set from outside (a hybrid property): valid until the next invalidation.
    mutating func set(_ value: Value, isChange: (Value, Value) -> Bool) -> MarkAction {
        marks &+= 1
        let changed = cached.map { isChange($0, value) } ?? true
        freshness = .valid
        guard changed else { return MarkAction() }
        cached = value
        version &+= 1
        return MarkAction(dependents: dependents, enqueue: enqueueIfObserved())
    }

    private mutating func enqueueIfObserved() -> Bool {
        guard isObserved, !isQueued else { return false }
        isQueued = true
        return true
    }

    /// The observers came (true) or went (false). Returns whether the property just became
    /// observed (then it is evaluated at once, and `startTelling()`).
    mutating func setObserved(_ observed: Bool) -> Bool {
        defer { isObserved = observed }
        if !observed { told = nil }
        return observed && !isObserved
    }

    /// Records the value observers start from.
    mutating func startTelling() {
        if isObserved, told == nil, freshness == .valid { told = cached }
    }

    /// In the propagation pass, after refreshing: the update to send, if the value the
    /// observers last heard of changed.
    mutating func takeUpdate(isChange: (Value, Value) -> Bool) -> Update<Value>? {
        guard isObserved, freshness == .valid, let cached else { return nil }
        guard let told else {
            self.told = cached
            return nil
        }
        guard isChange(told, cached) else { return nil }
        self.told = cached
        return Update(told, cached)
    }
}
