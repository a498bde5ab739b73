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
        let scheduler = TestScheduler()
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
        let first = TestScheduler()
        let second = TestScheduler()
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
