import Synchronization

/// One observation: the link between one messenger and one handler.
///
/// A connection is referenced by its messenger's list and by its receiver's storage. It refers
/// to both strongly: to the messenger's core (which outlives the messenger only until its
/// connections are gone) and to the receiver's `ReceiverStorage` (not to the `Receiver` itself,
/// whose `deinit` must run as soon as its observer lets go). Whichever side ends the observation
/// takes the connection out of both lists, which breaks the cycles; no weak reference (and so no
/// side table) is needed.
///
/// `gate` holds the sequence number of the first message the connection may receive, or
/// `UInt64.max` once it is stopped, so that one atomic load and compare per delivery decides both
/// "started before this message was accepted" (promise 10) and "not stopped" (promise 7).
@usableFromInline
package class ConnectionBase: @unchecked Sendable {
    /// Start sequence, or `stoppedGate`. Written under the messenger's lock, read without it.
    @usableFromInline final let gate: Atomic<UInt64>
    /// The observer side owning this connection, if any.
    @usableFromInline final let receiver: ReceiverStorage?
    /// Where the observation was declared.
    final let site: DeclarationSite
    /// Index in the messenger's `ConnectionList`; -1 once removed. Guarded by the messenger's lock.
    /// (32 bits each, with `ownerSlot`, so that both fit the word one `Int` took: a connection's
    /// size is what an observation costs. Both are unchecked for exclusivity: their locks, not
    /// the runtime, keep accesses apart.)
    @usableFromInline @exclusivity(unchecked) final var slot: Int32 = -1
    /// Index in the owning receiver's group of connections to the same messenger
    /// (`OwnedConnections`). Guarded by the receiver's lock.
    @exclusivity(unchecked) final var ownerSlot: Int32 = 0

    static var stoppedGate: UInt64 { .max }

    @usableFromInline
    init(startSequence: UInt64, receiver: ReceiverStorage?, site: DeclarationSite) {
        gate = Atomic(startSequence)
        self.receiver = receiver
        self.site = site
    }

    /// The gate of a connection that watches only for its messenger's death
    /// (`DeathWatchingConnection`): above every sequence number, below `stoppedGate`, so the
    /// connection is active and accepts nothing.
    static var deathOnlyGate: UInt64 { .max - 1 }

    /// Whether the connection only watches for its messenger's death.
    final var watchesDeathOnly: Bool { gate.load(ordering: .relaxed) == Self.deathOnlyGate }

    /// Whether the connection still delivers messages.
    package final var isActive: Bool { gate.load(ordering: .relaxed) != Self.stoppedGate }

    /// Marks the connection stopped; no delivery starts after this returns.
    final func markStopped() { gate.store(Self.stoppedGate, ordering: .releasing) }

    /// Removes the connection from its messenger (marking it stopped). Does not touch the receiver.
    @usableFromInline
    package func detachFromMessenger() { fatalError("abstract") }

    /// Ends the observation on both sides, as its owner (not a stop from the observed side, so
    /// the receiver's end-of-observation callback is not called). Harmless if it ended already.
    package final func end() {
        detachFromMessenger()
        receiver?.remove(self)
    }

    /// Whether `receiver` owns this connection.
    package final func isOwned(by receiver: Receiver) -> Bool {
        self.receiver === receiver.storage
    }

    /// The identity of the messenger core this connection belongs to.
    var coreIdentity: ObjectIdentifier { fatalError("abstract") }

    /// The observed object died and took this connection out (its messenger's teardown); called
    /// outside every lock. Only an observation that asked to hear of it does anything.
    func observedObjectDied() {}

    /// The observed side ended this connection: `stopBeingObserved()` or the observed object's
    /// death. Called outside every lock, before `observedObjectDied()`.
    func endedByObservedSide() {}
}

/// What an observation calls with each message: the user's closure as it was given, so that
/// delivering is one indirect call and observing allocates no wrapper.
@usableFromInline
package enum Handler<Message> {
    case message((Message) -> Void)
    case messageAndAuthor((Message, AnyAuthor) -> Void)
}

