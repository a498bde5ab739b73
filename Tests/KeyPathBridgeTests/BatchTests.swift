import HeraldTestSupport
import Testing

@testable import KeyPathBridge

/// Two variables, and synthetic properties over both.
private final class BatchedPair {
    @ObservableVar var a = 1
    @ObservableVar var b = 1
    @Synthetic({ (pair: BatchedPair) in pair.a + pair.b }) var sum: Int
    @Synthetic({ (pair: BatchedPair) in pair.a - pair.b }) var difference: Int
    @Synthetic({ (pair: BatchedPair) in "\(pair.a),\(pair.b)" }) var both: String
}

private struct BatchFailure: Error {}

/// `batch { }`: writes inside it mark as usual; observed synthetic properties recompute and tell
/// once, at its end, and coalesced blocks it scheduled run then; no observer of a synthetic
/// property sees a state from the middle of a batch.
@Suite("batch: observers of synthetic properties hear once, at the end")
struct BatchTests {
    @Test("an observed synthetic property over several written sources tells once, at the end")
    func anObservedSyntheticPropertyTellsOnceAtTheEnd() {
        let pair = BatchedPair()
        let observer = TestObserver()
        let updates = Recording<Update<String>>()
        observer.observe(pair.$both) { updates.append($0) }
        let before = pair.$both.evaluationCount
        batch {
            pair.a = 2
            pair.b = 3
            pair.a = 4
            #expect(updates.elements.isEmpty)
        }
        #expect(updates.elements == [Update("1,1", "4,3")])
        #expect(pair.$both.evaluationCount == before + 1)
    }

    @Test("no observer of a synthetic property sees a state from the middle of a batch")
    func noObserverSeesAStateFromTheMiddle() {
        let pair = BatchedPair()
        let observer = TestObserver()
        let differences = Recording<Update<Int>>()
        observer.observe(pair.$difference) { differences.append($0) }
        // Both move by one: the difference is 0 before and after, and only in the middle 1.
        batch {
            pair.a += 1
            pair.b += 1
        }
        #expect(differences.elements.isEmpty)
        #expect(pair.difference == 0)
    }

    @Test("inside a batch, variables' observers hear each change and reads see the moment's state")
    func insideABatchVariablesTellAtOnceAndReadsAreCurrent() {
        let pair = BatchedPair()
        let observer = TestObserver()
        let heard = Recording<Int>()
        observer.observe(pair.$sum) { _ in }
        observer.observe(pair.$a) { heard.append($0.new) }
        batch {
            pair.a = 5
            #expect(heard.elements == [5])
            #expect(pair.sum == 6)
            pair.b = 10
            #expect(pair.sum == 15)
        }
        #expect(pair.sum == 15)
    }

    @Test("batches nest: the outermost one tells")
    func batchesNest() {
        let pair = BatchedPair()
        let observer = TestObserver()
        let sums = Recording<Int>()
        observer.observe(pair.$sum) { sums.append($0.new) }
        batch {
            batch { pair.a = 10 }
            #expect(sums.elements.isEmpty)
            pair.b = 20
        }
        #expect(sums.elements == [30])
    }

    @Test("a batch returns its body's result, and one that throws still tells what it changed")
    func aBatchReturnsAndRethrows() {
        let pair = BatchedPair()
        let observer = TestObserver()
        let sums = Recording<Int>()
        observer.observe(pair.$sum) { sums.append($0.new) }
        let result = batch { () -> String in
            pair.a = 2
            return "done"
        }
        #expect(result == "done")
        #expect(sums.elements == [3])
        #expect(throws: BatchFailure.self) {
            try batch {
                pair.b = 5
                throw BatchFailure()
            }
        }
        #expect(sums.elements == [3, 7])
        // The batch ended: the next change tells at once.
        pair.a = 0
        #expect(sums.elements == [3, 7, 5])
    }

    @Test("a coalesced block over a synthetic property runs once, at the end, with the last value")
    func aCoalescedBlockRunsOnceAtTheEnd() {
        let scheduler = TestMessageScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let pair = BatchedPair()
        let observer = TestObserver()
        let seen = Recording<Int>()
        observer.observeCoalesced(pair, \.$sum, in: coalescer) { _, pair in
            seen.append(pair.sum)
        }
        batch {
            pair.a = 2
            pair.b = 8
        }
        #expect(seen.elements == [10])
        #expect(scheduler.pendingCount == 0)
    }

    @Test("a coalesced block of every coalescer the batch reached runs at its end")
    func everyCoalescerTheBatchReachedFlushesAtItsEnd() {
        let first = TestMessageScheduler()
        let second = TestMessageScheduler()
        let pair = BatchedPair()
        let observer = TestObserver()
        let seen = Recording<String>()
        observer.observeCoalesced(pair, \.$a, in: Coalescer(scheduler: first)) { _, pair in
            seen.append("a \(pair.a)")
        }
        observer.observeCoalesced(pair, \.$b, in: Coalescer(scheduler: second)) { _, pair in
            seen.append("b \(pair.b)")
        }
        batch {
            pair.a = 3
            pair.b = 4
            pair.a = 5
        }
        #expect(seen.elements == ["a 5", "b 4"])
        #expect(first.pendingCount == 0 && second.pendingCount == 0)
    }

    @Test("a batch belongs to its thread: another thread's writes meanwhile tell at once")
    func aBatchBelongsToItsThread() {
        let pair = BatchedPair()
        let observer = TestObserver()
        let sums = Recording<Int>()
        observer.observe(pair.$sum) { sums.append($0.new) }
        batch {
            runOnThreadAndJoin { pair.b = 9 }
            #expect(sums.elements == [10])
            pair.a = 0
            #expect(sums.elements == [10])
        }
        #expect(sums.elements == [10, 9])
    }
}

