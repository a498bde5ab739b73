/// The bound on a messenger's delivering role: how much of what other threads queued one
/// thread delivers before a sender takes over, and who waits to take over.
///
/// One thread at a time holds a messenger's delivering role, and delivers, besides its own
/// work, what other threads queue meanwhile. Without a bound, a thread that keeps sending holds
/// the delivering thread for as long as it sends (an app's main thread frozen by a busy model),
/// and what it sends piles up. So:
///
/// - The messenger is *behind* once the delivering thread took a ``share`` of queued items in its
///   turn, or a share waits. A thread that queues work then, and is free to wait (see
///   `MessengerCore.takeTurnIfBehind()`), waits to be handed the role.
/// - The delivering thread hands it over once it has taken its share in this turn (or, if
///   nothing is left, at once), and returns; the new holder's turn begins.
/// - A waiting sender waits while the delivering thread makes progress. When the delivering
///   thread took no step for ``longestWait`` (a handler that takes that long, or that waits for
///   something the sender holds), the sender withdraws and returns, its work left queued; and
///   until the delivering thread takes a step again, the messenger is *stalled*: nobody else
///   waits there either, so a stuck handler costs one such wait, not one per send, until
///   ``mostWhileStalled`` items wait; from then on each thread that queues work waits again, so
///   that what is buffered stays bounded even then.
///
/// Kept in the messenger's lock-protected state. Its methods only decide; the core carries out
/// what they say (waking or waiting for a thread) after unlocking.
@usableFromInline
struct DeliveryTurn {
    /// How many queued items a delivering thread takes in one turn while a sender waits to take
    /// over; also how many may wait before a sender that is free to wait does so.
    @inlinable static var share: Int { 32 }

    /// How long a waiting sender waits for the delivering thread's next step, in nanoseconds
    /// (10 ms), before it withdraws.
    @inlinable static var longestWait: Int { 10_000_000 }

    /// How many items may wait at a stalled messenger before threads that queue work wait there
    /// again.
    @inlinable static var mostWhileStalled: Int { 4 * share }

    /// How many queued items the delivering thread took in this turn.
    @usableFromInline var length = 0
    /// How many steps the messenger's delivering threads took, ever (wrapping): its progress.
    @usableFromInline var steps: UInt = 0
    /// `steps` when a sender last withdrew for want of progress (see ``isStalled``).
    @usableFromInline var stalledAt: UInt = .max
    /// Senders waiting to be handed the role, oldest first, each with the progress it last saw.
    @usableFromInline var takers: ContiguousArray<(parker: Parker, stepsSeen: UInt)> = []
    /// How many senders withdrew, in the messenger's life (for diagnostics and tests).
    @usableFromInline var withdrawals = 0

    @usableFromInline init() {}

    /// A thread took the role: its turn begins.
    @inlinable @inline(__always)
    mutating func begin() {
        length = 0
    }

    /// Whether a thread that queued work, leaving `waiting` items queued, waits to be handed the
    /// role (if it is free to): the messenger is behind, and not stalled unless that many wait.
    @inlinable
    func mustWait(waiting: Int) -> Bool {
        (waiting >= Self.share || length >= Self.share)
            && (!isStalled || waiting >= Self.mostWhileStalled)
    }

    /// Whether a sender withdrew since the delivering thread's last step.
    @inlinable
    var isStalled: Bool { stalledAt == steps }

    /// What the delivering thread does at its next step.
    @usableFromInline
    enum Step {
        /// Take the next queued item (if any) and deliver it.
        case take
        /// Hand the role to this waiting sender and return.
        case handOff(Parker)
    }

    /// The delivering thread's next step, `waiting` items queued: it hands over to the oldest
    /// waiting sender once it took its share in this turn, or took anything and nothing is
    /// left; otherwise it takes an item.
    @inlinable
    mutating func next(waiting: Int) -> Step {
        steps &+= 1
        if _slowPath(!takers.isEmpty), length >= Self.share || (length > 0 && waiting == 0) {
            length = 0  // the taker's turn
            return .handOff(takers.removeFirst().parker)
        }
        length &+= 1
        return .take
    }

    /// Whether the delivering thread may give the role up once the queue is empty: not while a
    /// sender waits to be handed it.
    @inlinable
    var mayGiveUp: Bool { takers.isEmpty }

    /// A sender waits to be handed the role.
    @inlinable
    mutating func wait(_ taker: Parker) {
        takers.append((taker, steps))
    }

    /// What a waiting sender does when ``longestWait`` passed.
    @usableFromInline
    enum Timeout {
        /// It was handed the role meanwhile (and is woken at once, outside the lock).
        case handedOver
        /// The delivering thread took a step since it last looked: wait on.
        case keepWaiting
        /// It withdrew: return, its work left queued.
        case withdrew
    }

    /// A waiting sender's time is up.
    @inlinable
    mutating func timedOut(_ taker: Parker) -> Timeout {
        guard let index = takers.firstIndex(where: { $0.parker === taker }) else {
            return .handedOver
        }
        if takers[index].stepsSeen != steps {
            takers[index].stepsSeen = steps
            return .keepWaiting
        }
        takers.remove(at: index)
        stalledAt = steps
        withdrawals += 1
        return .withdrew
    }
}
