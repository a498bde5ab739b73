import Testing
import Transforms

/// The coalescer's bookkeeping, driven one step at a time with made-up thread identities: every
/// interleaving of threads is a sequence of these calls.
@Suite("Coalescing state")
struct CoalescingStateTests {
    typealias State = CoalescingState
    let scheduler: State.Thread = 1
    let a: State.Thread = 2
    let b: State.Thread = 3

    final class Log {
        var runs: [String] = []
    }

    /// An entry whose block records its name.
    func entry(_ name: String, _ log: Log) -> (State.Entry, () -> Void) {
        let entry = State.Entry { nil }
        return (entry, { log.runs.append(name) })
    }

    /// Runs the innermost flush of `thread` to its end, calling `during` before each block;
    /// returns whether it asked for another flush.
    @discardableResult
    func runFlush(
        _ state: inout State, on thread: State.Thread,
        during: (inout State, Int) -> Void = { _, _ in }
    ) -> Bool {
        var index = 0
        while true {
            switch state.runNext(on: thread) {
            case .run(let run):
                during(&state, index)
                run()
                index += 1
            case .finished(let requestFlush, _):
                return requestFlush
            }
        }
    }

    @Test func theFirstScheduledBlockAsksForAFlushAndTheRestWait() {
        var state = State()
        let log = Log()
        let (x, runX) = entry("x", log)
        let (y, runY) = entry("y", log)
        let first = state.schedule(x, run: runX, on: a)
        #expect(first == .requestFlush)
        let otherThread = state.schedule(y, run: runY, on: b)
        #expect(otherThread == .none)
        let again = state.schedule(x, run: runX, on: b)
        #expect(again == .none)  // pending already
        #expect(state.pendingCount == 2)

        state.beginScheduledFlush(on: scheduler)
        let requested = runFlush(&state, on: scheduler)
        #expect(requested == false)
        #expect(log.runs == ["x", "y"])
        #expect(state.pendingCount == 0)
        #expect(!x.isPending && !y.isPending)
    }

    @Test func aBlockScheduledByABlockRunsInTheSameFlushOnlyIfItHasNotRunInIt() {
        var state = State()
        let log = Log()
        let (x, runX) = entry("x", log)
        let (y, runY) = entry("y", log)
        _ = state.schedule(x, run: runX, on: a)
        _ = state.schedule(y, run: runY, on: a)
        state.beginScheduledFlush(on: scheduler)
        let requested = runFlush(&state, on: scheduler) { state, index in
            guard index == 1 else { return }
            // While y runs: x already ran in this flush, a new z has not.
            let ranAlready = state.schedule(x, run: runX, on: scheduler)
            #expect(ranAlready == .none)
            let (z, runZ) = entry("z", log)
            let notRunYet = state.schedule(z, run: runZ, on: scheduler)
            #expect(notRunYet == .none)
        }
        #expect(log.runs == ["x", "y", "z"])
        #expect(requested)  // x waits for the next flush, which the ending flush asks for
        state.beginScheduledFlush(on: scheduler)
        runFlush(&state, on: scheduler)
        #expect(log.runs == ["x", "y", "z", "x"])
    }

    @Test func aChangeOnAnotherThreadDuringAFlushWaitsForTheNextOne() {
        var state = State()
        let log = Log()
        let (x, runX) = entry("x", log)
        let (y, runY) = entry("y", log)
        _ = state.schedule(x, run: runX, on: a)
        state.beginScheduledFlush(on: scheduler)
        let requested = runFlush(&state, on: scheduler) { state, _ in
            // Another thread's change: no flush is asked for while this one runs…
            let duringFlush = state.schedule(y, run: runY, on: b)
            #expect(duringFlush == .none)
        }
        #expect(requested)  // …this one asks for it when it ends
        #expect(log.runs == ["x"])
        state.beginScheduledFlush(on: scheduler)
        runFlush(&state, on: scheduler)
        #expect(log.runs == ["x", "y"])
    }

