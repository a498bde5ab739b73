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
    // `lock` protects `connections`.
    private let lock = Lock()
    @exclusivity(unchecked) private var connections: ContiguousArray<ConnectionBase> = []
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
        let owned = lock.withLock {
            let owned = connections
            connections = []
            return owned
        }
        for connection in owned { connection.detachFromMessenger() }
    }

    /// Takes ownership of a new connection, unless the observed side already ended it (a stop
    /// that raced with the start: the stopper marks the connection stopped before it asks the
    /// receiver to forget it, so checking here, under the receiver's lock, loses nothing).
    @usableFromInline
    func add(_ connection: ConnectionBase) {
        lock.withLock {
            if connection.isActive { connections.append(connection) }
        }
    }

    /// The observed side ended `connection`.
    func forget(_ connection: ConnectionBase) {
        let removed = lock.withLock {
            guard let index = connections.lastIndex(where: { $0 === connection }) else {
                return false
            }
            connections.remove(at: index)
            return true
        }
        if removed { observationEnded?() }
    }

    /// Removes and returns the connections to a messenger's core, or all connections if it is nil.
    func takeConnections(to messenger: AnyObject?) -> ContiguousArray<ConnectionBase> {
        lock.withLock {
            guard let messenger else {
                let all = connections
                connections = []
                return all
            }
            var taken = ContiguousArray<ConnectionBase>()
            connections.removeAll { connection in
                guard connection.belongs(to: messenger) else { return false }
                taken.append(connection)
                return true
            }
            return taken
        }
    }

    /// Whether the receiver owns a running observation.
    var hasConnections: Bool {
        lock.withLock { connections.contains { $0.isActive } }
    }

    func isConnected(to messenger: AnyObject) -> Bool {
        lock.withLock { connections.contains { $0.isActive && $0.belongs(to: messenger) } }
    }
}