@usableFromInline
package class Connection<Message>: ConnectionBase, @unchecked Sendable {
    // Everything is `final` but `coreIdentity`, which ``GroupedConnection`` overrides, so that
    // delivering costs no dynamic dispatch.
    @usableFromInline final let handler: Handler<Message>
    @usableFromInline package final let core: MessengerCore<Message>

    @usableFromInline
    init(
        core: MessengerCore<Message>, startSequence: UInt64, receiver: ReceiverStorage?,
        site: DeclarationSite, handler: Handler<Message>
    ) {
        self.core = core
        self.handler = handler
        super.init(startSequence: startSequence, receiver: receiver, site: site)
    }

    /// The gate of a connection made before it is connected (see
    /// `MessengerCore.replaceWhileDelivering(_:with:)`): active, and above every sequence number,
    /// so it accepts nothing until it is put in a messenger's list.
    package static var pendingGate: UInt64 { .max - 2 }

    /// Whether the message with this sequence number is for this connection. One atomic load.
    @inlinable @inline(__always)
    final func accepts(_ sequence: UInt64) -> Bool {
        gate.load(ordering: .acquiring) <= sequence
    }

    /// Calls the handler.
    @inlinable @inline(__always)
    final func deliver(_ message: Message, from author: AnyAuthor) {
        Self.call(handler, with: message, from: author)
    }

    /// Calls `handler`, borrowed: a `switch` on the stored property itself would copy the
    /// closure out of the enum, a retain and a release of its context per delivery.
    @inlinable @inline(__always)
    static func call(
        _ handler: borrowing Handler<Message>, with message: Message, from author: AnyAuthor
    ) {
        switch handler {
        case .message(let receive): receive(message)
        case .messageAndAuthor(let receive): receive(message, author)
        }
    }

    @usableFromInline
    override package final func detachFromMessenger() {
        core.disconnect(self)
    }

    override var coreIdentity: ObjectIdentifier { ObjectIdentifier(core) }
}

/// A connection that its receiver files under another object than its messenger: an ad hoc
/// observation of a key path is filed under the path's root, so that
/// `observer.stopObserving(root)` and `observer.isObserving(root)` reach it.
@usableFromInline
final class GroupedConnection<Message>: Connection<Message>, @unchecked Sendable {
    let group: ObjectIdentifier

    @usableFromInline
    init(
        core: MessengerCore<Message>, startSequence: UInt64, receiver: ReceiverStorage?,
        site: DeclarationSite, handler: Handler<Message>, group: ObjectIdentifier
    ) {
        self.group = group
        super.init(
            core: core, startSequence: startSequence, receiver: receiver, site: site,
            handler: handler)
    }

    override var coreIdentity: ObjectIdentifier { group }
}

/// An observation that also hears of the observed object's death (EBN's dealloc protocol):
/// `observer.observeDeath(of:)`, or an ``Observing`` made with `whenObservedDies:`. Without a
/// handler it receives no message at all: its gate stays above every sequence number.
final class DeathWatchingConnection<Message>: Connection<Message>, @unchecked Sendable {
    /// Called when the object dies: at most once, since a messenger tears down once, and only
    /// if the watch was not ended before (see `MessengerCore.tearDown`). Freed with the connection.
    private let died: () -> Void

    init(
        core: MessengerCore<Message>, startSequence: UInt64, receiver: ReceiverStorage?,
        site: DeclarationSite, handler: Handler<Message>?, died: @escaping () -> Void
    ) {
        self.died = died
        super.init(
            core: core, startSequence: handler == nil ? Self.deathOnlyGate : startSequence,
            receiver: receiver, site: site, handler: handler ?? .message { _ in })
    }

    override func observedObjectDied() {
        died()
    }
}

/// An observation that an object makes on its own behalf, with no receiver (a stand-alone
/// transform's link to its origin), made before it is connected so that it can also replace an
/// earlier one (`MessengerCore.connect(_:)`, `MessengerCore.replaceWhileDelivering(_:with:)`).
/// It tells its maker when the observed side ends it.
package final class LinkedConnection<Message>: Connection<Message>, AnyLinkedConnection,
    @unchecked Sendable
{
    /// Called once the observed side ended the connection (outside every lock).
    private let whenEndedByObservedSide: () -> Void
    /// The object that made the connection (weak: it holds the connection).
    package private(set) weak var owner: AnyObject?

    /// A connection of `core`'s that accepts nothing until it is connected.
    package init(
        core: MessengerCore<Message>, site: DeclarationSite, owner: AnyObject,
        receive: @escaping (Message, AnyAuthor) -> Void,
        whenEndedByObservedSide: @escaping () -> Void
    ) {
        self.owner = owner
        self.whenEndedByObservedSide = whenEndedByObservedSide
        super.init(
            core: core, startSequence: Self.pendingGate, receiver: nil, site: site,
            handler: .messageAndAuthor(receive))
    }

    override func endedByObservedSide() {
        whenEndedByObservedSide()
    }
}

/// A ``LinkedConnection`` of any message type.
package protocol AnyLinkedConnection: AnyObject {
    /// The object that made the connection, while it lives.
    var owner: AnyObject? { get }
}
