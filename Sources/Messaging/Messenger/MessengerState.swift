/// What a messenger must do next, computed under its lock and carried out after releasing it.
@usableFromInline
enum DeliveryStep<Message> {
    /// Call every connection in `receivers` that accepts `sequence`.
    case message(
        Message, author: AnyAuthor, sequence: UInt64,
        receivers: ContiguousArray<Connection<Message>?>)
    /// Tell the observation-state handler that the messenger is now observed or not.
    case observationStateChange(isObserved: Bool, handler: ((Bool) -> Void)?)
}

/// Work accepted while another call was delivering, in acceptance order.
@usableFromInline
enum PendingDelivery<Message> {
    case message(Message, author: AnyAuthor, sequence: UInt64)
    case observationStateChange(isObserved: Bool)
}

/// The lock-protected state of a ``Messenger``: a pure state machine whose mutating methods say
/// what the caller must do once the lock is released. It never calls user code.
///
/// Invariants:
/// - `connections` keeps registration order; removed connections leave a `nil` hole (removal is
///   O(1) through `Connection.slot`) until more than half the slots are holes, then it compacts.
/// - At most one thread delivers at a time (`isDelivering`); others append to `pending`, which the
///   delivering thread drains before it clears the flag.
@usableFromInline
struct MessengerState<Message> {
    @usableFromInline var connections: ContiguousArray<Connection<Message>?> = []
    @usableFromInline var liveCount = 0
    @usableFromInline var nextSequence: UInt64 = 0
    @usableFromInline var isDelivering = false
    @usableFromInline var pending: ContiguousArray<PendingDelivery<Message>> = []
    @usableFromInline var pendingHead = 0
    @usableFromInline var observationStateHandler: ((Bool) -> Void)?

    @usableFromInline init() {}

    /// Called by the delivering thread after each step: the next step, or `nil` when done (and
    /// then no longer delivering).
    @inlinable
    mutating func next() -> DeliveryStep<Message>? {
        guard pendingHead < pending.count else {
            if !pending.isEmpty { pending.removeAll(keepingCapacity: pending.count <= 64) }
            pendingHead = 0
            isDelivering = false
            return nil
        }
        // Overwrite the taken entry so the queue does not keep its message alive.
        let taken = pending[pendingHead]
        pending[pendingHead] = .observationStateChange(isObserved: false)
        pendingHead += 1
        switch taken {
        case .message(let message, let author, let sequence):
            return .message(message, author: author, sequence: sequence, receivers: connections)
        case .observationStateChange(let isObserved):
            return .observationStateChange(isObserved: isObserved, handler: observationStateHandler)
        }
    }

    /// Adds a connection that receives only messages accepted from now on.
    mutating func connect(_ connection: Connection<Message>) -> DeliveryStep<Message>? {
        connection.slot = connections.count
        connections.append(connection)
        liveCount += 1
        return liveCount == 1 ? observationStateChanged(isObserved: true) : nil
    }

    /// Removes a connection and marks it stopped. Harmless if it was removed already.
    mutating func disconnect(_ connection: Connection<Message>) -> DeliveryStep<Message>? {
        let slot = connection.slot
        guard slot >= 0, slot < connections.count, connections[slot] === connection else {
            return nil
        }
        connection.markStopped()
        connection.slot = -1
        connections[slot] = nil
        liveCount -= 1
        compactIfSparse()
        return liveCount == 0 ? observationStateChanged(isObserved: false) : nil
    }

    /// Removes and returns every connection, marking each stopped.
    mutating func disconnectAll() -> ([Connection<Message>], DeliveryStep<Message>?) {
        let removed = takeAll()
        guard !removed.isEmpty else { return ([], nil) }
        return (removed, observationStateChanged(isObserved: false))
    }

    /// The messenger died: removes and returns every connection (marked stopped) and the
    /// observation-state handler, which is not called. The caller releases both after unlocking.
    mutating func tearDown() -> ([Connection<Message>], ((Bool) -> Void)?) {
        let handler = observationStateHandler
        observationStateHandler = nil
        return (takeAll(), handler)
    }

    private mutating func takeAll() -> [Connection<Message>] {
        let all = liveConnections
        for connection in all {
            connection.markStopped()
            connection.slot = -1
        }
        connections = []
        liveCount = 0
        return all
    }

    /// The live connections in registration order.
    var liveConnections: [Connection<Message>] { connections.compactMap { $0 } }

    private mutating func observationStateChanged(isObserved: Bool) -> DeliveryStep<Message>? {
        guard observationStateHandler != nil else { return nil }
        if isDelivering {
            pending.append(.observationStateChange(isObserved: isObserved))
            return nil
        }
        isDelivering = true
        return .observationStateChange(isObserved: isObserved, handler: observationStateHandler)
    }

    private mutating func compactIfSparse() {
        if liveCount == 0 {
            connections = []
            return
        }
        guard connections.count >= 16, liveCount * 2 < connections.count else { return }
        var compacted = ContiguousArray<Connection<Message>?>()
        compacted.reserveCapacity(liveCount * 2)
        for case let connection? in connections {
            connection.slot = compacted.count
            compacted.append(connection)
        }
        connections = compacted
    }
}
