/// The thread-safe heart of a ``Messenger``: its lock, its state machine and the delivery loop.
///
/// Connections refer to the core strongly instead of to the messenger weakly, so the messenger
/// object carries no weak-reference side table (which would slow every retain of it, and it is
/// retained as the author of most messages). The messenger tears the core down in its `deinit`.
///
/// The hot path (`send`, `run`) is `@inlinable` so that it is specialized for the message type in
/// the module that sends.
@usableFromInline
package final class MessengerCore<Message>: @unchecked Sendable {
    // `lock` protects `state` (and, in `Variable`, the stored value). User code never runs while
    // it is held: every method computes a `DeliveryStep` under the lock and runs it after.
    @usableFromInline package let lock = Lock()
    @usableFromInline @exclusivity(unchecked) var state = MessengerState<Message>()

    @usableFromInline package init() {}

    /// Accepts `message` and delivers it, or leaves it to the thread that is already delivering.
    @inlinable @inline(__always)
    package func send(_ message: Message, from author: AnyAuthor) {
        send(from: author) { message }
    }

    /// Calls `makeMessage` under the lock; if it returns a message, accepts it (in the same
    /// critical section, so that a state change and its message are one atomic step) and
    /// delivers it, or leaves it to the thread that is already delivering.
    ///
    /// The common case (nobody else delivering) builds no `DeliveryStep` and borrows the author
    /// from the caller; only the receiver list is retained, as the snapshot.
    @inlinable @inline(__always)
    package func send(from author: AnyAuthor, _ makeMessage: () -> Message?) {
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

    /// Starts an observation that receives the messages accepted from now on. `atStart` runs
    /// under the lock at the moment the observation starts, so it can read state (a variable's
    /// value) that no message accepted afterwards is missing from. It must not call user code.
    @usableFromInline
    package func connect(
        receiver: Receiver?, site: DeclarationSite, atStart: () -> Void = {},
        receive: @escaping (Message, AnyAuthor) -> Void
    ) -> Connection<Message> {
        let (connection, step) = lock.withLock {
            atStart()
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
    @usableFromInline
    package func disconnect(_ connection: Connection<Message>) {
        if let step = lock.withLock({ state.disconnect(connection) }) { run(step) }
    }

    /// Ends every observation of this messenger.
    func disconnectAll() {
        let (removed, step) = lock.withLock { state.disconnectAll() }
        for connection in removed { connection.receiver?.forget(connection) }
        if let step { run(step) }
    }

    /// Ends every observation of this messenger that `receiver` owns. Works from the receiver's
    /// side, so that no weak reference to a receiver is loaded (and possibly released, running
    /// its `deinit`) while this messenger's lock is held.
    func disconnectAll(of receiver: Receiver) {
        for connection in receiver.takeConnections(to: self) { connection.detachFromMessenger() }
    }

    /// The messenger died: end every observation without calling the state handler.
    func tearDown() {
        // Everything taken out under the lock is released after it: a handler or connection may
        // hold the last reference to an observer, whose `deinit` takes this lock again.
        let (connections, handler) = lock.withLock { state.tearDown() }
        for connection in connections { connection.receiver?.forget(connection) }
        _ = handler
    }

    package var observationCount: Int { lock.withLock { state.liveCount } }

    var observationSites: [DeclarationSite] {
        lock.withLock { state.liveConnections.map(\.site) }
    }

    func setObservationStateHandler(_ handler: @escaping (Bool) -> Void) {
        // The replaced handler is released after unlocking (see `tearDown`).
        let replaced = lock.withLock {
            defer { state.observationStateHandler = handler }
            return state.observationStateHandler
        }
        _ = replaced
    }
}
