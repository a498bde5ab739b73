import Synchronization

/// One observation: the link between one messenger and one receiving closure.
///
/// A connection is referenced by its messenger's list and by its receiver's list. It refers to
/// the messenger's core strongly (the core outlives the messenger only until its connections are
/// gone) and to the receiver weakly, so that whichever side dies first ends it from its `deinit`.
///
/// `gate` holds the sequence number of the first message the connection may receive, or
/// `UInt64.max` once it is stopped, so that one atomic load and compare per delivery decides both
/// "started before this message was accepted" (promise 10) and "not stopped" (promise 7).
@usableFromInline
package class ConnectionBase: @unchecked Sendable {
    /// Start sequence, or `stoppedGate`. Written under the messenger's lock, read without it.
    @usableFromInline final let gate: Atomic<UInt64>
    /// The receiver (observer side) owning this connection, if any. `Observing` has none.
    final weak let receiver: Receiver?
    /// Where the observation was declared.
    final let site: DeclarationSite

    static var stoppedGate: UInt64 { .max }

    init(startSequence: UInt64, receiver: Receiver?, site: DeclarationSite) {
        gate = Atomic(startSequence)
        self.receiver = receiver
        self.site = site
    }

    /// Whether the connection still delivers messages.
    package final var isActive: Bool { gate.load(ordering: .relaxed) != Self.stoppedGate }

    /// Marks the connection stopped; no delivery starts after this returns.
    final func markStopped() { gate.store(Self.stoppedGate, ordering: .releasing) }

    /// Removes the connection from its messenger (marking it stopped). Does not touch the receiver.
    @usableFromInline
    package func detachFromMessenger() { fatalError("abstract") }

    /// Whether `core` is the messenger core this connection belongs to.
    func belongs(to core: AnyObject) -> Bool { fatalError("abstract") }
}

@usableFromInline
package final class Connection<Message>: ConnectionBase, @unchecked Sendable {
    @usableFromInline let receive: (Message, AnyAuthor) -> Void
    let core: MessengerCore<Message>
    /// Index in the core's connection list; -1 once removed. Guarded by the core's lock.
    var slot = -1

    init(
        core: MessengerCore<Message>, startSequence: UInt64, receiver: Receiver?,
        site: DeclarationSite, receive: @escaping (Message, AnyAuthor) -> Void
    ) {
        self.core = core
        self.receive = receive
        super.init(startSequence: startSequence, receiver: receiver, site: site)
    }

    /// Whether the message with this sequence number is for this connection. One atomic load.
    @inlinable @inline(__always)
    func accepts(_ sequence: UInt64) -> Bool {
        gate.load(ordering: .acquiring) <= sequence
    }

    @usableFromInline
    override package func detachFromMessenger() {
        core.disconnect(self)
    }

    override func belongs(to core: AnyObject) -> Bool {
        self.core === core
    }
}
