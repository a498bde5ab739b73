import RuntimeShims

/// Runs `body`, and only then brings the observed synthetic properties it changed up to date and
/// tells their observers, once: no observer of a synthetic property hears of a state from the
/// middle of the batch. Returns what `body` returns.
///
/// ```swift
/// batch {
///     person.first = "Grace"
///     person.last = "Hopper"
/// }   // an observer of person.fullName heard one update, to "Grace Hopper", here
/// ```
///
/// Writes inside a batch mark what depends on them as usual: a read of a synthetic property
/// inside it computes the value from the state of the moment, and observers of variables and
/// collections hear each change as it is made. What waits for the end is the work that runs
/// after a change: observed synthetic properties recompute and tell (each at most once, however
/// many of its sources changed), then the coalesced blocks (`observeCoalesced`, `coalesce(on:)`)
/// that the batch scheduled run, on this thread, before `batch` returns — coalesced at once,
/// without waiting for their scheduler.
///
/// Inside Herald's own work (an observer that a propagation calls, a synthetic property's
/// function), a batch propagates as any change made there: in the pass that is running, after
/// `batch` returns.
///
/// Batches nest: the outermost one ends the batch. A batch belongs to its thread: changes other
/// threads make meanwhile propagate as usual. If `body` throws, the batch ends all the same (what
/// it changed stays changed and is told), and the error is rethrown.
public func batch<Result>(_ body: () throws -> Result) rethrows -> Result {
    DependencyTracking.beginBatch()
    defer { DependencyTracking.endBatch() }
    return try body()
}

extension DependencyTracking {
    /// Whether this thread is inside a ``batch(_:)``.
    @inlinable
    package static var isInBatch: Bool { herald_thread_batch_depth() > 0 }

    /// Makes `end` run when this thread's outermost batch ends, after the propagation, unless
    /// something with the identity `key` joined it already. Returns whether it joined (the caller
    /// then begins what `end` ends). Only inside a batch.
    package static func joinBatch(as key: ObjectIdentifier, atEnd end: @escaping () -> Void)
        -> Bool
    {
        ThreadContext.withThisThread { context in
            precondition(isInBatch, "Herald: joining a batch outside any batch")
            if context.joinedBatch.contains(where: { $0.key == key }) { return false }
            context.joinedBatch.append((key, end))
            return true
        }
    }

    static func beginBatch() {
        herald_set_thread_batch_depth(herald_thread_batch_depth() + 1)
    }

    /// Ends a batch. The outermost one runs the queued work (still inside the batch, so that
    /// what the observers schedule joins it), then what joined it, in the order it joined, once
    /// the batch is over, with no evaluation frame open (as observers are called).
    static func endBatch() {
        let joined = ThreadContext.withThisThread {
            context -> [(key: ObjectIdentifier, end: () -> Void)] in
            let depth = herald_thread_batch_depth()
            guard depth == 1 else {
                herald_set_thread_batch_depth(depth - 1)
                return []
            }
            runQueuedWork(in: context)
            herald_set_thread_batch_depth(0)
            defer { context.joinedBatch = [] }
            return context.joinedBatch
        }
        guard !joined.isEmpty else { return }
        // A batch opened inside an evaluation (a synthetic property's function) ends inside it:
        // what the coalesced blocks read is not the function's dependency.
        withoutFrames { for member in joined { member.end() } }
    }
}
