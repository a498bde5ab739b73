import RuntimeShims
import Synchronization

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
package final class MessengerCore<Message>: DeliveryTurns, @unchecked Sendable {
    // `lock` protects `state` and `pending` (and, in `Variable`, the stored value). User code
    // never runs while it is held, and nothing whose release could run user code (a `deinit`)
    // is released while it is held: such things are taken out and released after unlocking.
    @usableFromInline package let lock = Lock()
    @usableFromInline @exclusivity(unchecked) var state = DeliveryState()
    @usableFromInline @exclusivity(unchecked) var pending = PendingQueue<Message>()
    /// Told after each start and end of an observation (see `setConnectionCountObserver`). Set
    /// before the core is shared, read without the lock.
    @usableFromInline @exclusivity(unchecked) var countObserver = CountObserverReference()
    /// What is computed from this messenger's state (synthetic properties that read it), told
    /// of each message before it is delivered. Guarded by `lock`; nil while there is none.
    @usableFromInline @exclusivity(unchecked) var dependents: DependentList?

    /// Who delivers. `delivering` is set while one thread delivers this messenger's work (only
    /// one at a time); `hasPending` while work waits in `pending`. Both are set only under the
    /// lock. The delivering thread gives up its role without the lock, by one compare-exchange
    /// that succeeds only when nothing is pending, so finishing a delivery costs no lock round
    /// trip; a sender that finds the role given up after it queued work takes it over.
    @usableFromInline let role = Atomic<UInt8>(0)
    @usableFromInline static var delivering: UInt8 { 1 }
    @usableFromInline static var hasPending: UInt8 { 2 }

    @inlinable package init() {}

    // MARK: Sending

    /// Accepts `message` and delivers it, or leaves it to the thread that is already delivering.
    @inlinable @inline(__always)
    package func send(_ message: Message, from author: AnyAuthor) {
        send(from: author) { message }
    }

    /// Calls `makeMessage` under the lock; if it returns a message, accepts it (in the same
    /// critical section, so that a state change and its message are one atomic step) and
    /// delivers it, or leaves it to the thread that is already delivering. (A message that
    /// nobody can hear, which only marked dependents, ends there.)
    ///
    /// The common case (nobody else delivering) takes the lock once, builds no `DeliveryStep`
    /// and borrows the author from the caller; only the receiver list is retained, as the
    /// snapshot.
    @inlinable @inline(__always)
    package func send(from author: AnyAuthor, _ makeMessage: () -> Message?) {
        var delivery: (message: Message, receivers: ConnectionList.Slots)? = nil
        var mustDrain = false
        // The marking thread's identity, if the message marked dependents.
        var marked: ObjectIdentifier? = nil
        // A message nobody can hear (see below), released after unlocking: it may hold the last
        // reference to a replaced value, whose deinit may be anyone's code.
        var unheard: Message? = nil
        // Set if the message was queued behind a delivery that is behind (see `DeliveryTurn`).
        var behind = false
        let sequence = lock.withLock { () -> UInt64 in
            guard let message = makeMessage() else { return 0 }
            // Compared, not copied: a copy would retain (and release) on every send. Marked
            // here, before any thread can deliver the message.
            if _slowPath(self.dependents != nil) {
                let marking = markDependentsWhileLocked()
                marked = marking.thread
                // No work queued by the marking, no observer, no delivery running or waiting:
                // the message has nobody to reach and nothing to wait for, so it takes no turn
                // and no sequence number (an observation that starts later would not hear it
                // anyway); what follows the unlocking only releases what the marking kept alive.
                // A variable that only unobserved synthetic properties read is set this way.
                if !marking.queuedWork, state.connections.liveCount == 0,
                    role.load(ordering: .acquiring) == 0
                {
                    unheard = consume message
                    return 0
                }
            }
            let sequence = state.takeSequence()
            switch admit(.message(message, author: author, sequence: sequence)) {
            case .deliverNow: delivery = (message, state.connections.snapshot())
            case .queued(let isBehind): behind = isBehind
            case .drainQueue: mustDrain = true
            }
            return sequence
        }
        if let (message, receivers) = consume delivery {
            if let marked {
                deliverThenPropagate(
                    message, from: author, sequence: sequence, to: receivers, markedOn: marked)
            } else {
                Self.deliver(message, from: author, sequence: sequence, to: receivers)
            }
            finishDelivering()
        } else {
            if let marked { handOverMarkedWork(markedOn: marked) }
            if mustDrain { drainPending() }
            if _slowPath(behind) { takeTurnIfBehind() }
        }
        // Kept until here, after what the marking kept alive, as a delivered message is.
        withExtendedLifetime(unheard) {}
    }

    /// Delivers a message that marked dependents, then runs the work the marking queued, still
    /// in this messenger's turn (this thread delivers), without queuing it as a closure unless
    /// messages wait (see ``propagateInTurn(_:)``).
    @inlinable @inline(never)
    func deliverThenPropagate(
        _ message: Message, from author: AnyAuthor, sequence: UInt64,
        to receivers: borrowing ConnectionList.Slots, markedOn thread: ObjectIdentifier
    ) {
        let work = DependencyTracking.takeMarkedWork(on: thread)
        Self.deliver(message, from: author, sequence: sequence, to: receivers)
        if !work.isEmpty { propagateInTurn(consume work) }
    }

    /// Runs work that marking queued, on the delivering thread, after what waits in this
    /// messenger's queue: messages accepted since (a handler that set the variable again,
    /// another thread's change) carry values that the work computes from, so the variable's
    /// observers hear of them first. It goes behind them once (`mayWait`): two pieces of work
    /// waiting behind each other would otherwise take turns forever. A change accepted while
    /// the work runs, or after it went behind the queue, can still be in the values it computes
    /// from.
    @usableFromInline
    func propagateInTurn(_ work: consuming MarkedWork, mayWait: Bool = true) {
        if mayWait, role.load(ordering: .acquiring) & Self.hasPending != 0 {
            performInTurn { [work, self] in propagateInTurn(work, mayWait: false) }
        } else {
            DependencyTracking.propagate(work)
        }
    }

    /// What a thread that brings work must do.
    @usableFromInline
    enum Admission {
        /// It now delivers: do the work directly, then `finishDelivering()`.
        case deliverNow
        /// The work was queued for the thread that is delivering. If the messenger is `behind`,
        /// the caller, once it has done everything else, calls ``takeTurnIfBehind()`` (see
        /// ``DeliveryTurn``).
        case queued(behind: Bool)
        /// The work was queued, and the delivering thread had just let go: `drainPending()`.
        case drainQueue
    }

    /// Under the lock: take the delivering role, or queue `item` for the thread that has it.
    @inlinable @inline(__always)
    func admit(_ item: @autoclosure () -> PendingDelivery<Message>) -> Admission {
        var current = role.load(ordering: .acquiring)
        if current & Self.delivering == 0 {
            role.store(Self.delivering, ordering: .relaxed)
            beginTurn()
            return .deliverNow
        }
        pending.append(item())
        while true {
            if current & Self.delivering == 0 {
                role.store(Self.delivering | Self.hasPending, ordering: .relaxed)
                beginTurn()
                return .drainQueue
            }
            let (exchanged, original) = role.compareExchange(
                expected: current, desired: current | Self.hasPending,
                ordering: .acquiringAndReleasing)
            if exchanged { return .queued(behind: state.turn.mustWait(waiting: pending.count)) }
            current = original
        }
    }

    /// Called by the delivering thread when it is done with its work: gives up the role, or
    /// runs what was queued meanwhile first.
    @inlinable @inline(__always)
    func finishDelivering() {
        let released = role.compareExchange(
            expected: Self.delivering, desired: 0, ordering: .acquiringAndReleasing
        ).exchanged
        if released { endTurn() } else { drainPending() }
    }

    /// Takes the delivering role for work the caller does itself (not a message of this core),
    /// if no thread has it and nothing is queued; then work that other threads bring meanwhile
    /// waits, and the caller gives the role up with ``endDeliveringDirectly()``, which runs that
    /// work. False if the role is taken: the caller then queues its work as a message.
    ///
    /// (A ``SwitchEngine`` uses it to handle an event on the sending thread without the hop
    /// through its queue, keeping its events serial.)
    @inlinable @inline(__always)
    package func beginDeliveringDirectly() -> Bool {
        lock.withLock {
            // Nobody delivers and nothing waits (`hasPending` is only ever set with
            // `delivering`).
            guard role.load(ordering: .acquiring) == 0 else { return false }
            role.store(Self.delivering, ordering: .relaxed)
            beginTurn()
            return true
        }
    }

    /// Gives up the delivering role taken by ``beginDeliveringDirectly()``, after running the
    /// work queued meanwhile.
    @inlinable @inline(__always)
    package func endDeliveringDirectly() {
        finishDelivering()
    }

    /// Runs queued work until none is left, then gives up the delivering role; or, between two
    /// steps, hands the role to a sender waiting for it, which delivers the rest. Only the
    /// thread that holds the role calls this, so deliveries never overlap.
    @inlinable
    func drainPending() {
        repeat {
            if let step = lock.withLock({ nextStep() }) {
                if case .handOff(let taker) = step {
                    taker.unpark()
                    endTurn()
                    return
                }
                perform(step)
            }
        } while !role.compareExchange(
            expected: Self.delivering, desired: 0, ordering: .acquiringAndReleasing
        ).exchanged
        endTurn()
    }

    /// Under the lock, before changing the connection list. A delivering thread reads its snapshot
    /// of the list and later drops it without taking the lock, and the copy-on-write uniqueness
    /// check does not order a write here after those reads. So: if no snapshot was taken since
    /// the list last moved to a fresh buffer, no other thread has seen this buffer; if no
    /// delivery runs, this acquiring load synchronizes with the deliverer's releasing
    /// compare-exchange. In both cases writing in place is safe. Otherwise the list moves to a
    /// fresh buffer first, which is then written in place until the next snapshot: many changes
    /// during one delivery (handlers that stop their own observations) copy the list once, not
    /// once each.
    @inlinable @inline(__always)
    func prepareToChangeConnections() {
        if state.connections.snapshotTaken,
            role.load(ordering: .acquiring) & Self.delivering != 0
        {
            state.connections.moveToFreshStorage()
        }
    }

    /// Calls every receiver that accepts `sequence`, in registration order.
    ///
    /// `receivers` is borrowed: binding the connection (or the buffer) out of a consumed enum
    /// copied it, one more retain and release per delivery.
    @inlinable @inline(__always)
    static func deliver(
        _ message: Message, from author: AnyAuthor, sequence: UInt64,
        to receivers: borrowing ConnectionList.Slots
    ) {
        // Every connection of a core's list is a `Connection<Message>`.
        switch receivers {
        case .none:
            return
        case .one(let connection):
            let connection = unsafeDowncast(connection, to: Connection<Message>.self)
            if connection.accepts(sequence) { connection.deliver(message, from: author) }
        case .many(let buffer):
            // `buffer` keeps every connection alive for the whole loop, so each is borrowed
            // without retain/release (an `Optional` class reference is one pointer, nil as
            // null).
            buffer.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                UnsafeRawPointer(base).withMemoryRebound(
                    to: UnsafeRawPointer?.self, capacity: buffer.count
                ) { elements in
                    for index in 0..<buffer.count {
                        guard let element = elements[index] else { continue }
                        Unmanaged<Connection<Message>>.fromOpaque(element)
                            ._withUnsafeGuaranteedRef {
                                if $0.accepts(sequence) { $0.deliver(message, from: author) }
                            }
                    }
                }
            }
        }
    }

    /// The next queued step, or nil. Called under the lock by the delivering thread; clears
    /// `hasPending` when it takes the last item. A sender waiting for the role is handed it here
    /// (see ``DeliveryTurn/next(waiting:)``).
    @inlinable
    func nextStep() -> DeliveryStep<Message>? {
        if case .handOff(let taker) = state.turn.next(waiting: pending.count) {
            return .handOff(to: taker)
        }
        let item = pending.popFirst()
        // While a sender waits to be handed the role, `hasPending` stays set, so that the role
        // is handed over, never given up.
        if pending.isEmpty, state.turn.mayGiveUp { role.store(Self.delivering, ordering: .relaxed) }
        switch item {
        case .message(let message, let author, let sequence):
            return .message(
                message, author: author, sequence: sequence,
                receivers: state.connections.snapshot())
        case .observationStateChange(let isObserved):
            return .observationStateChange(
                isObserved: isObserved, handler: state.observationStateHandler)
        case .endObservations:
            return .endObservations
        case .work(let work):
            return .work(work)
        case nil:
            return nil
        }
    }

    /// Carries out one step.
    @inlinable
    func perform(_ step: DeliveryStep<Message>) {
        switch step {
        case .message(let message, let author, let sequence, let receivers):
            Self.deliver(message, from: author, sequence: sequence, to: receivers)
        case .observationStateChange(let isObserved, let handler):
            handler?(isObserved)
        case .endObservations:
            disconnectAll()
        case .work(let work):
            work.perform()
        case .handOff:
            // `drainPending` hands the role over itself, and performs no such step.
            break
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
        connect(receiver: receiver, atStart: atStart) { sequence in
            Connection(
                core: self, startSequence: sequence, receiver: receiver?.storage, site: site,
                handler: handler)
        }
    }

    /// Starts an observation that `receiver`, if any, files under `group` instead of this
    /// messenger (see ``GroupedConnection``): `observer.stopObserving(x)` and `isObserving(x)`
    /// find it through the object whose identity `group` is. Without a group (or a receiver), a
    /// plain observation.
    @inlinable
    package func connect(
        receiver: Receiver?, site: DeclarationSite, groupedUnder group: ObjectIdentifier?,
        atStart: () -> Void = {}, handler: Handler<Message>
    ) -> Connection<Message> {
        guard let group, let receiver else {
            return connect(receiver: receiver, site: site, atStart: atStart, handler: handler)
        }
        return connect(receiver: receiver, atStart: atStart) { sequence in
            GroupedConnection(
                core: self, startSequence: sequence, receiver: receiver.storage, site: site,
                handler: handler, group: group)
        }
    }

    /// Starts the observation that `make` creates from its start sequence (see
    /// `connect(receiver:site:atStart:handler:)`).
    /// `afterStart`, if given, runs under the lock right after the start (before the
    /// observation-state change is told).
    @inlinable @inline(__always)
    func connect(
        receiver: Receiver?, atStart: () -> Void,
        make: (_ startSequence: UInt64) -> Connection<Message>,
        afterStart: ((Connection<Message>) -> Void)? = nil
    ) -> Connection<Message> {
        let (connection, notify) = lock.withLock {
            atStart()
            let connection = make(state.nextSequence)
            prepareToChangeConnections()
            state.connections.append(connection)
            let becameObserved = state.connections.liveCount == 1
            let notify = becameObserved ? beginStateChange(isObserved: true) : .none
            afterStart?(connection)
            return (connection, notify)
        }
        receiver?.storage.add(connection)
        countObserver.tell()
        tellObservationState(true, notify)
        return connection
    }

    /// Starts an observation whose first message is the state it starts from (KVO's
    /// `.initial`), delivered to it alone, authored by `author`, in turn with this messenger's
    /// other work: at once if nothing else is being delivered, else after the work accepted
    /// before (also when this runs inside one of this messenger's handlers), and always before
    /// the messages accepted after the start.
    ///
    /// `latestWhileLocked`, if given, reads the state under the lock, in the same step as the
    /// start (a variable's value): the first message is then exactly the state that every later
    /// message changes. Otherwise `latest` reads it when its turn comes, outside the lock (it may
    /// be user code): the first message is then the state as it is when delivered, which may
    /// already include a change whose update follows. (Reading it before the start instead could
    /// miss a change for good: one whose update was sent between the read and the start.)
    @usableFromInline
    package func connectSendingLatest(
        receiver: Receiver?, site: DeclarationSite, groupedUnder group: ObjectIdentifier?,
        handler: Handler<Message>, author: AnyAuthor, latestWhileLocked: (() -> Message)?,
        latest: @escaping () -> Message
    ) -> Connection<Message> {
        let make = { (sequence: UInt64) -> Connection<Message> in
            guard let group, let receiver else {
                return Connection(
                    core: self, startSequence: sequence, receiver: receiver?.storage, site: site,
                    handler: handler)
            }
            return GroupedConnection(
                core: self, startSequence: sequence, receiver: receiver.storage, site: site,
                handler: handler, group: group)
        }
        var initial: QueuedWork?
        var admission = Admission.queued(behind: false)
        let connection = connect(receiver: receiver, atStart: {}, make: make) { connection in
            // Under the lock, right after the start.
            let message: () -> Message
            if let latestWhileLocked {
                let read = latestWhileLocked()
                message = { read }
            } else {
                message = latest
            }
            let delivery = InitialDelivery(to: connection, from: author, message: message)
            initial = delivery
            admission = self.admit(.work(delivery))
        }
        if let initial { carryOut(admission, of: initial) }
        return connection
    }

    /// Runs `work` in turn with this messenger's messages, on the thread that delivers them: at
    /// once if nothing else is being delivered, else after the work accepted before (also when
    /// called from inside one of this messenger's handlers), and always before the messages
    /// accepted after this call. So `work` never runs concurrently with a delivery of this
    /// messenger.
    @inlinable
    package func performInTurn(_ work: @escaping () -> Void) {
        let queued = ClosureWork(work)
        carryOut(lock.withLock { admit(.work(queued)) }, of: queued)
    }

    /// What a thread whose queued work was admitted must do next.
    @inlinable
    func carryOut(_ admission: Admission, of work: QueuedWork) {
        switch admission {
        case .deliverNow:
            work.perform()
            finishDelivering()
        case .queued(let behind):
            if behind { takeTurnIfBehind() }
        case .drainQueue:
            drainPending()
        }
    }

    /// Starts an observation that also hears of the messenger's death: `died` is called once,
    /// after the messenger (with its object) died and ended the observation, on the thread that
    /// let go of it. Without a `handler`, the observation receives no message, only the death.
    package func connectWatchingDeath(
        receiver: Receiver?, site: DeclarationSite, handler: Handler<Message>?,
        died: @escaping () -> Void
    ) -> Connection<Message> {
        connect(receiver: receiver, atStart: {}) { sequence in
            DeathWatchingConnection(
                core: self, startSequence: sequence, receiver: receiver?.storage, site: site,
                handler: handler, died: died)
        }
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
        let notify = lock.withLock { () -> StateChangeAction in
            prepareToChangeConnections()
            guard state.connections.remove(connection), state.connections.liveCount == 0 else {
                return .none
            }
            return beginStateChange(isObserved: false)
        }
        countObserver.tell()
        tellObservationState(false, notify)
    }

    /// Ends every observation of this messenger but the watches of its death only
    /// (`observeDeath(of:)`), which stay until it dies.
    @usableFromInline
    package func disconnectAll() {
        var wasObserved = false
        let (removed, notify) = lock.withLock {
            () -> (ConnectionList.Slots, StateChangeAction) in
            wasObserved = state.connections.liveCount > 0
            let removed = state.connections.removeAllButDeathWatches()
            let unobserved = wasObserved && state.connections.liveCount == 0
            return (removed, unobserved ? beginStateChange(isObserved: false) : .none)
        }
        removed.forEachConnection { connection in
            connection.receiver?.forget(connection)
            connection.endedByObservedSide()
        }
        if wasObserved { countObserver.tell() }
        tellObservationState(false, notify)
    }

    /// Ends every observation of this messenger once the messages accepted before are delivered:
    /// if another call is delivering (on this thread or another), in turn after its queued work,
    /// so that a last message sent just before reaches every observation.
    package func disconnectAllAfterDeliveries() {
        switch lock.withLock({ admit(.endObservations) }) {
        case .deliverNow:
            disconnectAll()
            finishDelivering()
        case .queued(let behind):
            if behind { takeTurnIfBehind() }
        case .drainQueue:
            drainPending()
        }
    }

    /// The messenger died: end every observation without calling the state handler.
    func tearDown() {
        // Everything taken out under the lock is released after it: a handler or connection may
        // hold the last reference to an observer, whose `deinit` takes this lock again.
        let (removed, handler) = lock.withLock {
            defer { state.observationStateHandler = nil }
            return (state.connections.removeAll(), state.observationStateHandler)
        }
        // One connection at a time: a death handler may end another watch of this object (stop
        // it, or let its observer go), which is then not told.
        removed.forEachConnection { connection in
            connection.endedByObservedSide()
            if connection.receiver?.forget(connection) ?? true { connection.observedObjectDied() }
        }
        _ = handler
    }

    // MARK: Observation state

    /// What a thread must do about an observation-state change.
    @usableFromInline
    enum StateChangeAction {
        case none
        /// Call the handler now, then `finishDelivering()`.
        case call((Bool) -> Void)
        /// The change was queued and the delivering thread had just let go: `drainPending()`.
        case drain
        /// The change was queued behind a delivery that is behind: `takeTurnIfBehind()`.
        case takeTurn
    }

    /// Under the lock: what to do about the messenger becoming observed or unobserved.
    ///
    /// Inlined, so that a messenger without a state handler (most of them) spends nothing here:
    /// code that is not specialized for the message type looks up the metadata of the queued
    /// item's type on entry to the function that may queue it, which cost a third of a stop.
    @inlinable @inline(__always)
    func beginStateChange(isObserved: Bool) -> StateChangeAction {
        guard let handler = state.observationStateHandler else { return .none }
        return admitStateChange(isObserved: isObserved, handler: handler)
    }

    /// Under the lock: take the delivering role to call `handler`, or queue the change.
    @usableFromInline
    func admitStateChange(isObserved: Bool, handler: @escaping (Bool) -> Void) -> StateChangeAction
    {
        switch admit(.observationStateChange(isObserved: isObserved)) {
        case .deliverNow: return .call(handler)
        case .queued(let behind): return behind ? .takeTurn : .none
        case .drainQueue: return .drain
        }
    }

    /// Carries out what `beginStateChange` decided, after unlocking. Inlined, so that the
    /// common case (nothing to tell) costs a test.
    @inlinable @inline(__always)
    func tellObservationState(_ isObserved: Bool, _ action: StateChangeAction) {
        if case .none = action { return }
        carryOutStateChange(isObserved, action)
    }

    /// ``tellObservationState(_:_:)`` when there is something to tell.
    @usableFromInline @inline(never)
    func carryOutStateChange(_ isObserved: Bool, _ action: StateChangeAction) {
        switch action {
        case .none:
            return
        case .call(let handler):
            handler(isObserved)
            finishDelivering()
        case .drain:
            drainPending()
        case .takeTurn:
            takeTurnIfBehind()
        }
    }

    package var observationCount: Int { lock.withLock { state.connections.liveCount } }

    /// The only observation of this messenger, or nil if it has none or several.
    @usableFromInline
    package var soleConnection: ConnectionBase? {
        lock.withLock { state.connections.only }
    }

    // MARK: Replacing a connection, and watching the number of connections

    /// Starts `connection` (made with ``Connection/pendingGate``) so that it receives the
    /// messages accepted from now on, as `connect` does.
    package func connect(_ connection: Connection<Message>) {
        _ = connect(receiver: nil, atStart: {}) { sequence in
            connection.gate.store(sequence, ordering: .relaxed)
            return connection
        }
    }

    /// Puts `new` (made with ``Connection/pendingGate``, not connected) in the place of `old` at
    /// once: `new` receives every message that `old` would have received and has not yet got.
    /// Only the thread that holds the delivering role may call it (from work run by
    /// ``performInTurn(_:)``, or between ``beginDeliveringDirectly()`` and
    /// ``endDeliveringDirectly()``), so no delivery is under way. If `old` has ended, `new` is
    /// marked ended; returns whether the replacement was made.
    @discardableResult
    package func replaceWhileDelivering(_ old: Connection<Message>, with new: Connection<Message>)
        -> Bool
    {
        lock.withLock {
            prepareToChangeConnections()
            let gate = old.gate.load(ordering: .relaxed)
            guard new.isActive, state.connections.replace(old, with: new) else {
                new.markStopped()
                return false
            }
            new.gate.store(gate, ordering: .releasing)
            return true
        }
    }

    /// Tells `observer` (``ConnectionCountObserver/connectionCountChanged()``), outside the
    /// lock, after each start and end of an observation of this messenger (also after an
    /// attempt to end one that had ended; not when one is replaced, nor when the messenger
    /// dies), while the observer lives: the core does not keep it alive. Not ordered with the
    /// deliveries. Must be called before the messenger is shared with other threads (it is read
    /// without the lock), at most once.
    @usableFromInline
    package func setConnectionCountObserver<Observer: ConnectionCountObserver>(
        _ observer: Observer
    ) {
        countObserver = CountObserverReference(observer)
    }

    package var observationSites: [DeclarationSite] {
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

/// What every messenger core offers for work that is not a message of its own (a fused chain of
/// stand-alone transforms keeps its stages in turn with its origin's deliveries), whatever its
/// message type.
@usableFromInline
package protocol DeliveryTurns: AnyObject, Sendable {
    /// See ``MessengerCore/performInTurn(_:)``.
    func performInTurn(_ work: @escaping () -> Void)
    /// See ``MessengerCore/beginDeliveringDirectly()``.
    func beginDeliveringDirectly() -> Bool
    /// See ``MessengerCore/endDeliveringDirectly()``.
    func endDeliveringDirectly()
    /// See ``MessengerCore/soleConnection``.
    var soleConnection: ConnectionBase? { get }
    /// See ``MessengerCore/setConnectionCountObserver(_:)``.
    func setConnectionCountObserver<Observer: ConnectionCountObserver>(_ observer: Observer)
    /// See ``MessengerCore/takeTurnIfBehind()``.
    func takeTurnIfBehind()
}

extension MessengerCore: DependencySource {
    /// Marks what depends on this messenger's state as changed (see `dependents`), under the
    /// lock that accepts the change, before any thread can deliver it. The work that marking
    /// queues (observed synthetic properties telling their observers) runs in turn, right after
    /// this change's delivery, on the thread that delivers it: a variable's own observers hear
    /// of a change first.
    /// Returns the marking: this thread's identity, for ``handOverMarkedWork(markedOn:)``, and
    /// whether it queued work. Only when there are dependents.
    @usableFromInline
    func markDependentsWhileLocked() -> LockedMarking {
        // Not retained for the marking (an atomic retain and release per change): the caller
        // holds the lock, without which the list is not replaced.
        DependencyTracking.markWhileLocked(
            .passUnretained(dependents.unsafelyUnwrapped), changing: ObjectIdentifier(self))
    }

    /// After `markDependentsWhileLocked()`, once unlocked, when another thread delivers: hands
    /// the work it queued to this messenger's turn.
    @inlinable
    func handOverMarkedWork(markedOn thread: ObjectIdentifier) {
        let work = DependencyTracking.takeMarkedWork(on: thread)
        if !work.isEmpty { performInTurn { [self] in propagateInTurn(work) } }
    }

    /// The number of running observations, read while the lock is held by the caller (who
    /// must hold it).
    package var observationCountWhileLocked: Int { state.connections.liveCount }

    @usableFromInline package func addDependent(_ dependent: any Dependent) {
        lock.withLock { dependents = DependentList.adding(dependent, to: dependents, of: self) }
    }

    @usableFromInline package func removeDependent(_ dependent: ObjectIdentifier) {
        // The old list is released after unlocking (it holds its dependents weakly, so this
        // runs no deinit, but keeps the critical section short).
        let old = lock.withLock { () -> DependentList? in
            let old = dependents
            dependents = DependentList.removing(dependent, from: dependents)
            return old
        }
        _ = old
    }
}
