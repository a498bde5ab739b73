/// The part of an ``Observer`` that owns its observations.
///
/// An observer holds its receiver strongly and nothing else; when the receiver dies (with its
/// observer), every observation it owns ends and its memory is freed. No tokens to keep.
///
/// ```swift
/// final class Dog: Observer {
///     let receiver = Receiver()
/// }
/// ```
///
/// A receiver is thread-safe. Ending an observation costs amortized O(1) expected, however many
/// observations the receiver owns.
public final class Receiver: Sendable {
    // The observations live in `storage`, which connections refer to; nothing refers to this
    // shell but its owner, so its `deinit` runs exactly when the owner lets go (never inside a
    // messenger's lock) and ends every observation. (One object would be cheaper, but then a
    // messenger ending an observation would touch a receiver that its owner may be releasing at
    // that moment on another thread: any retain and release there could run the receiver's
    // `deinit` on the messenger's side, inside its lock.)
    @usableFromInline let storage: ReceiverStorage

    /// Creates a receiver that owns no observations yet.
    public init() {
        storage = ReceiverStorage(observationEnded: nil)
    }

    /// Creates a receiver that calls `observationEnded` whenever one of its observations is ended
    /// from the observed side (the observed object died or stopped being observed).
    package init(whenAnObservationEnds observationEnded: @escaping @Sendable () -> Void) {
        storage = ReceiverStorage(observationEnded: observationEnded)
    }

    deinit {
        storage.endAllObservations()
    }

    /// Ends every observation filed under `group` (see ``GroupedConnection``).
    package func endObservations(inGroup group: ObjectIdentifier) {
        storage.endObservations(inGroup: group)
    }

    /// Whether a running observation filed under `group` is owned here.
    package func isObserving(inGroup group: ObjectIdentifier) -> Bool {
        storage.isConnected(inGroup: group)
    }

    #if DEBUG
        /// Test hook: `hook` runs each time an observation started by this receiver is about to
        /// be handed to it, after its messenger registered it (the window in which the observed
        /// side can end it first).
        package func beforeTakingAnObservation(_ hook: @escaping @Sendable () -> Void) {
            storage.beforeAdding = hook
        }
    #endif
}

/// The observations a ``Receiver`` owns. Connections refer to it strongly; the cycle
/// (storage → connection → storage) is broken by whichever side ends an observation: the
/// receiver's `deinit` or a stop takes the connection out here, and the messenger side calls
/// `forget` after taking it out of its own list.
///
/// Every operation costs O(1) expected per observation it touches, however many observations the
/// receiver owns (see `OwnedConnections`), plus, for those that end observations, the amortized
/// O(1) of taking each out of its messenger's list.
@usableFromInline
final class ReceiverStorage: @unchecked Sendable {
    // `lock` protects `owned`. Never locked together with a messenger: connections are ended
    // (detached from their messengers) after unlocking.
    private let lock = Lock()
    @exclusivity(unchecked) private var owned = OwnedConnections()
    private let observationEnded: (@Sendable () -> Void)?

    #if DEBUG
        /// See `Receiver.beforeTakingAnObservation`. Set before the receiver is shared.
        nonisolated(unsafe) var beforeAdding: (@Sendable () -> Void)?
    #endif

    init(observationEnded: (@Sendable () -> Void)?) {
        self.observationEnded = observationEnded
    }

    /// Takes ownership of a new connection, unless the observed side already ended it: a stop
    /// that raced with the start (only the observed side can, since the connection was not
    /// handed out yet). The stopper marks the connection stopped before it asks this storage to
    /// forget it, so checking here, under the lock, loses nothing; and exactly one of the two
    /// reports the end: `forget` if the connection was added first, this method otherwise.
    @usableFromInline
    func add(_ connection: ConnectionBase) {
        #if DEBUG
            beforeAdding?()
        #endif
        let added = lock.withLock {
            guard connection.isActive else { return false }
            owned.insert(connection)
            return true
        }
        if !added { observationEnded?() }
    }

    /// The observed side ended `connection` (and holds it): forget it and, if it was owned
    /// here, tell whoever wants to know. Returns whether it was owned here (not already ended by
    /// its owner, nor by the receiver's death).
    @discardableResult @inline(__always)
    func forget(_ connection: ConnectionBase) -> Bool {
        let wasOwned = lock.withLock { owned.remove(connection) }
        if wasOwned { observationEnded?() }
        return wasOwned
    }

    /// Forgets `connection` without telling anyone (its owner is ending it).
    func remove(_ connection: ConnectionBase) {
        _ = lock.withLock { owned.remove(connection) }
    }

    /// Ends every owned observation of the messenger whose core is `core`.
    @usableFromInline
    func endObservations(of core: AnyObject) {
        endObservations(inGroup: ObjectIdentifier(core))
    }

    /// Ends every owned observation filed under `group`: those of the messenger core of that
    /// identity, and those filed under it by ``GroupedConnection``.
    func endObservations(inGroup group: ObjectIdentifier) {
        var taken = lock.withLock { owned.removeAll(observing: group) }
        // Moved out one by one (last first), so that ending each costs no reference counting.
        while let connection = taken.popLast() { connection.detachFromMessenger() }
    }

    /// Ends every owned observation.
    func endAllObservations() {
        let taken = lock.withLock { owned.removeAll() }
        taken.forEachConnection { $0.detachFromMessenger() }
    }

    /// Whether a running observation is owned here.
    var hasConnections: Bool {
        lock.withLock { owned.containsActive }
    }

    /// Whether a running observation of the messenger whose core is `core` is owned here.
    @usableFromInline
    func isConnected(to core: AnyObject) -> Bool {
        isConnected(inGroup: ObjectIdentifier(core))
    }

    /// Whether a running observation filed under `group` is owned here.
    func isConnected(inGroup group: ObjectIdentifier) -> Bool {
        lock.withLock { owned.containsActive(observing: group) }
    }
}
