/// A messenger's connections in registration order: contiguous storage with `nil` holes, so that
/// removal is O(1) (each connection knows its `slot`) and delivery is a plain array walk.
///
/// Not generic, so that starting and stopping observations runs without generic metadata; the
/// delivery loop, which is specialized for the message type, downcasts each element for free.
/// Every method is called with the owning messenger's lock held.
///
/// Invariants: `storage[c.slot] === c` for every live connection `c`; `liveCount` is the number
/// of non-`nil` slots; when more than half the slots are holes (and there are at least 16), the
/// list compacts and rewrites the slots; an emptied list keeps a small buffer for reuse.
@usableFromInline
struct ConnectionList {
    @usableFromInline private(set) var storage: ContiguousArray<ConnectionBase?> = []
    @usableFromInline private(set) var liveCount = 0

    @usableFromInline init() {}

    /// Moves the list to a fresh buffer, so that the next changes do not write to a buffer that a
    /// delivering thread may still be reading (see `MessengerCore.prepareToChangeConnections`).
    @usableFromInline
    mutating func moveToFreshStorage() {
        // A real copy: `ContiguousArray(storage)` would share the buffer.
        var fresh = ContiguousArray<ConnectionBase?>()
        fresh.reserveCapacity(Swift.max(storage.count, 1))
        fresh.append(contentsOf: storage)
        storage = fresh
    }

    @usableFromInline
    mutating func append(_ connection: ConnectionBase) {
        connection.slot = storage.count
        storage.append(connection)
        liveCount += 1
    }

    /// Removes `connection`, marking it stopped. Returns false if it was not in the list.
    @usableFromInline
    mutating func remove(_ connection: ConnectionBase) -> Bool {
        let slot = connection.slot
        guard slot >= 0, slot < storage.count, storage[slot] === connection else { return false }
        connection.markStopped()
        connection.slot = -1
        storage[slot] = nil
        liveCount -= 1
        compactIfSparse()
        return true
    }

    /// Removes and returns every connection, each marked stopped. The caller tells their
    /// receivers after unlocking.
    mutating func removeAll() -> [ConnectionBase] {
        let all = live
        for connection in all {
            connection.markStopped()
            connection.slot = -1
        }
        storage = []
        liveCount = 0
        return all
    }

    /// The live connections in registration order.
    var live: [ConnectionBase] { storage.compactMap { $0 } }

    private mutating func compactIfSparse() {
        if liveCount == 0 {
            // Keep a small buffer: observe/stop cycles then allocate nothing.
            storage.removeAll(keepingCapacity: storage.capacity <= 16)
            return
        }
        guard storage.count >= 16, liveCount * 2 < storage.count else { return }
        var compacted = ContiguousArray<ConnectionBase?>()
        compacted.reserveCapacity(liveCount * 2)
        for case let connection? in storage {
            connection.slot = compacted.count
            compacted.append(connection)
        }
        storage = compacted
    }
}
