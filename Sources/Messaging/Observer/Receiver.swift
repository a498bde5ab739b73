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
public final class Receiver: Sendable {
    // The observations live in `storage`, which connections refer to; nothing refers to this
    // shell but its observer, so its `deinit` runs exactly when the observer lets go (never
    // inside a messenger's lock) and ends every observation.
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
        for connection in storage.takeConnections(to: nil) { connection.detachFromMessenger() }
    }
}

/// The observations a ``Receiver`` owns. Connections refer to it strongly; the cycle
/// (storage → connection → storage) is broken by whichever side ends an observation: the
/// receiver's `deinit` or a stop takes the connection out here, and the messenger side calls
/// `forget` after taking it out of its own list.
@usableFromInline
final class ReceiverStorage: @unchecked Sendable {
    // `lock` protects `first` and `others`. The first connection is stored inline, so an
    // observer with one observation allocates no list. Never locked together with a messenger.
    private let lock = Lock()
    @exclusivity(unchecked) private var first: ConnectionBase?
    @exclusivity(unchecked) private var others: ContiguousArray<ConnectionBase> = []
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
            if first == nil { first = connection } else { others.append(connection) }
        }
    }

    /// The observed side ended `connection` (and holds it): forget it and, if it was owned
    /// here, tell whoever wants to know.
    func forget(_ connection: ConnectionBase) {
        let removed = lock.withLock { () -> Bool in
            if first === connection {
                first = others.popLast()
                return true
            }
            guard let index = others.lastIndex(where: { $0 === connection }) else { return false }
            others.remove(at: index)
            return true
        }
        if removed { observationEnded?() }
    }

    /// Forgets `connection` without telling anyone (its owner is ending it).
    func remove(_ connection: ConnectionBase) {
        lock.withLock {
            if first === connection {
                first = others.popLast()
            } else if let index = others.lastIndex(where: { $0 === connection }) {
                others.remove(at: index)
            }
        }
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

    /// Whether a running observation is owned here.
    var hasConnections: Bool {
        lock.withLock { (first?.isActive ?? false) || others.contains { $0.isActive } }
    }

    func isConnected(to core: AnyObject) -> Bool {
        lock.withLock {
            let matches = { (connection: ConnectionBase) in
                connection.isActive && connection.belongs(to: core)
            }
            return first.map(matches) ?? false || others.contains(where: matches)
        }
    }
}
