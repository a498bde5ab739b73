/// A side of a binding: the first is the source of a one-way binding and `a` of a two-way one.
enum BindingSide: Sendable, Equatable {
    case first, second
}

/// Who brings a binding's sides in sync, and from which side next: the state a
/// ``PropertyBinding`` keeps under its lock. A pure value, tested without threads.
///
/// One thread at a time syncs (writes one side's current value to the other). A change heard of
/// while a thread syncs, on that thread (a handler of the side it wrote changed the side again)
/// or on another, is left to the syncing thread, which syncs once more before it lets go: so the
/// binding never writes from two threads at once. It syncs from the side heard of last: a sync
/// copies the side's value as it is then, so syncing first from a side heard of earlier would
/// only copy that side's older value over the other's newer one.
struct BindingSyncState: Equatable {
    /// Whether a thread syncs now.
    private(set) var isSyncing = false
    /// The side whose change was heard of last and is not synced from yet.
    private(set) var latest: BindingSide?

    /// A change of `side` was heard of. True if the caller must now sync: it takes the role, and
    /// calls ``next()`` until that returns nil. False if another thread (or an outer call on
    /// this one) syncs, and will sync from `side`.
    mutating func changed(_ side: BindingSide) -> Bool {
        latest = side
        guard !isSyncing else { return false }
        isSyncing = true
        return true
    }

    /// For the syncing thread: the side to sync from next, or nil, after which the thread no
    /// longer syncs.
    mutating func next() -> BindingSide? {
        guard let side = latest else {
            isSyncing = false
            return nil
        }
        latest = nil
        return side
    }
}
