/// A messenger's connections in registration order. The first connection is held inline, so a
/// messenger that never has more than one observer (the common case) allocates no list; from
/// the second on, they live in contiguous storage with `nil` holes, so that removal is O(1) (each
/// connection knows its `slot`) and delivery is a plain array walk. The list stays in that
/// storage until it empties (then keeps a small buffer for reuse, see below): it does not move
/// back inline.
///
/// Not generic, so that starting and stopping observations runs without generic metadata; the
/// delivery loop, which is specialized for the message type, downcasts each element for free.
/// Every method is called with the owning messenger's lock held.
///
/// Invariants: a connection held inline has slot 0; in a buffer, `buffer[c.slot] === c` for every
/// live connection `c`; `liveCount` is the number of connections held; when more than half the
/// slots of a buffer are holes (and there are at least 16), the list compacts in place and
/// rewrites the slots; an emptied buffer is kept if it is small (for reuse) and released if it
/// is large. A slot is 32 bits: a messenger can have at most `Int32.max` slots (two billion
/// observations, far more than memory holds).
@usableFromInline
struct ConnectionList {
    /// The connections as a delivery reads them.
    @usableFromInline
    enum Slots {
        case none
        case one(ConnectionBase)
        case many(ContiguousArray<ConnectionBase?>)

        /// Calls `body` with every connection, in registration order.
        func forEachConnection(_ body: (ConnectionBase) -> Void) {
            switch self {
            case .none: break
            case .one(let connection): body(connection)
            case .many(let buffer): for case let connection? in buffer { body(connection) }
            }
        }
    }

    @usableFromInline private(set) var slots = Slots.none
    @usableFromInline private(set) var liveCount = 0
    /// Whether a buffer in `slots` was handed out by `snapshot()` since it was last moved to a
    /// fresh buffer, so that a delivering thread may be reading it.
    @usableFromInline private(set) var snapshotTaken = false

    @usableFromInline init() {}

    /// The list for a delivery, which reads it after unlocking.
    @inlinable @inline(__always)
    mutating func snapshot() -> Slots {
        snapshotTaken = true
        return slots
    }

    /// Moves a buffer to a fresh one, so that the next changes do not write to a buffer that a
    /// delivering thread may still be reading (see `MessengerCore.prepareToChangeConnections`).
    /// (A connection held inline is never written in place: changes replace it.)
    @usableFromInline
    mutating func moveToFreshStorage() {
        snapshotTaken = false
        guard case .many(let buffer) = slots else { return }
        // A real copy: `ContiguousArray(buffer)` would share it.
        var fresh = ContiguousArray<ConnectionBase?>()
        fresh.reserveCapacity(Swift.max(buffer.count, 1))
        fresh.append(contentsOf: buffer)
        slots = .many(fresh)
    }

    @usableFromInline
    mutating func append(_ connection: ConnectionBase) {
        switch takeSlots() {
        case .none:
            connection.slot = 0
            slots = .one(connection)
        case .one(let held):
            var buffer = ContiguousArray<ConnectionBase?>()
            buffer.append(held)
            buffer.append(connection)
            connection.slot = 1
            slots = .many(buffer)
            snapshotTaken = false  // nobody has seen this buffer
        case .many(var buffer):
            connection.slot = Int32(buffer.count)
            buffer.append(connection)
            slots = .many(buffer)
        }
        liveCount += 1
    }

    /// Removes `connection`, marking it stopped. Returns false if it was not in the list.
    @usableFromInline
    mutating func remove(_ connection: ConnectionBase) -> Bool {
        let slot = Int(connection.slot)
        switch slots {
        case .none:
            return false
        case .one(let held):
            guard held === connection else { return false }
            slots = .none
        case .many:
            guard case .many(var buffer) = takeSlots() else { return false }
            guard slot >= 0, slot < buffer.count, buffer[slot] === connection else {
                slots = .many(buffer)
                return false
            }
            buffer[slot] = nil
            Self.compactIfSparse(&buffer, liveCount: liveCount - 1)
            slots = .many(buffer)
        }
        connection.markStopped()
        connection.slot = -1
        liveCount -= 1
        return true
    }

