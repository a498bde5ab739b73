/// A side of a binding: the first is the source of a one-way binding and `a` of a two-way one.
enum BindingSide: Sendable, Equatable {
    case first, second
}

/// Who brings a binding's sides in sync, and from which side next: the state a
/// ``PropertyBinding`` keeps under its lock. A pure value, tested without threads.
///
/// One thread at a time syncs (writes one side's current value to the other). A change heard of
/// while a thread syncs, on that thread (a handler of the side it wrote changed the side again)
/// or on another, is left to the syncing thread, which syncs from the changed side before it
/// lets go: so the binding never writes from two threads at once, and the last change it heard
/// of is the last one it copies. Sides are synced in the order their changes were heard of; a
/// side heard of again before its turn moves behind the other, since its turn reads its value
/// as it is then anyway.
struct BindingSyncState: Equatable {
    /// Whether a thread syncs now.
    private(set) var isSyncing = false
    /// The sides whose change was heard of and is not synced yet, oldest first; each at most
    /// once.
    private(set) var waiting: [BindingSide] = []

    /// A change of `side` was heard of. True if the caller must now sync: it takes the role, and
    /// calls ``next()`` until that returns nil. False if another thread (or an outer call on
    /// this one) syncs, and will sync from `side`.
    mutating func changed(_ side: BindingSide) -> Bool {
        waiting.removeAll { $0 == side }
        waiting.append(side)
        guard !isSyncing else { return false }
        isSyncing = true
        return true
    }

    /// For the syncing thread: the side to sync from next, or nil, after which the thread no
    /// longer syncs.
    mutating func next() -> BindingSide? {
        guard !waiting.isEmpty else {
            isSyncing = false
            return nil
        }
        return waiting.removeFirst()
    }
}
