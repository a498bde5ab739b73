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

    /// Creates a receiver that owns no observations yet.
    public init() {}

    deinit {
        let owned = lock.withLock {
            let owned = connections
            connections = []
            return owned
        }
        for connection in owned { connection.detachFromMessenger() }
    }

    func add(_ connection: ConnectionBase) {
        lock.withLock { connections.append(connection) }
    }

    func forget(_ connection: ConnectionBase) {
        lock.withLock {
            if let index = connections.lastIndex(where: { $0 === connection }) {
                connections.remove(at: index)
            }
        }
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

    func isConnected(to messenger: AnyObject) -> Bool {
        lock.withLock { connections.contains { $0.isActive && $0.belongs(to: messenger) } }
    }
}