    @Test func batchesBelongToTheirThreadAndNest() {
        var state = State()
        let log = Log()
        let (x, runX) = entry("x", log)
        let (y, runY) = entry("y", log)
        state.beginBatch(on: a)
        state.beginBatch(on: a)
        let inBatch = state.schedule(x, run: runX, on: a)
        #expect(inBatch == .none)
        let outsideBatch = state.schedule(y, run: runY, on: b)
        #expect(outsideBatch == .requestFlush)  // b is not batching
        let innerEnd = state.endBatch(on: a)
        #expect(innerEnd == false)  // the inner batch does not flush
        let outerEnd = state.endBatch(on: a)
        #expect(outerEnd == true)
        let requested = runFlush(&state, on: a)
        #expect(requested == false)
        #expect(log.runs == ["x"])
        state.beginScheduledFlush(on: scheduler)
        runFlush(&state, on: scheduler)
        #expect(log.runs == ["x", "y"])
        #expect(state.pendingCount == 0)
    }

    @Test func aBatchWithNothingScheduledFlushesNothing() {
        var state = State()
        state.beginBatch(on: a)
        let mustFlush = state.endBatch(on: a)
        #expect(mustFlush == false)
        #expect(state.pendingCount == 0)
    }

    /// The interleaving that lost blocks before issue 10: a batch ends while the scheduler's
    /// flush runs on another thread. Each flush keeps its own blocks.
    @Test func aBatchFlushAndAScheduledFlushInterleaveWithoutLosingBlocks() {
        var state = State()
        let log = Log()
        let (x, runX) = entry("x", log)
        let (y, runY) = entry("y", log)
        let (z, runZ) = entry("z", log)
        _ = state.schedule(x, run: runX, on: a)
        _ = state.schedule(y, run: runY, on: a)
        state.beginScheduledFlush(on: scheduler)
        guard case .run(let first) = state.runNext(on: scheduler) else {
            Issue.record("the scheduled flush has blocks")
            return
        }
        first()  // x ran on the scheduler's thread; y waits in its flush
        state.beginBatch(on: b)
        let inBatch = state.schedule(z, run: runZ, on: b)
        #expect(inBatch == .none)
        let pendingElsewhere = state.schedule(y, run: runY, on: b)
        #expect(pendingElsewhere == .none)  // pending in the other flush
        let mustFlush = state.endBatch(on: b)
        #expect(mustFlush)
        runFlush(&state, on: b)  // the batch's flush, while the scheduler's is halfway
        #expect(log.runs == ["x", "z"])
        let requested = runFlush(&state, on: scheduler)
        #expect(requested == false)
        #expect(log.runs == ["x", "z", "y"])
        #expect(state.pendingCount == 0)
        #expect(![x, y, z].contains { $0.isPending })
    }

    /// Found in review: which flushes an entry ran in is per flush, not one value per entry,
    /// so a batch flush on another thread running the entry in between does not make the
    /// scheduler's flush forget that it ran it already.
    @Test func aBlockRunsAtMostOncePerFlushWhenAnotherThreadsFlushRanItMeanwhile() {
        var state = State()
        let log = Log()
        let (x, runX) = entry("x", log)
        _ = state.schedule(x, run: runX, on: a)
        state.beginScheduledFlush(on: scheduler)
        guard case .run(let first) = state.runNext(on: scheduler) else {
            Issue.record("the scheduled flush has a block")
            return
        }
        first()
        state.beginBatch(on: b)
        _ = state.schedule(x, run: { log.runs.append("x in b's batch") }, on: b)
        let mustFlush = state.endBatch(on: b)
        #expect(mustFlush)
        runFlush(&state, on: b)
        // Back in the scheduler's flush, a block changes x's input again: next flush.
        _ = state.schedule(x, run: { log.runs.append("x again") }, on: scheduler)
        let requested = runFlush(&state, on: scheduler)
        #expect(log.runs == ["x", "x in b's batch"])
        #expect(requested)
        state.beginScheduledFlush(on: scheduler)
        runFlush(&state, on: scheduler)
        #expect(log.runs == ["x", "x in b's batch", "x again"])
    }

