/// The bookkeeping of a ``Coalescer``: which block waits for which flush, on which thread.
///
/// A plain value that the coalescer mutates under its lock and that runs nothing itself: its
/// methods say what the caller must do next (ask the scheduler for a flush, run a block) and
/// hand back what the caller must release, and the caller does both after unlocking. So every
/// interleaving of threads is a sequence of method calls with thread identities, which the tests
/// drive one step at a time, without threads.
///
/// The rules:
/// - A block is scheduled at most once until it runs (`Entry.isPending`); a block scheduled
///   again meanwhile runs after that change anyway.
/// - Each thread has a stack of frames: the batches it opened (``batch(_:)``) and the
///   flushes it runs, innermost last. A block scheduled on a thread goes to the innermost frame
///   outside every flush of that thread in which it ran (so it never runs inside itself, nor
///   twice in one flush): a batch (flushed on that thread when it ends), or a flush (it runs
///   later in it). Otherwise, and on a thread with no frames, it goes to the next scheduled
///   flush; the first such block asks the scheduler for it, unless a scheduled flush is
///   running: that one asks when it ends.
/// - A batch takes over a block that waits for the next scheduled flush when its thread
///   schedules it again: it runs when the batch ends, and the scheduled flush skips it.
/// - Frames of other threads neither hold back nor run a thread's blocks, and flushes on
///   different threads (a batch ending while the scheduler's flush runs) each own their blocks.
package struct CoalescingState {
    /// A thread's identity (`pthread_self`), valid while the thread lives; a thread's state is
    /// dropped when its last frame ends, so a later thread with the same identity starts afresh.
    package typealias Thread = UInt

    /// One block of a coalesced observation, as the coalescer sees it.
    package final class Entry: @unchecked Sendable {
        /// Scheduled and not run yet. Belongs to the state (guarded by the coalescer's lock,
        /// not checked for exclusivity by the runtime).
        @exclusivity(unchecked) package fileprivate(set) var isPending = false
        /// Where it waits in `next`, if it does (checked by identity: it may be stale).
        @exclusivity(unchecked) fileprivate var nextSlot = 0
        /// Makes the block's run, or nil if it cannot run any more (its objects are gone); the
        /// run holds what the block needs until it ran.
        package let prepare: () -> (() -> Void)?

        package init(prepare: @escaping () -> (() -> Void)?) {
            self.prepare = prepare
        }
    }

    /// A scheduled block: the entry and its prepared run (nil once taken).
    fileprivate struct Scheduled {
        let entry: Entry
        var run: (() -> Void)?
    }

    /// A flush in progress on one thread.
    private struct Flush {
        let isScheduled: Bool
        var queue: [Scheduled]
        var head = 0
        /// The entries that ran in this flush.
        var ran: Set<ObjectIdentifier> = []
    }

    /// A batch or a flush on one thread.
    private enum Frame {
        case batch(depth: Int, queue: [Scheduled])
        case flush(Flush)

        var isFlush: Bool {
            if case .flush = self { true } else { false }
        }
    }

    /// What the caller releases after unlocking: blocks and entries whose last reference may
    /// be here, and whose release may run user code (a captured object's `deinit`).
    package struct Leftovers {
        fileprivate var scheduled: [Scheduled] = []
    }

    private var next: [Scheduled] = []
    /// A scheduled flush was asked for and has not started.
    private var flushRequested = false
    /// Scheduled flushes running (at most one, unless the scheduler runs work re-entrantly).
    private var scheduledFlushesRunning = 0
    /// The frames of each thread that has some, innermost last.
    private var threads: [Thread: [Frame]] = [:]

    package init() {}

    /// Whether scheduling `entry` from `thread` would change nothing: it waits for a flush
    /// already, and the thread has no batch that could take it over. (Checked before preparing
    /// its run.)
    package func isSettled(_ entry: Entry, on thread: Thread) -> Bool {
        entry.isPending && (threads.isEmpty || threads[thread] == nil)
    }

    /// What the caller of `schedule` must do.
    package enum ScheduleAction: Equatable {
        case none
        /// Ask the scheduler for a flush, then call `beginScheduledFlush` from it.
        case requestFlush
    }

    /// Schedules `entry` with its prepared `run`, from `thread`. If the entry is pending already,
    /// nothing changes, except that a batch of this thread takes it over if it waits for the
    /// next scheduled flush (the caller releases `run` after unlocking).
    package mutating func schedule(
        _ entry: Entry, run: @escaping () -> Void, on thread: Thread
    ) -> ScheduleAction {
        let target = threads.isEmpty ? nil : frame(for: entry, on: thread)
        if entry.isPending {
            guard let target, case .batch = threads[thread]![target],
                next.indices.contains(entry.nextSlot), next[entry.nextSlot].entry === entry,
                let waiting = next[entry.nextSlot].run
            else { return .none }
            next[entry.nextSlot].run = nil  // a hole the scheduled flush skips
            append(Scheduled(entry: entry, run: waiting), toFrame: target, of: thread)
            return .none
        }
        entry.isPending = true
        if let target {
            append(Scheduled(entry: entry, run: run), toFrame: target, of: thread)
            return .none
        }
        entry.nextSlot = next.count
        next.append(Scheduled(entry: entry, run: run))
        guard !flushRequested, scheduledFlushesRunning == 0 else { return .none }
        flushRequested = true
        return .requestFlush
    }

    /// The innermost frame of `thread` that may take `entry`: one outside every flush of the
    /// thread that ran it (so a block never runs inside itself, nor twice in one flush), or nil.
    private func frame(for entry: Entry, on thread: Thread) -> Int? {
        guard let frames = threads[thread] else { return nil }
        let id = ObjectIdentifier(entry)
        var limit = frames.count
        for index in frames.indices {
            if case .flush(let flush) = frames[index], flush.ran.contains(id) {
                limit = index
                break
            }
        }
        return limit > 0 ? limit - 1 : nil
    }

    /// Appends `scheduled` to the queue of frame `index` of `thread`, in place.
    private mutating func append(_ scheduled: Scheduled, toFrame index: Int, of thread: Thread) {
        withFrames(of: thread) { frames in
            // The frame is moved out, and the binding below takes the queue from it: the queue
            // has one reference when it grows, so it grows in place. (A copy of the frame kept
            // while the queue grows would copy the whole queue on every append.)
            var frame = frames[index]
            frames[index] = .batch(depth: 0, queue: [])
            switch consume frame {
            case .batch(let depth, var queue):
                queue.append(scheduled)
                frame = .batch(depth: depth, queue: queue)
            case .flush(var flush):
                flush.queue.append(scheduled)
                frame = .flush(flush)
            }
            frames[index] = frame
        }
    }

    /// `thread` opens a batch (or a nested one).
    package mutating func beginBatch(on thread: Thread) {
        withFrames(of: thread) { frames in
            if case .batch(let depth, let queue) = frames.last {
                frames[frames.count - 1] = .batch(depth: depth + 1, queue: queue)
            } else {
                frames.append(.batch(depth: 1, queue: []))
            }
        }
    }

    /// `thread` closes a batch. Returns whether it must flush now (`runNext(on:)` until it
    /// finishes): the outermost batch ended and scheduled blocks.
    package mutating func endBatch(on thread: Thread) -> Bool {
        guard case .batch(let depth, let queue) = threads[thread]?.last else {
            preconditionFailure("Herald: a batch ended on a thread that did not open it")
        }
        return withFrames(of: thread) { frames in
            guard depth == 1 else {
                frames[frames.count - 1] = .batch(depth: depth - 1, queue: queue)
                return false
            }
            frames.removeLast()
            guard !queue.isEmpty else { return false }
            frames.append(.flush(Flush(isScheduled: false, queue: queue)))
            return true
        }
    }

    /// The scheduler runs the requested flush on `thread`: it takes every block of the next
    /// flush. Then `runNext(on:)` until it finishes.
    package mutating func beginScheduledFlush(on thread: Thread) {
        flushRequested = false
        scheduledFlushesRunning += 1
        let flush = Flush(isScheduled: true, queue: next)
        next = []
        withFrames(of: thread) { $0.append(.flush(flush)) }
    }

    /// What `runNext` says.
    package enum Step {
        /// Run this block (after unlocking), then call `runNext` again.
        case run(() -> Void)
        /// The flush ended: release `leftovers` after unlocking, and ask the scheduler for the
        /// next flush if `requestFlush`.
        case finished(requestFlush: Bool, leftovers: Leftovers)
    }

    /// The next block of the innermost flush running on `thread`, or its end.
    package mutating func runNext(on thread: Thread) -> Step {
        // The flush is moved out of its frame (so that its queue is never copied), and back if
        // it goes on.
        enum Taken {
            case run(() -> Void)
            case ended(Flush)
        }
        let taken = withFrames(of: thread) { frames -> Taken in
            // The innermost flush: a batch that a block of it scheduled into may lie above it
            // (a coalescer joins the thread's `batch { }` when it first schedules in it, which
            // may be from inside a flush that began in the batch); that batch ends after it.
            guard let index = frames.lastIndex(where: \.isFlush),
                case .flush(var flush) = frames.remove(at: index)
            else {
                preconditionFailure("Herald: no flush runs on this thread")
            }
            // Holes: blocks a batch took over.
            while flush.head < flush.queue.count, flush.queue[flush.head].run == nil {
                flush.head += 1
            }
            guard flush.head < flush.queue.count else { return .ended(flush) }
            let head = flush.head
            flush.head = head + 1
            let entry = flush.queue[head].entry
            entry.isPending = false
            flush.ran.insert(ObjectIdentifier(entry))
            let run = flush.queue[head].run!
            flush.queue[head].run = nil  // the caller's is the last reference
            frames.insert(.flush(flush), at: index)
            return .run(run)
        }
        let flush: Flush
        switch taken {
        case .run(let run): return .run(run)
        case .ended(let ended): flush = ended
        }
        let leftovers = Leftovers(scheduled: flush.queue)
        guard flush.isScheduled else { return .finished(requestFlush: false, leftovers: leftovers) }
        scheduledFlushesRunning -= 1
        let request = !next.isEmpty && !flushRequested && scheduledFlushesRunning == 0
        if request { flushRequested = true }
        return .finished(requestFlush: request, leftovers: leftovers)
    }

    /// Runs `body` on the frames of `thread` in place, and forgets the thread once it has none.
    private mutating func withFrames<Result>(
        of thread: Thread, _ body: (inout [Frame]) -> Result
    ) -> Result {
        let result = body(&threads[thread, default: []])
        if threads[thread]!.isEmpty { threads[thread] = nil }
        return result
    }

    /// The blocks scheduled and not run yet, for tests and debugging.
    package var pendingCount: Int {
        func waiting(_ queue: ArraySlice<Scheduled>) -> Int { queue.count { $0.run != nil } }
        var count = waiting(next[...])
        for frames in threads.values {
            for frame in frames {
                switch frame {
                case .batch(_, let queue): count += waiting(queue[...])
                case .flush(let flush): count += waiting(flush.queue[flush.head...])
                }
            }
        }
        return count
    }
}
