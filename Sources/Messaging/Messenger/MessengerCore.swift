/// The thread-safe heart of a ``Messenger``: its lock, its state and the delivery loop.
///
/// Connections refer to the core strongly instead of to the messenger weakly, so the messenger
/// object carries no weak-reference side table (which would slow every retain of it, and it is
/// retained as the author of most messages). The messenger tears the core down in its `deinit`.
///
/// Sending, delivering and starting an observation are `@inlinable`, so they are specialized
/// for the message type in the module that uses them; the bookkeeping of starting and stopping
/// observations is not generic at all (`DeliveryState`), so even unspecialized code needs no
/// generic metadata for it.
@usableFromInline
package final class MessengerCore<Message>: @unchecked Sendable {
    // `lock` protects `state` and `pending` (and, in `Variable`, the stored value). User code
    // never runs while it is held, and nothing whose release could run user code (a `deinit`)
    // is released while it is held: such things are taken out and released after unlocking.
    @usableFromInline package let lock = Lock()
    @usableFromInline @exclusivity(unchecked) var state = DeliveryState()
    @usableFromInline @exclusivity(unchecked) var pending = PendingQueue<Message>()

    @usableFromInline package init() {}

    // MARK: Sending

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
        var delivery: (message: Message, receivers: ContiguousArray<ConnectionBase?>)? = nil
        let sequence = lock.withLock { () -> UInt64 in
            guard let message = makeMessage() else { return 0 }
            let sequence = state.takeSequence()
            if state.isDelivering {
                pending.append(.message(message, author: author, sequence: sequence))
            } else {
                state.isDelivering = true
                delivery = (message, state.connections.storage)
            }
            return sequence
        }
        guard let delivery else { return }
        Self.deliver(delivery.message, from: author, sequence: sequence, to: delivery.receivers)
        finishDelivering()
    }

    /// Calls every receiver that accepts `sequence`, in registration order.
    @inlinable @inline(__always)
    static func deliver(
        _ message: Message, from author: AnyAuthor, sequence: UInt64,
        to receivers: ContiguousArray<ConnectionBase?>
    ) {
        // `receivers` keeps every connection alive for the whole loop, so each is borrowed
        // without retain/release (an `Optional` class reference is one pointer, nil as null);
        // every element of a core's list is a `Connection<Message>`.
        receivers.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            UnsafeRawPointer(base).withMemoryRebound(
                to: UnsafeRawPointer?.self, capacity: buffer.count
            ) { elements in
                for index in 0..<buffer.count {
                    guard let element = elements[index] else { continue }
                    Unmanaged<Connection<Message>>.fromOpaque(element)._withUnsafeGuaranteedRef {
                        if $0.accepts(sequence) { $0.deliver(message, from: author) }
                    }
                }
            }
        }
    }

    /// Called by the delivering thread when it is done with a step: runs whatever was queued
    /// meanwhile, then stops delivering.
    @inlinable @inline(__always)
    func finishDelivering() {
        if let next = lock.withLock({ nextStep() }) { run(next) }
    }

    /// The next queued step, or nil (and no longer delivering). Called under the lock.
    @inlinable
    func nextStep() -> DeliveryStep<Message>? {
        guard let item = pending.popFirst() else {
            state.isDelivering = false
            return nil
        }
        switch item {
        case .message(let message, let author, let sequence):
            return .message(
                message, author: author, sequence: sequence,
                receivers: state.connections.storage)
        case .observationStateChange(let isObserved):
            return .observationStateChange(
                isObserved: isObserved, handler: state.observationStateHandler)
        }
    }

    /// Runs `step`, then every step queued meanwhile, until none is left. Only the thread that
    /// set the delivering flag calls this, so deliveries never overlap.
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
            guard let next = lock.withLock({ nextStep() }) else { return }
            step = next
        }
    }

    // MARK: Starting and ending observations

    /// Starts an observation that receives the messages accepted from now on. `atStart` runs
    /// under the lock at the moment the observation starts, so it can read state (a variable's
    /// value) that no message accepted afterwards is missing from. It must not call user code.
    @inlinable
    package func connect(
        receiver: Receiver?, site: DeclarationSite, atStart: () -> Void = {},
        handler: Handler<Message>
    ) -> Connection<Message> {
        let (connection, notify) = lock.withLock {
            atStart()
            let connection = Connection(
                core: self, startSequence: state.nextSequence, receiver: receiver, site: site,
                handler: handler)
            state.connections.append(connection)
            let notify = state.connections.liveCount == 1 ? beginStateChange(isObserved: true) : nil
            return (connection, notify)
        }
        receiver?.add(connection)
        if let notify { tellObservationState(true, to: notify) }
        return connection
    }

    /// Starts an observation whose handler takes the author too.
    @inlinable
    package func connect(
        receiver: Receiver?, site: DeclarationSite, atStart: () -> Void = {},
        receive: @escaping (Message, AnyAuthor) -> Void
    ) -> Connection<Message> {
        connect(
            receiver: receiver, site: site, atStart: atStart, handler: .messageAndAuthor(receive))
    }

    /// Ends one observation on the messenger side. Harmless if it ended already.
    @usableFromInline
    func disconnect(_ connection: ConnectionBase) {
        let notify = lock.withLock { () -> ((Bool) -> Void)? in
            guard state.connections.remove(connection), state.connections.liveCount == 0 else {
                return nil
            }
            return beginStateChange(isObserved: false)
        }
        if let notify { tellObservationState(false, to: notify) }
    }

    /// Ends every observation of this messenger.
    func disconnectAll() {
        let (removed, notify) = lock.withLock { () -> ([ConnectionBase], ((Bool) -> Void)?) in
            let removed = state.connections.removeAll()
            return (removed, removed.isEmpty ? nil : beginStateChange(isObserved: false))
        }
        for connection in removed { connection.receiver?.forget(connection) }
        if let notify { tellObservationState(false, to: notify) }
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
        let (connections, handler) = lock.withLock {
            defer { state.observationStateHandler = nil }
            return (state.connections.removeAll(), state.observationStateHandler)
        }
        for connection in connections { connection.receiver?.forget(connection) }
        _ = handler
    }

    // MARK: Observation state

    /// Under the lock: the observation-state handler to call now (this thread then delivers),
    /// or nil (no handler, or queued for the thread that is delivering).
    @usableFromInline
    func beginStateChange(isObserved: Bool) -> ((Bool) -> Void)? {
        guard let handler = state.observationStateHandler else { return nil }
        if state.isDelivering {
            pending.append(.observationStateChange(isObserved: isObserved))
            return nil
        }
        state.isDelivering = true
        return handler
    }

    /// Calls the handler `beginStateChange` returned, then delivers what was queued meanwhile.
    @usableFromInline
    func tellObservationState(_ isObserved: Bool, to handler: (Bool) -> Void) {
        handler(isObserved)
        finishDelivering()
    }

    package var observationCount: Int { lock.withLock { state.connections.liveCount } }

    var observationSites: [DeclarationSite] {
        lock.withLock { state.connections.live.map(\.site) }
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
