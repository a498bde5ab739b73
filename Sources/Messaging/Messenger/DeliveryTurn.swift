/// The bound on a messenger's delivering role: how much of what other threads queued one
/// thread delivers before a sender takes over, and who waits to take over.
///
/// One thread at a time holds a messenger's delivering role, and delivers, besides its own
/// message, what other threads queue meanwhile. Without a bound, a thread that keeps sending
/// holds the delivering thread for as long as it sends (an app's main thread frozen by a busy
/// model), and what it sends piles up. So a turn has a ``share``: once the delivering thread took
/// that many queued items in its turn, or that many wait, the messenger is *behind*, and a sender
/// that is free to wait (see `MessengerCore.queuedBehind()`) queues its message and waits to be
/// handed the role. The delivering thread hands it over at its next step, once it took anything
/// in its turn, and returns; the sender then delivers what is queued, its own message among it.
/// A sender waits at most ``longestWait``: then it withdraws, and its message stays queued for
/// whoever delivers.
///
/// Kept in the messenger's lock-protected state. Its methods only decide; the core carries out
/// what they say (waking or waiting for a thread) after unlocking.
@usableFromInline
struct DeliveryTurn {
    /// How many queued items a delivering thread takes in one turn while a sender waits to take
    /// over; also how many may wait before a sender that is free to wait does so.
    @inlinable static var share: Int { 32 }

    /// How long a sender waits to be handed the role, in nanoseconds (10 ms), before it withdraws.
    /// It bounds the wait where the delivering thread cannot come to its next step: a handler
    /// that takes longer, or one blocked on something the sender holds (a lock of the user's
    /// taken around the send, or the main queue when the sender is the main thread).
    @inlinable static var longestWait: Int { 10_000_000 }

    /// How many queued items the delivering thread took in this turn.
    @usableFromInline var length = 0
    /// Senders waiting to be handed the role, oldest first.
    @usableFromInline var takers: ContiguousArray<Parker> = []

    @usableFromInline init() {}

    /// A thread took the role: its turn begins.
    @inlinable @inline(__always)
    mutating func begin() {
        length = 0
    }

    /// Whether the messenger is behind: its delivering thread did its share in this turn, or
    /// `waiting` items (those queued, a new one included) are a share.
    @inlinable
    func isBehind(waiting: Int) -> Bool {
        waiting >= Self.share || length >= Self.share
    }

    /// What the delivering thread does at its next step.
    @usableFromInline
    enum Step {
        /// Take the next queued item (if any) and deliver it.
        case take
        /// Hand the role to this waiting sender and return.
        case handOff(Parker)
    }

    /// The delivering thread's next step: it hands over to the oldest waiting sender once it
    /// took anything in this turn (so every turn gets something done), else takes an item.
    @inlinable
    mutating func next() -> Step {
        if _slowPath(!takers.isEmpty), length > 0 {
            length = 0  // the taker's turn
            return .handOff(takers.removeFirst())
        }
        length &+= 1
        return .take
    }

    /// Whether the delivering thread may give the role up once the queue is empty: not while a
    /// sender waits to be handed it (it would wait to the end of its time for nothing).
    @inlinable
    var mayGiveUp: Bool { takers.isEmpty }

    /// A sender waits to be handed the role.
    @inlinable
    mutating func wait(_ taker: Parker) {
        takers.append(taker)
    }

    /// A waiting sender's time is up: true if it withdrew; false if the delivering thread
    /// already handed it the role (and wakes it at once, outside the lock).
    @inlinable
    mutating func withdraw(_ taker: Parker) -> Bool {
        guard let index = takers.firstIndex(where: { $0 === taker }) else { return false }
        takers.remove(at: index)
        return true
    }
}
