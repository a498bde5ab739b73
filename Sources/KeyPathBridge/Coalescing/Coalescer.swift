import Transforms

/// Runs observation blocks in flushes on a scheduler, EBNObservable-style: a block runs at most
/// once per flush, however many of the properties it observes changed.
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
/// - While a flush runs, a change to something a block observes schedules that block in the same
///   flush if it has not run yet in it; if it already ran, in the next flush. (EBN drops such a
///   change; Herald does not: nothing is lost.)
/// - ``batch(_:)`` coalesces synchronously: blocks scheduled inside it run when it ends, on the
///   calling thread.
/// - Stopping an observation does not cancel a block that is already scheduled (as in EBN).
///
/// ``main`` uses the Dispatch main queue; tests create one on a ``TestScheduler``. Thread-safe.
public final class Coalescer: @unchecked Sendable {
    /// The coalescer on the main queue, the default for coalesced observations.
    public static let main = Coalescer(scheduler: .mainQueue)

    /// One coalesced observation's block, as the coalescer sees it.
    final class Entry: @unchecked Sendable {
        // Guarded by the coalescer's lock.
        var isPending = false
        var lastFlush: UInt64 = 0
        /// Runs the block; returns work that must stay alive until then (the observer and the
        /// observed object, held strongly from scheduling to delivery).
        let prepare: () -> (() -> Void)?

        init(prepare: @escaping () -> (() -> Void)?) {
            self.prepare = prepare
        }
    }

    private let scheduler: any Scheduler
    // `lock` protects everything below.
    private let lock = Lock()
    @exclusivity(unchecked) private var next: [(Entry, () -> Void)] = []
    @exclusivity(unchecked) private var current: [(Entry, () -> Void)] = []
    /// The next block of `current` to run (a head index: the flush never shifts the array).
    @exclusivity(unchecked) private var currentHead = 0
    @exclusivity(unchecked) private var flushing: UInt64? = nil
    @exclusivity(unchecked) private var flushCount: UInt64 = 0
    @exclusivity(unchecked) private var isScheduled = false
    @exclusivity(unchecked) private var batchDepth = 0

    /// Creates a coalescer whose flushes run on `scheduler`.
    public init(scheduler: some Scheduler) {
        self.scheduler = scheduler
    }

    /// Runs `body`, then at once (on this thread) every block scheduled during it, coalesced.
    ///
    /// ```swift
    /// coalescer.batch {
    ///     model.firstName = "Ada"
    ///     model.lastName = "Lovelace"
    /// }   // the block observing both names ran once, here
    /// ```
    public func batch<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock.withLock { batchDepth += 1 }
        defer {
            let flushNow = lock.withLock { () -> Bool in
                batchDepth -= 1
                return batchDepth == 0 && !next.isEmpty && flushing == nil
            }
            if flushNow { flush() }
        }
        return try body()
    }

    /// Schedules `entry`'s block (see the rules above).
    func schedule(_ entry: Entry) {
        // Most changes find their block already scheduled: cheap check first.
        if lock.withLock({ entry.isPending }) { return }
        // Take the strong references now: from scheduling to delivery, the observer and the
        // observed object stay alive. An entry whose objects are gone is not scheduled.
        guard let run = entry.prepare() else { return }
        let mustScheduleFlush = lock.withLock { () -> Bool in
            guard !entry.isPending else { return false }
            entry.isPending = true
            if let flushing, entry.lastFlush != flushing {
                current.append((entry, run))
                return false
            }
            next.append((entry, run))
            guard !isScheduled, batchDepth == 0, flushing == nil else { return false }
            isScheduled = true
            return true
        }
        if mustScheduleFlush { scheduleFlush() }
    }

    /// Asks the scheduler for a flush (the caller set `isScheduled`).
    private func scheduleFlush() {
        let coalescer = UncheckedSendable(self)
        scheduler.schedule { coalescer.value.flush() }
    }

    /// Runs one flush: every block scheduled before it, and those scheduled during it that have
    /// not run in it yet.
    private func flush() {
        let id = lock.withLock { () -> UInt64 in
            flushCount &+= 1
            flushing = flushCount
            isScheduled = false
            current = next
            currentHead = 0
            next = []
            return flushCount
        }
        while let run = lock.withLock({ () -> (() -> Void)? in
            guard currentHead < current.count else { return nil }
            let (entry, run) = current[currentHead]
            current[currentHead].1 = {}  // `run` is now the last reference: released once it ran
            currentHead += 1
            entry.isPending = false
            entry.lastFlush = id
            return run
        }) {
            run()
        }
        let mustScheduleFlush = lock.withLock { () -> Bool in
            flushing = nil
            current = []  // only entries and empty closures are left: nothing to deinit here
            currentHead = 0
            guard !next.isEmpty, !isScheduled, batchDepth == 0 else { return false }
            isScheduled = true
            return true
        }
        if mustScheduleFlush { scheduleFlush() }
    }
}
