/// A side of a binding: the first is the source of a one-way binding and `a` of a two-way one.
enum BindingSide: Sendable, Equatable {
    case first, second
}

/// Which side a binding syncs from next, and whether a sync is queued: the state a
/// ``PropertyBinding`` keeps under its lock. A pure value, tested without threads.
///
/// A sync (writing one side's current value to the other) is work done in turn on the binding's
/// own messenger core, so one thread at a time syncs, and the thread that syncs does only its
/// share of syncs for changes heard on other threads (see Messaging's delivery turns). A change
/// heard of queues a sync, unless one is queued and has not started: that one will sync from the
/// side heard of last. A sync copies the side's value as it is then, so syncing first from a
/// side heard of earlier would only copy that side's older value over the other's newer one.
struct BindingSyncState: Equatable {
    /// Whether a sync is queued and has not started.
    private(set) var isQueued = false
    /// The side whose change was heard of last and is not synced from yet.
    private(set) var latest: BindingSide?

    /// A change of `side` was heard of. True if the caller must queue a sync; false if one is
    /// queued already, which will sync from `side`.
    mutating func changed(_ side: BindingSide) -> Bool {
        latest = side
        guard !isQueued else { return false }
        isQueued = true
        return true
    }

    /// A queued sync starts: the side to sync from (nil only if no change was heard of, which a
    /// sync queued by ``changed(_:)`` never finds).
    mutating func start() -> BindingSide? {
        isQueued = false
        defer { latest = nil }
        return latest
    }
}
