/// What a messenger must do next, computed under its lock and carried out after releasing it.
@usableFromInline
enum DeliveryStep<Message> {
    /// Call every connection in `receivers` that accepts `sequence`.
    case message(
        Message, author: AnyAuthor, sequence: UInt64,
        receivers: ConnectionList.Slots)
    /// Tell the observation-state handler that the messenger is now observed or not.
    case observationStateChange(isObserved: Bool, handler: ((Bool) -> Void)?)
    /// End every observation (`disconnectAllAfterDeliveries`).
    case endObservations
    /// Work done in turn with the messages (`performInTurn`, `connectSendingLatest`).
    case work(QueuedWork)
    /// Give the delivering role to the thread waiting for it (see `DeliveryTurn`), and return:
    /// that thread delivers what is queued from now on. `drainPending` does it; it is never
    /// performed as a step.
    case handOff(to: Parker)
}

/// Work accepted while another call was delivering, in acceptance order.
@usableFromInline
enum PendingDelivery<Message> {
    case message(Message, author: AnyAuthor, sequence: UInt64)
    case observationStateChange(isObserved: Bool)
    case endObservations
    case work(QueuedWork)
}

/// Work that a messenger does in turn with its messages, on the thread that delivers them: at
/// once if nothing else is being delivered, else after the work accepted before (also when it
/// is brought from inside one of the messenger's handlers), and always before the messages
/// accepted after it. A class, so that the queue's items stay as small as a message's.
@usableFromInline
package class QueuedWork {
    @usableFromInline init() {}

    /// Does the work, outside the messenger's lock.
    @usableFromInline
    package func perform() {}
}

/// Work given as a closure (`MessengerCore.performInTurn(_:)`).
@usableFromInline
final class ClosureWork: QueuedWork {
    let body: () -> Void

    @usableFromInline
    init(_ body: @escaping () -> Void) {
        self.body = body
    }

    @usableFromInline override func perform() {
        body()
    }
}

/// The first message of an observation that asked for the state it starts from (KVO's
/// `.initial`): delivered to that observation only, in turn with the messenger's other work.
@usableFromInline
final class InitialDelivery<Message>: QueuedWork {
    let connection: Connection<Message>
    let author: AnyAuthor
    /// Makes the message when its turn comes (outside the lock).
    let message: () -> Message

    init(
        to connection: Connection<Message>, from author: AnyAuthor, message: @escaping () -> Message
    ) {
        self.connection = connection
        self.author = author
        self.message = message
    }

    /// Delivers the message, unless the observation ended meanwhile.
    @usableFromInline override func perform() {
        guard connection.isActive else { return }
        connection.deliver(message(), from: author)
    }
}

/// The non-generic part of a messenger's lock-protected state.
///
/// Sequence numbers count accepted messages; a connection receives the messages whose sequence
/// is at least the one current when it started. (Who delivers is the core's `role` word.)
@usableFromInline
struct DeliveryState {
    @usableFromInline var connections = ConnectionList()
    @usableFromInline var nextSequence: UInt64 = 0
    @usableFromInline var observationStateHandler: ((Bool) -> Void)?
    /// The bound on the delivering thread's turn, and who waits to take over.
    @usableFromInline var turn = DeliveryTurn()

    @usableFromInline init() {}

    /// Takes the next sequence number.
    @inlinable
    mutating func takeSequence() -> UInt64 {
        defer { nextSequence &+= 1 }
        return nextSequence
    }
}

/// Work waiting for the delivering thread: a FIFO queue that never shifts elements (a head index
/// walks the array, which is emptied once drained).
@usableFromInline
struct PendingQueue<Message> {
    @usableFromInline var items: ContiguousArray<PendingDelivery<Message>> = []
    @usableFromInline var head = 0

    @usableFromInline init() {}

    @inlinable
    mutating func append(_ item: PendingDelivery<Message>) {
        items.append(item)
    }

    /// Whether nothing waits.
    @inlinable
    var isEmpty: Bool { head >= items.count }

    /// How many items wait.
    @inlinable
    var count: Int { items.count - head }

    /// The oldest item, or nil when the queue is empty. Taking the last item empties the array
    /// (keeping a small buffer); the caller holds the taken item, so no message is released here.
    @inlinable
    mutating func popFirst() -> PendingDelivery<Message>? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: items.count <= 64)
            head = 0
        } else {
            // Overwrite the taken entry so the queue does not keep its message alive.
            items[head - 1] = .observationStateChange(isObserved: false)
        }
        return item
    }
}