    /// Found in review: a flush that runs inside a batch on the same thread (a scheduler run
    /// from a batch) keeps the same-flush rule: a block scheduled by a block of that flush runs
    /// in it, not at the end of the enclosing batch.
    @Test func aFlushInsideABatchKeepsTheSameFlushRule() {
        var state = State()
        let log = Log()
        let (x, runX) = entry("x", log)
        let (y, runY) = entry("y", log)
        _ = state.schedule(x, run: runX, on: b)
        state.beginBatch(on: a)
        state.beginScheduledFlush(on: a)
        runFlush(&state, on: a) { state, index in
            guard index == 0 else { return }
            _ = state.schedule(y, run: runY, on: a)  // while x runs
            _ = state.schedule(x, run: runX, on: a)  // x ran in this flush: the batch takes it
        }
        #expect(log.runs == ["x", "y"])
        let mustFlush = state.endBatch(on: a)
        #expect(mustFlush)
        runFlush(&state, on: a)
        #expect(log.runs == ["x", "y", "x"])
        #expect(state.pendingCount == 0)
    }

    @Test func aBatchTakesOverABlockWaitingForTheScheduledFlushWhichSkipsIt() {
        var state = State()
        let log = Log()
        let (x, runX) = entry("x", log)
        let (y, runY) = entry("y", log)
        let first = state.schedule(x, run: runX, on: a)
        #expect(first == .requestFlush)
        _ = state.schedule(y, run: runY, on: a)
        state.beginBatch(on: b)
        _ = state.schedule(x, run: { log.runs.append("not this one") }, on: b)
        #expect(state.pendingCount == 2)  // x moved, not copied
        let mustFlush = state.endBatch(on: b)
        #expect(mustFlush)
        runFlush(&state, on: b)
        #expect(log.runs == ["x"])  // the run prepared first, with the objects it held
        state.beginScheduledFlush(on: scheduler)
        runFlush(&state, on: scheduler)
        #expect(log.runs == ["x", "y"])
        #expect(state.pendingCount == 0)
    }

    /// What a finished flush held is handed back, for the caller to release after unlocking.
    @Test func aFinishedFlushHandsBackItsBlocksForReleaseOutsideTheLock() {
        var state = State()
        weak var weakEntry: State.Entry?
        do {
            let entry = State.Entry { nil }
            weakEntry = entry
            _ = state.schedule(entry, run: {}, on: a)
        }
        state.beginScheduledFlush(on: scheduler)
        guard case .run = state.runNext(on: scheduler) else {
            Issue.record("the scheduled flush has a block")
            return
        }
        guard case .finished(_, let leftovers) = state.runNext(on: scheduler) else {
            Issue.record("the flush has one block")
            return
        }
        #expect(weakEntry != nil)  // the leftovers hold the last reference…
        _ = consume leftovers
        #expect(weakEntry == nil)  // …until the caller lets them go
    }

    @Test func aBatchEndingInsideABlockFlushesInsideThatBlock() {
        var state = State()
        let log = Log()
        let (x, runX) = entry("x", log)
        let (y, runY) = entry("y", log)
        _ = state.schedule(x, run: runX, on: a)
        state.beginScheduledFlush(on: scheduler)
        runFlush(&state, on: scheduler) { state, _ in
            // x's block opens a batch that schedules y, and ends it: y runs at once.
            state.beginBatch(on: scheduler)
            _ = state.schedule(y, run: runY, on: scheduler)
            let mustFlush = state.endBatch(on: scheduler)
            #expect(mustFlush)
            runFlush(&state, on: scheduler)
            #expect(log.runs == ["y"])
        }
        #expect(log.runs == ["y", "x"])
        #expect(state.pendingCount == 0)
    }

    @Test func aBatchOpenedAboveARunningFlushEndsAfterIt() {
        var state = State()
        let log = Log()
        let (x, runX) = entry("x", log)
        let (y, runY) = entry("y", log)
        _ = state.schedule(x, run: runX, on: a)
        state.beginScheduledFlush(on: a)
        // The thread's batch began before the flush; the coalescer joins it only when x's
        // block schedules y: its batch frame lies above the flush, and outlives it.
        let requested = runFlush(&state, on: a) { state, _ in
            state.beginBatch(on: a)
            _ = state.schedule(y, run: runY, on: a)
        }
        #expect(requested == false)
        #expect(log.runs == ["x"])
        #expect(state.pendingCount == 1)
        let mustFlush = state.endBatch(on: a)
        #expect(mustFlush)
        runFlush(&state, on: a)
        #expect(log.runs == ["x", "y"])
        #expect(state.pendingCount == 0)
    }
}
