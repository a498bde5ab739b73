/// The thread-safe heart of a ``Messenger``: its lock, its state machine and the delivery loop.
///
/// Connections refer to the core strongly instead of to the messenger weakly, so the messenger
/// object carries no weak-reference side table (which would slow every retain of it, and it is
/// retained as the author of most messages). The messenger tears the core down in its `deinit`.
///
/// The hot path (`send`, `run`) is `@inlinable` so that it is specialized for the message type in
/// the module that sends.
@usableFromInline
final class MessengerCore<Message>: @unchecked Sendable {
    // `lock` protects `state` (and, in `Variable`, the stored value). User code never runs while
    // it is held: every method computes a `DeliveryStep` under the lock and runs it after.
    @usableFromInline let lock = Lock()
    @usableFromInline @exclusivity(unchecked) var state = MessengerState<Message>()

    @usableFromInline init() {}

    /// Accepts `message` and delivers it, or leaves it to the thread that is already delivering.
    @inlinable @inline(__always)
    func send(_ message: Message, from author: AnyAuthor) {
        send(from: author) { message }
    }

    /// Calls `makeMessage` under the lock; if it returns a message, accepts it (in the same
    /// critical section, so that a state change and its message are one atomic step) and
    /// delivers it, or leaves it to the thread that is already delivering.
    ///
    /// The common case (nobody else delivering) builds no `DeliveryStep` and borrows the author
    /// from the caller; only the receiver list is retained, as the snapshot.
    @inlinable @inline(__always)
    func send(from author: AnyAuthor, _ makeMessage: () -> Message?) {
        var delivery: (message: Message, receivers: ContiguousArray<Connection<Message>?>)? = nil
        let sequence = lock.withLock { () -> UInt64 in
            guard let message = makeMessage() else { return 0 }
            let sequence = state.nextSequence
            state.nextSequence &+= 1
            if state.isDelivering {
                state.pending.append(.message(message, author: author, sequence: sequence))
            } else {
                state.isDelivering = true
                delivery = (message, state.connections)
            }
            return sequence
        }
        guard let delivery else { return }
        Self.deliver(delivery.message, from: author, sequence: sequence, to: delivery.receivers)
        if let next = lock.withLock({ state.next() }) { run(next) }
    }

    /// Runs `step`, then every step queued meanwhile, until none is left. Only the thread that
    /// set the state's delivering flag calls this, so deliveries never overlap.
    @inlinable
    func run(_ first: DeliveryStep<Message>) {
        var step = first
        while true {
            switch step {
            case .message(let message, let author, let sequence, let receivers):
                Self.deliver(message, from: author, sequence: sequence, to: receivers)
            case .observationStateChange(let isObserved, let handler):
                handler?(isObserved)
            }
            guard let next = lock.withLock({ state.next() }) else { return }
            step = next
        }
    }

    /// Calls every receiver that accepts `sequence`, in registration order.
    @inlinable @inline(__always)
    static func deliver(
        _ message: Message, from author: AnyAuthor, sequence: UInt64,
        to receivers: ContiguousArray<Connection<Message>?>
    ) {
        // `receivers` keeps every connection alive for the loop, so borrowing them unretained
        // saves two atomic operations per delivery.
        receivers.withUnsafeBufferPointer { buffer in
            for index in buffer.indices {
                guard let element = buffer[index] else { continue }
                unowned(unsafe) let connection = element
                if connection.accepts(sequence) { connection.receive(message, author) }
            }
        }
    }

    /// Starts an observation that receives the messages accepted from now on.
    func connect(
        receiver: Receiver?, site: DeclarationSite,
        receive: @escaping (Message, AnyAuthor) -> Void
    ) -> Connection<Message> {
        let (connection, step) = lock.withLock {
            let connection = Connection(
                core: self, startSequence: state.nextSequence, receiver: receiver, site: site,
                receive: receive)
            return (connection, state.connect(connection))
        }
        receiver?.add(connection)
        if let step { run(step) }
        return connection
    }

    /// Ends one observation on the messenger side. Harmless if it ended already.
    func disconnect(_ connection: Connection<Message>) {
        if let step = lock.withLock({ state.disconnect(connection) }) { run(step) }
    }

    /// Ends every observation owned by `receiver`, or every observation if `receiver` is nil.
    func disconnectAll(of receiver: Receiver?) {
        let (removed, step) = lock.withLock {
            state.disconnectAll { receiver == nil || $0.receiver === receiver }
        }
        for connection in removed { connection.receiver?.forget(connection) }
        if let step { run(step) }
    }

    /// The messenger died: end every observation without calling the state handler.
    func tearDown() {
        let connections = lock.withLock {
            let all = state.liveConnections
            for connection in all { connection.markStopped() }
            state.connections = []
            state.observationStateHandler = nil
            return all
        }
        for connection in connections { connection.receiver?.forget(connection) }
    }

    var observationCount: Int { lock.withLock { state.liveCount } }

    var observationSites: [DeclarationSite] {
        lock.withLock { state.liveConnections.map(\.site) }
    }

    func setObservationStateHandler(_ handler: @escaping (Bool) -> Void) {
        lock.withLock { state.observationStateHandler = handler }
    }
}
