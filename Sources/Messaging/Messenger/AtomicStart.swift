/// An ``ObservableCache`` whose latest message lives under its messenger's lock, so that an
/// observation can start and read it in one atomic step: the message read is exactly the state
/// that every later message of the observation changes.
package protocol LockedLatestMessage: ObservableCache {
    /// The latest message, read while the messenger's lock is held: must not lock, must not call
    /// user code.
    var latestMessageWhileLocked: Message { get }
}

extension Variable: LockedLatestMessage {
    package var latestMessageWhileLocked: Update<Value> { Update(storedValue, storedValue) }
}

extension ObservableObject {
    /// Starts an observation (owned by `receiver`, if any, and filed under `group`, if any; see
    /// `MessengerCore.connect(receiver:site:groupedUnder:…)`) and reads the state it starts
    /// from: the latest message if this object is an ``ObservableCache``, else nil. For a
    /// ``LockedLatestMessage`` the read and the start are one atomic step; for another cache the
    /// read follows the start, so a message sent in between may already be part of what is read.
    package func connectReadingLatest(
        receiver: Receiver? = nil, site: DeclarationSite,
        groupedUnder group: ObjectIdentifier? = nil,
        receive: @escaping (Message, AnyAuthor) -> Void
    ) -> (connection: Connection<Message>, latest: Message?) {
        let core = messenger.core
        guard let locked = self as? any LockedLatestMessage else {
            let connection = core.connect(
                receiver: receiver, site: site, groupedUnder: group,
                handler: .messageAndAuthor(receive))
            return (connection, latestMessageIfCache(of: self))
        }
        var latest: Message?
        let connection = core.connect(
            receiver: receiver, site: site, groupedUnder: group,
            atStart: { latest = locked.anyLatestMessageWhileLocked as? Message },
            handler: .messageAndAuthor(receive))
        return (connection, latest)
    }
}

extension LockedLatestMessage {
    /// The latest message, read under the lock, in an `Any` (for callers that hold an
    /// existential).
    fileprivate var anyLatestMessageWhileLocked: Any { latestMessageWhileLocked }
}

/// The latest message of `object` if it is an ``ObservableCache``, else nil.
@usableFromInline
package func latestMessageIfCache<Object: ObservableObject>(of object: Object) -> Object.Message? {
    func latest<Cache: ObservableCache>(of cache: Cache) -> Any { cache.latestMessage }
    guard let cache = object as? any ObservableCache else { return nil }
    return latest(of: cache) as? Object.Message
}

extension ObservableCache {
    /// Starts an observation (owned by `receiver`, if any, and filed under `group`, if any) as
    /// `options` ask: with ``ObservationOptions/initial``, one whose first message is
    /// ``latestMessage``, authored by this object (`connectSendingLatest`); else a plain one.
    /// Inlinable, so that the plain start is specialized where it is called, as before.
    @inlinable
    package func connect(
        options: ObservationOptions, receiver: Receiver?, site: DeclarationSite,
        groupedUnder group: ObjectIdentifier? = nil, handler: Handler<Message>
    ) -> Connection<Message> {
        guard options.contains(.initial) else {
            return messenger.core.connect(
                receiver: receiver, site: site, groupedUnder: group, handler: handler)
        }
        return connectSendingLatest(
            receiver: receiver, site: site, groupedUnder: group, handler: handler, author: self)
    }

    /// Starts an observation (owned by `receiver`, if any, and filed under `group`, if any) whose
    /// first message is ``latestMessage``, authored by `author` (see
    /// `MessengerCore.connectSendingLatest`). For a ``LockedLatestMessage`` it is read in the
    /// same step as the start; for another cache when its turn comes.
    @usableFromInline
    package func connectSendingLatest(
        receiver: Receiver?, site: DeclarationSite, groupedUnder group: ObjectIdentifier? = nil,
        handler: Handler<Message>, author: AnyAuthor
    ) -> Connection<Message> {
        var latestWhileLocked: (() -> Message)?
        if let locked = self as? any LockedLatestMessage {
            latestWhileLocked = { locked.anyLatestMessageWhileLocked as! Message }
        }
        return messenger.core.connectSendingLatest(
            receiver: receiver, site: site, groupedUnder: group, handler: handler,
            author: author, latestWhileLocked: latestWhileLocked, latest: { self.latestMessage })
    }
}