/// A synthetic property that a change of `trigger` makes tell, and one over `a` and `b`.
private final class TriggeredPair {
    @ObservableVar var trigger = 0
    @ObservableVar var a = 1
    @ObservableVar var b = 1
    @Synthetic({ (pair: TriggeredPair) in pair.trigger }) var triggered: Int
    @Synthetic({ (pair: TriggeredPair) in pair.a + pair.b }) var sum: Int
}

/// A synthetic property whose function writes `side` (which it does not read) in a batch.
private final class BatchingFunction {
    @ObservableVar var a = 1
    @ObservableVar var side = 0
    @ObservableVar var other = 0
    @Synthetic({ (model: BatchingFunction) in
        let value = model.a
        batch { model.side = value }
        return value
    })
    var echo: Int
}

/// Where a batch is opened: inside an observer, a function, a coalesced block; and how it ends.
@Suite("batch: opened inside Herald's own work, and ending in every way")
struct BatchReentryTests {
    @Test("a batch opened inside an observer propagates in the pass running, once")
    func aBatchInsideAnObserverPropagatesInThePassRunning() {
        let scheduler = TestMessageScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let pair = TriggeredPair()
        let observer = TestObserver()
        let sums = Recording<Int>()
        let seen = Recording<Int>()
        observer.observe(pair.$sum) { sums.append($0.new) }
        observer.observeCoalesced(pair, \.$sum, in: coalescer) { _, pair in
            seen.append(pair.sum)
        }
        observer.observe(pair.$triggered) { _ in
            batch {
                pair.a = 2
                pair.b = 3
            }
        }
        pair.trigger = 1
        // As any change made in an observer that a propagation calls: told in the pass that
        // runs, once, with nothing from the middle of the batch; the coalesced block that
        // pass schedules goes to its scheduler (the batch had ended).
        #expect(sums.elements == [5])
        scheduler.flush()
        #expect(seen.elements == [5])
    }

    @Test("a coalesced block that a batch inside a function runs is no dependency of the function")
    func aCoalescedBlockRunByABatchInAFunctionIsNoDependency() {
        let scheduler = TestMessageScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let model = BatchingFunction()
        let observer = TestObserver()
        let echoes = Recording<Int>()
        observer.observe(model.$echo) { echoes.append($0.new) }
        observer.observeCoalesced(model, \.$side, in: coalescer) { _, model in
            _ = model.other
        }
        model.a = 2
        #expect(echoes.elements == [2])
        let evaluations = model.$echo.evaluationCount
        // `echo` reads `a` only: what a coalesced block read is not its dependency.
        model.other = 1
        #expect(model.$echo.evaluationCount == evaluations)
        #expect(echoes.elements == [2])
    }

