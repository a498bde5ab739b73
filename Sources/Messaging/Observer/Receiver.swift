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
/// A receiver is thread-safe.
public final class Receiver: @unchecked Sendable {
    // `lock` protects `first` and `others`. The first connection is stored inline, so an
    // observer with one observation allocates no list. A messenger core may take this lock while
    // holding its own (never the other way round).
    private let lock = Lock()
    @exclusivity(unchecked) private var first: ConnectionBase?
    @exclusivity(unchecked) private var others: ContiguousArray<ConnectionBase> = []
    private let observationEnded: (@Sendable () -> Void)?

    /// Creates a receiver that owns no observations yet.
    public init() {
        observationEnded = nil
    }

    /// Creates a receiver that calls `observationEnded` whenever one of its observations is ended
    /// from the observed side (the observed object died or stopped being observed).
    package init(whenAnObservationEnds observationEnded: @escaping @Sendable () -> Void) {
        self.observationEnded = observationEnded
    }

    deinit {
        // Detaching clears each connection's reference to this receiver under its messenger's
        // lock, which is what makes that unowned reference safe (see `ConnectionBase`).
        for connection in takeConnections(to: nil) { connection.detachFromMessenger() }
    }

    /// Takes ownership of a new connection, unless the observed side already ended it (a stop
    /// that raced with the start: the stopper marks the connection stopped before it removes it
    /// from this receiver, so checking here, under the receiver's lock, loses nothing).
    @usableFromInline
    func add(_ connection: ConnectionBase) {
        lock.withLock {
            guard connection.isActive else { return }
            if first == nil { first = connection } else { others.append(connection) }
        }
    }

    /// The observed side ended `connection`; called with its messenger's lock held. Returns the
    /// end-of-observation callback to call after unlocking, if any.
    func forget(_ connection: ConnectionBase) -> (@Sendable () -> Void)? {
        let removed = lock.withLock { () -> Bool in
            if first === connection {
                first = others.popLast()
                return true
            }
            guard let index = others.lastIndex(where: { $0 === connection }) else { return false }
            others.remove(at: index)
            return true
        }
        return removed ? observationEnded : nil
    }

    /// Removes and returns the connections to a messenger's core, or all connections if it is nil.
    func takeConnections(to core: AnyObject?) -> [ConnectionBase] {
        lock.withLock {
            var taken: [ConnectionBase] = []
            if let first, core.map(first.belongs(to:)) ?? true {
                taken.append(first)
                self.first = nil
            }
            others.removeAll { connection in
                guard core.map(connection.belongs(to:)) ?? true else { return false }
                taken.append(connection)
                return true
            }
            if first == nil { first = others.popLast() }
            return taken
        }
    }

    /// Whether the receiver owns a running observation.
    var hasConnections: Bool {
        lock.withLock { all.contains { $0.isActive } }
    }

    func isConnected(to core: AnyObject) -> Bool {
        lock.withLock { all.contains { $0.isActive && $0.belongs(to: core) } }
    }

    /// Every connection owned, under the lock.
    private var all: [ConnectionBase] {
        guard let first else { return [] }
        return [first] + others
    }
}
