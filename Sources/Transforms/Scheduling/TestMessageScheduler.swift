import Messaging

/// A scheduler that runs nothing until you tell it to: tests drain it explicitly instead of
/// sleeping.
///
/// ```swift
/// let scheduler = TestMessageScheduler()
/// observer.observe(number).coalesce(on: scheduler).receive { update in print(update.new) }
/// number.value = 1
/// number.value = 2
/// scheduler.runTurn()   // Prints "2": one delivery per turn, the latest message
/// ```
///
/// A *turn* runs the work that was scheduled before it started; work scheduled during a turn
/// waits for the next one, as it would on a run loop. It is thread-safe.
public final class TestMessageScheduler: MessageScheduler, @unchecked Sendable {
    // `lock` protects `queue`.
    private let lock = Lock()
    @exclusivity(unchecked) private var queue: [@Sendable () -> Void] = []

    /// Creates a scheduler with nothing scheduled.
    public init() {}

    /// Queues `work` for a later turn.
    public func schedule(_ work: @escaping @Sendable () -> Void) {
        lock.withLock { queue.append(work) }
    }

    /// The number of pieces of work waiting.
    public var pendingCount: Int { lock.withLock { queue.count } }

    /// Runs one turn: the work scheduled before this call, in order. Returns how many ran.
    @discardableResult
    public func runTurn() -> Int {
        let turn = lock.withLock {
            defer { queue = [] }
            return queue
        }
        for work in turn { work() }
        return turn.count
    }

    /// Runs turns until nothing is scheduled (at most `maxTurns`, against endless loops).
    /// Returns how many turns ran.
    @discardableResult
    public func flush(maxTurns: Int = 1_000) -> Int {
        var turns = 0
        while turns < maxTurns, runTurn() > 0 { turns += 1 }
        return turns
    }
}
