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
/// A receiver is thread-safe. Every operation on it costs O(1) expected per observation it
/// touches, however many observations it owns.
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
}

/// The observations a ``Receiver`` owns. Connections refer to it strongly; the cycle
/// (storage → connection → storage) is broken by whichever side ends an observation: the
/// receiver's `deinit` or a stop takes the connection out here, and the messenger side calls
/// `forget` after taking it out of its own list.
///
/// Every operation costs O(1) expected per observation it touches, however many observations the
/// receiver owns (see `OwnedConnections`).
@usableFromInline
final class ReceiverStorage: @unchecked Sendable {
    // `lock` protects `owned`. Never locked together with a messenger: connections are ended
    // (detached from their messengers) after unlocking.
    private let lock = Lock()
    @exclusivity(unchecked) private var owned = OwnedConnections()
    private let observationEnded: (@Sendable () -> Void)?

    init(observationEnded: (@Sendable () -> Void)?) {
        self.observationEnded = observationEnded
    }

    /// Takes ownership of a new connection, unless the observed side already ended it (a stop
    /// that raced with the start: the stopper marks the connection stopped before it asks this
    /// storage to forget it, so checking here, under the lock, loses nothing).
    @usableFromInline
    func add(_ connection: ConnectionBase) {
        lock.withLock {
            guard connection.isActive else { return }
            owned.insert(connection)
        }
    }

    /// The observed side ended `connection` (and holds it): forget it and, if it was owned
    /// here, tell whoever wants to know.
    func forget(_ connection: ConnectionBase) {
        if lock.withLock({ owned.remove(connection) }) { observationEnded?() }
    }

    /// Forgets `connection` without telling anyone (its owner is ending it).
    func remove(_ connection: ConnectionBase) {
        _ = lock.withLock { owned.remove(connection) }
    }

    /// Ends every owned observation of the messenger whose core is `core`.
    @usableFromInline
    func endObservations(of core: AnyObject) {
        let taken = lock.withLock { owned.removeAll(observing: ObjectIdentifier(core)) }
        taken?.forEachConnection { $0.detachFromMessenger() }
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
        lock.withLock { owned.containsActive(observing: ObjectIdentifier(core)) }
    }
}
