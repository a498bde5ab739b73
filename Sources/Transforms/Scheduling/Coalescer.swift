#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Runs blocks in flushes on a scheduler, at most once per flush each, however often they were
/// scheduled: the one coalescing mechanism of Herald. EBN-style coalesced observations
/// (`observeCoalesced`) run their blocks in one; ``ObservableObject/coalesce(on:fileID:line:)``
/// delivers the latest message through one.
///
/// ```swift
/// observer.observeCoalesced(model, \.$firstName, \.$lastName) { observer, model in
///     observer.redraw(model)      // once per main-queue turn, even if both names changed
/// }
/// ```
///
/// The rules:
/// - A change schedules its block for the next flush (one scheduled piece of work on the
///   scheduler gathers every block scheduled before it runs).
/// - While a flush runs, a change made by a block to something another block observes schedules
///   that block in the same flush if it has not run yet in it; if it already ran, in the next
///   flush. (EBN drops such a change; Herald does not: nothing is lost.)
/// - ``batch(_:)`` coalesces synchronously: blocks that the calling thread schedules inside it
///   (also those already waiting for the scheduler) run when it ends, on that thread, unless
///   they are running on it (a block that opens a batch): then in the next flush. A batch
///   belongs to its thread: changes made on other threads meanwhile go to the scheduler's
///   flushes, except to a block already waiting in the batch, which runs after them anyway.
///   (The batch is Herald's one: it also holds back observed synthetic properties, which
///   recompute and tell first.)
/// - Stopping an observation does not cancel a block that is already scheduled (as in EBN).
///
/// ``main`` uses the Dispatch main queue; tests create one on a ``TestMessageScheduler``. Thread-safe:
/// the bookkeeping is a `CoalescingState` under a lock, and blocks run after unlocking.
public final class Coalescer: @unchecked Sendable {
    /// The coalescer on the main queue, the default for coalesced observations.
    public static let main = Coalescer(scheduler: .mainQueue)

    /// One block, as the coalescer sees it.
    package typealias Entry = CoalescingState.Entry

    private let scheduler: any MessageScheduler
    private let lock = Lock()
    @exclusivity(unchecked) private var state = CoalescingState()

    /// Creates a coalescer whose flushes run on `scheduler`.
    public init(scheduler: some MessageScheduler) {
        self.scheduler = scheduler
    }

    /// Schedules `entry`'s block (see the rules above).
    package func schedule(_ entry: Entry) {
        let thread = Self.currentThread
        if _slowPath(DependencyTracking.isInBatch) { joinBatch(on: thread) }
        // Most changes find their block already scheduled: cheap check first.
        if lock.withLock({ state.isSettled(entry, on: thread) }) { return }
        // Prepared outside the lock: the run takes strong references (an entry whose objects
        // are gone is not scheduled), and releasing a run may run user code.
        guard let run = entry.prepare() else { return }
        let action = lock.withLock { state.schedule(entry, run: run, on: thread) }
        if action == .requestFlush { requestFlush() }
    }

    /// Opens a batch of this coalescer on `thread` for the thread's ``batch(_:)``, unless one is
    /// open for it already: it flushes when that batch ends.
    private func joinBatch(on thread: CoalescingState.Thread) {
        let joined = DependencyTracking.joinBatch(as: ObjectIdentifier(self)) {
            if self.lock.withLock({ self.state.endBatch(on: thread) }) {
                self.runFlush(on: thread)
            }
        }
        if joined { lock.withLock { state.beginBatch(on: thread) } }
    }

    /// The blocks scheduled and not run yet.
    package var pendingCount: Int { lock.withLock { state.pendingCount } }

    private func requestFlush() {
        let coalescer = UncheckedSendable(self)
        scheduler.schedule {
            let thread = Self.currentThread
            coalescer.value.lock.withLock { coalescer.value.state.beginScheduledFlush(on: thread) }
            coalescer.value.runFlush(on: thread)
        }
    }

    /// Runs the innermost flush of `thread` to its end.
    private func runFlush(on thread: CoalescingState.Thread) {
        while true {
            switch lock.withLock({ state.runNext(on: thread) }) {
            case .run(let run):
                run()
            case .finished(let requestFlush, let leftovers):
                _ = leftovers  // released here, after unlocking
                if requestFlush { self.requestFlush() }
                return
            }
        }
    }

    private static var currentThread: CoalescingState.Thread {
        #if canImport(Glibc)
            UInt(pthread_self())  // an integer there
        #else
            UInt(bitPattern: pthread_self())  // a pointer on Darwin and Musl
        #endif
    }
}
