import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge

/// Waits (yielding) until `condition` holds; false if it did not within ten seconds.
private func eventuallyTrue(_ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(10)
    while !condition() {
        if Date() > deadline { return false }
        sched_yield()
    }
    return true
}

/// Who waits for whom: a thread that holds nothing waits for the thread computing a property
/// and gets its result; a thread inside an evaluation never waits, it computes the property
/// itself, beside the other, and only one result is stored.
@Suite("Synthetic properties: who waits (concurrency)")
struct SyntheticWaitingConcurrencyTests {
    @Test func aReaderThatHoldsNothingWaitsForTheComputingThreadAndGetsItsResult() {
        let model = GatedSlow(stops: [0])
        let box = UncheckedBox(model)
        let first = Recording<Int>()
        let second = Recording<Int>()
        let computing = FinishingThread { first.append(box.value.slow) }
        model.gate.waitUntilStopped(atRun: 0)
        let waiting = FinishingThread { second.append(box.value.slow) }
        // The second reader holds nothing: it waits (blocked, not computing) for the first.
        let waited = eventuallyTrue { model.$slow.waitingReaderCount == 1 }
        #expect(waited)
        #expect(second.elements.isEmpty)
        model.gate.release(run: 0)
        #expect(computing.finished(within: 10))
        #expect(waiting.finished(within: 10))
        #expect(first.elements == [10])
        #expect(second.elements == [10])
        #expect(model.$slow.evaluationCount == 1)
        #expect(model.$slow.isValid)
    }

    @Test func aReaderInsideAnEvaluationComputesAsideWithoutWaitingAndOnlyOneResultIsStored() {
        let model = GatedSlow(stops: [0])
        let box = UncheckedBox(model)
        let computing = FinishingThread { _ = box.value.slow }
        model.gate.waitUntilStopped(atRun: 0)
        // `reader` is computed on another thread: inside its evaluation, `slow` is held by
        // the first thread, so this one computes `slow` itself, and does not wait.
        let got = Recording<Int>()
        let inside = FinishingThread { got.append(box.value.reader) }
        #expect(inside.finished(within: 10))
        #expect(got.elements == [11])
        // Counted as each run ends: the computation aside ended, the holder's has not.
        #expect(model.$slow.evaluationCount == 1)
        // The computation aside stored nothing, and nothing computed from it was stored.
        #expect(!model.$slow.isValid)
        #expect(!model.$reader.isValid)
        model.gate.release(run: 0)
        #expect(computing.finished(within: 10))
        // One result stored: the holder's.
        #expect(model.$slow.isValid)
        #expect(model.slow == 10)
        #expect(model.reader == 11)
        #expect(model.$slow.evaluationCount == 2)
        #expect(model.$reader.evaluationCount == 2)
    }

    @Test func aValueComputedAsideFromAStateThatChangedIsNotStoredByItsReader() {
        let model = GatedSlow(stops: [0])
        let box = UncheckedBox(model)
        let computing = FinishingThread { _ = box.value.slow }
        model.gate.waitUntilStopped(atRun: 0)
        // `base` changes while the first thread computes `slow`: that computation is overtaken.
        model.base = 2
        let got = Recording<Int>()
        let inside = FinishingThread { got.append(box.value.reader) }
        #expect(inside.finished(within: 10))
        #expect(got.elements == [21])
        model.gate.release(run: 0)
        #expect(computing.finished(within: 10))
        // The first thread's value (10, from base 1) was not stored; every read now agrees
        // with base 2.
        #expect(model.slow == 20)
        #expect(model.reader == 21)
        model.base = 3
        #expect(model.reader == 31)
    }

    @Test func aWaitingReaderComputesItselfWhenTheComputationItWaitedForWasOvertaken() {
        let model = GatedSlow(stops: [0])
        let box = UncheckedBox(model)
        let first = Recording<Int>()
        let second = Recording<Int>()
        let computing = FinishingThread { first.append(box.value.slow) }
        model.gate.waitUntilStopped(atRun: 0)
        let waiting = FinishingThread { second.append(box.value.slow) }
        #expect(eventuallyTrue { model.$slow.waitingReaderCount == 1 })
        model.base = 5  // overtakes the first computation
        model.gate.release(run: 0)
        #expect(computing.finished(within: 10))
        #expect(waiting.finished(within: 10))
        // The first reader gets what it computed; the second, woken, computes from base 5.
        #expect(first.elements == [10])
        #expect(second.elements == [50])
        #expect(model.slow == 50)
        #expect(model.$slow.evaluationCount == 2)
    }
}
