/// A messenger's connections in registration order: contiguous storage with `nil` holes, so that
/// removal is O(1) (each connection knows its `slot`) and delivery is a plain array walk.
///
/// Not generic, so that starting and stopping observations runs without generic metadata; the
/// delivery loop, which is specialized for the message type, downcasts each element for free.
/// Every method is called with the owning messenger's lock held.
///
/// Invariants: `storage[c.slot] === c` for every live connection `c`; `liveCount` is the number
/// of non-`nil` slots; when more than half the slots are holes (and there are at least 16), the
/// list compacts in place and rewrites the slots; an emptied list keeps a small buffer for reuse
/// and releases a large one. A slot is 32 bits: a messenger can have at most `Int32.max` slots
/// (two billion observations, far more than memory holds).
@usableFromInline
struct ConnectionList {
    @usableFromInline private(set) var storage: ContiguousArray<ConnectionBase?> = []
    @usableFromInline private(set) var liveCount = 0
    /// Whether `storage` was handed out by `snapshot()` since it was last moved to a fresh buffer,
    /// so that a delivering thread may be reading it.
    @usableFromInline private(set) var snapshotTaken = false

    @usableFromInline init() {}

    /// The list for a delivery, which reads it after unlocking.
    @inlinable @inline(__always)
    mutating func snapshot() -> ContiguousArray<ConnectionBase?> {
        snapshotTaken = true
        return storage
    }

    /// Moves the list to a fresh buffer, so that the next changes do not write to a buffer that a
    /// delivering thread may still be reading (see `MessengerCore.prepareToChangeConnections`).
    @usableFromInline
    mutating func moveToFreshStorage() {
        // A real copy: `ContiguousArray(storage)` would share the buffer.
        var fresh = ContiguousArray<ConnectionBase?>()
        fresh.reserveCapacity(Swift.max(storage.count, 1))
        fresh.append(contentsOf: storage)
        storage = fresh
        snapshotTaken = false
    }

    @usableFromInline
    mutating func append(_ connection: ConnectionBase) {
        connection.slot = Int32(storage.count)
        storage.append(connection)
        liveCount += 1
    }

    /// Removes `connection`, marking it stopped. Returns false if it was not in the list.
    @usableFromInline
    mutating func remove(_ connection: ConnectionBase) -> Bool {
        let slot = Int(connection.slot)
        guard slot >= 0, slot < storage.count, storage[slot] === connection else { return false }
        connection.markStopped()
        connection.slot = -1
        storage[slot] = nil
        liveCount -= 1
        compactIfSparse()
        return true
    }

    /// Removes and returns every connection (the list's own storage, with its holes), each marked
    /// stopped. The caller tells their receivers after unlocking.
    mutating func removeAll() -> ContiguousArray<ConnectionBase?> {
        for case let connection? in storage {
            connection.markStopped()
            connection.slot = -1
        }
        var taken: ContiguousArray<ConnectionBase?> = []
        swap(&taken, &storage)  // a move: no reference counting
        liveCount = 0
        snapshotTaken = false
        return taken
    }

    /// The live connections in registration order.
    var live: [ConnectionBase] { storage.compactMap { $0 } }

    private mutating func compactIfSparse() {
        if liveCount == 0 {
            // Keep a small buffer: observe/stop cycles then allocate nothing. (The list held at
            // most 15 holes here, since it compacts whenever more than half of 16 or more slots
            // are holes; popping them is cheaper than `removeAll(keepingCapacity:)`, which goes
            // through the generic `replaceSubrange`.)
            if storage.capacity > 16 {
                storage = []
            } else {
                while storage.popLast() != nil {}
            }
            return
        }
        guard storage.count >= 16, liveCount * 2 < storage.count else { return }
        // In place: moves, no reference counting and no allocation. (Moving to a smaller buffer
        // would give memory back sooner, but allocating a large block makes malloc consolidate
        // the small blocks that the ended observations freed: about 300 of the 2,100
        // instructions per death in W2-churn. Like an `Array`, the list keeps its capacity; it
        // lets go of it when it empties.)
        storage.withUnsafeMutableBufferPointer { buffer in
            var write = 0
            for read in buffer.indices {
                guard let connection = buffer[read] else { continue }
                connection.slot = Int32(write)
                if read != write { buffer.swapAt(read, write) }
                write += 1
            }
        }
        storage.removeLast(storage.count - liveCount)
    }
}