    @Test("a scheduled flush run inside a batch survives a block that schedules on its coalescer")
    func aFlushRunInsideABatchSurvivesABlockThatSchedules() async {
        await #expect(processExitsWith: .success) {
            let scheduler = TestMessageScheduler()
            let coalescer = Coalescer(scheduler: scheduler)
            let pair = BatchedPair()
            let observer = TestObserver()
            let seen = Recording<String>()
            observer.observeCoalesced(pair, \.$a, in: coalescer) { _, pair in
                seen.append("a \(pair.a)")
                pair.b = pair.a
            }
            observer.observeCoalesced(pair, \.$b, in: coalescer) { _, pair in
                seen.append("b \(pair.b)")
            }
            pair.a = 2  // waits for the scheduler
            batch {
                // The scheduler's flush runs here, inside the batch (a run loop turned inside
                // it, say): the first block schedules the second on the same coalescer.
                _ = scheduler.runTurn()
            }
            #expect(seen.elements == ["a 2", "b 2"])
            #expect(scheduler.pendingCount == 0 && coalescer.pendingCount == 0)
        }
    }

    @Test("a body that throws with a coalescer joined still runs its blocks, then rethrows")
    func aThrowingBodyStillFlushesTheCoalescer() {
        let scheduler = TestMessageScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let pair = BatchedPair()
        let observer = TestObserver()
        let seen = Recording<String>()
        observer.observeCoalesced(pair, \.$a, in: coalescer) { _, pair in
            seen.append("a \(pair.a)")
        }
        #expect(throws: BatchFailure.self) {
            try batch {
                pair.a = 7
                try batch { throw BatchFailure() }
            }
        }
        #expect(seen.elements == ["a 7"])
        #expect(scheduler.pendingCount == 0 && coalescer.pendingCount == 0)
        // The batch ended: the next change waits for the scheduler.
        pair.a = 8
        #expect(seen.elements == ["a 7"])
        _ = scheduler.flush()
        #expect(seen.elements == ["a 7", "a 8"])
    }

    @Test("a coalescer whose last reference is dropped in a batch still runs its blocks at the end")
    func aCoalescerDroppedInABatchStillFlushes() {
        let scheduler = TestMessageScheduler()
        let pair = BatchedPair()
        var observer: TestObserver? = TestObserver()
        let seen = Recording<Int>()
        weak var weakCoalescer: Coalescer?
        do {
            let coalescer = Coalescer(scheduler: scheduler)
            weakCoalescer = coalescer
            observer!.observeCoalesced(pair, \.$a, in: coalescer) { _, pair in
                seen.append(pair.a)
            }
        }
        batch {
            pair.a = 4
            // The observation goes with its observer, and the coalescer with it, but for the
            // batch (and the run it scheduled, which holds the observer).
            observer = nil
            pair.a = 5
        }
        // The scheduled run held the observer until it ran, with the last value.
        #expect(seen.elements == [5])
        #expect(scheduler.pendingCount == 0)
        #expect(weakCoalescer == nil)
    }

    @Test("a batch opened in a coalesced block that a batch's end runs flushes at its own end")
    func aBatchInsideAnEndOfBatchBlock() {
        let scheduler = TestMessageScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let pair = BatchedPair()
        let observer = TestObserver()
        let seen = Recording<String>()
        observer.observeCoalesced(pair, \.$a, in: coalescer) { _, pair in
            seen.append("a \(pair.a)")
            batch { pair.b = pair.a * 10 }
            seen.append("inner batch returned")
        }
        observer.observeCoalesced(pair, \.$b, in: coalescer) { _, pair in
            seen.append("b \(pair.b)")
        }
        batch { pair.a = 3 }
        #expect(seen.elements == ["a 3", "b 30", "inner batch returned"])
        #expect(scheduler.pendingCount == 0 && coalescer.pendingCount == 0)
    }

    @Test("an observer that the end of a batch tells may open a batch and write: all is told")
    func aBatchInsideTheEndOfBatchPropagation() {
        let pair = TriggeredPair()
        let observer = TestObserver()
        let sums = Recording<Int>()
        observer.observe(pair.$sum) { sums.append($0.new) }
        observer.observe(pair.$triggered) { change in
            batch {
                pair.a = change.new
                pair.b = change.new
            }
        }
        batch { pair.trigger = 4 }
        #expect(sums.elements == [8])
        #expect(pair.sum == 8)
        // The batch is over: a change tells at once.
        pair.a = 0
        #expect(sums.elements == [8, 4])
    }

    @Test("a batch on a thread that then ends leaves other threads and later batches unaffected")
    func aBatchOnAThreadThatEnds() {
        let pair = BatchedPair()
        let observer = TestObserver()
        let sums = Recording<Int>()
        observer.observe(pair.$sum) { sums.append($0.new) }
        runOnThreadAndJoin {
            batch {
                pair.a = 2
                pair.b = 2
            }
        }
        #expect(sums.elements == [4])
        pair.a = 3
        #expect(sums.elements == [4, 5])
    }
}

/// Reads inside a batch compute from the moment's state; what its observers hear does not.
@Suite("batch: a read in the middle of a batch tells no observer")
struct BatchMiddleReadTests {
    @Test("an observed property read in the middle of a batch tells nothing of that state")
    func aReadInTheMiddleTellsNothing() {
        let pair = BatchedPair()
        let observer = TestObserver()
        let differences = Recording<Update<Int>>()
        observer.observe(pair.$difference) { differences.append($0) }
        batch {
            pair.a += 1
            #expect(pair.difference == 1)
            #expect(differences.elements.isEmpty)
            pair.b += 1
            #expect(pair.difference == 0)
        }
        // Before and after, the difference is 0: nothing to tell, and no update from 1.
        #expect(differences.elements.isEmpty)
    }

    @Test("an update at a batch's end goes from the value told before it, not a middle read")
    func anUpdateStartsFromTheValueToldBefore() {
        let pair = BatchedPair()
        let observer = TestObserver()
        let sums = Recording<Update<Int>>()
        observer.observe(pair.$sum) { sums.append($0) }
        batch {
            pair.a = 5
            #expect(pair.sum == 6)
            pair.b = 5
        }
        #expect(sums.elements == [Update(2, 10)])
    }

    @Test("another thread's change in the middle of a batch tells no state from its middle")
    func anotherThreadsChangeTellsNoMiddleState() {
        let pair = BatchedPair()
        let observer = TestObserver()
        let sums = Recording<Int>()
        observer.observe(pair.$sum) { sums.append($0.new) }
        batch {
            pair.a = 100  // undone before the batch ends
            runOnThreadAndJoin { pair.b = 2 }
            pair.a = 1
        }
        // States outside the batch: a = 1 with b = 1, then with b = 2. Never a = 100.
        #expect(!sums.elements.contains(102))
        #expect(sums.elements.last == 3)
    }
}