    /// Puts `new` in the slot of `old`, marking `old` stopped. Returns false if `old` was not in
    /// the list. The number of connections does not change. (Written apart from `remove`, which
    /// a shared helper made slower by a retain per stop.)
    mutating func replace(_ old: ConnectionBase, with new: ConnectionBase) -> Bool {
        let slot = Int(old.slot)
        switch slots {
        case .none:
            return false
        case .one(let held):
            guard held === old else { return false }
            new.slot = 0
            slots = .one(new)
        case .many:
            guard case .many(var buffer) = takeSlots() else { return false }
            guard slot >= 0, slot < buffer.count, buffer[slot] === old else {
                slots = .many(buffer)
                return false
            }
            buffer[slot] = new
            new.slot = Int32(slot)
            slots = .many(buffer)
        }
        old.markStopped()
        old.slot = -1
        return true
    }

    /// Removes and returns every connection, each marked stopped. The caller tells their
    /// receivers after unlocking.
    mutating func removeAll() -> Slots {
        let taken = takeSlots()
        taken.forEachConnection { connection in
            connection.markStopped()
            connection.slot = -1
        }
        liveCount = 0
        snapshotTaken = false
        return taken
    }

    /// Removes and returns every connection, each marked stopped, but those that only watch for
    /// the messenger's death (`observeDeath(of:)`), which stay until it dies.
    mutating func removeAllButDeathWatches() -> Slots {
        var watches = 0
        slots.forEachConnection { if $0.watchesDeathOnly { watches += 1 } }
        guard watches > 0 else { return removeAll() }
        var kept: [ConnectionBase] = []
        var removed = ContiguousArray<ConnectionBase?>()
        takeSlots().forEachConnection { connection in
            if connection.watchesDeathOnly {
                kept.append(connection)
            } else {
                connection.markStopped()
                connection.slot = -1
                removed.append(connection)
            }
        }
        liveCount = 0
        snapshotTaken = false
        for connection in kept { append(connection) }
        return removed.isEmpty ? .none : .many(removed)
    }

    /// The connection, if there is exactly one.
    var only: ConnectionBase? {
        guard liveCount == 1 else { return nil }
        switch slots {
        case .none: return nil
        case .one(let connection): return connection
        case .many(let buffer): return buffer.lazy.compactMap { $0 }.first
        }
    }

    /// The live connections in registration order.
    var live: [ConnectionBase] {
        var connections: [ConnectionBase] = []
        slots.forEachConnection { connections.append($0) }
        return connections
    }

    /// Moves the slots out, leaving `.none`: no reference counting, and a buffer taken out is
    /// uniquely referenced while it changes, unless a delivery holds it.
    private mutating func takeSlots() -> Slots {
        var taken = Slots.none
        swap(&taken, &slots)
        return taken
    }

    private static func compactIfSparse(
        _ buffer: inout ContiguousArray<ConnectionBase?>, liveCount: Int
    ) {
        if liveCount == 0 {
            // Keep a small buffer: observe/stop cycles then allocate nothing. (The buffer held
            // at most 15 holes here, since it compacts whenever more than half of 16 or more
            // slots are holes; popping them is cheaper than `removeAll(keepingCapacity:)`, which
            // goes through the generic `replaceSubrange`.)
            if buffer.capacity > 16 {
                buffer = []
            } else {
                while buffer.popLast() != nil {}
            }
            return
        }
        guard buffer.count >= 16, liveCount * 2 < buffer.count else { return }
        // In place: moves, no reference counting and no allocation. (Moving to a smaller buffer
        // would give memory back sooner, but allocating a large block makes malloc consolidate
        // the small blocks that the ended observations freed: about 300 of the 2,100
        // instructions per death in W2-churn. Like an `Array`, the list keeps its capacity; it
        // lets go of it when it empties.)
        buffer.withUnsafeMutableBufferPointer { buffer in
            var write = 0
            for read in buffer.indices {
                guard let connection = buffer[read] else { continue }
                connection.slot = Int32(write)
                if read != write { buffer.swapAt(read, write) }
                write += 1
            }
        }
        buffer.removeLast(buffer.count - liveCount)
    }
}
