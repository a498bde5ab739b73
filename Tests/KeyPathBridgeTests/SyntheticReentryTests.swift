import Foundation
import HeraldTestSupport
import Testing

@testable import KeyPathBridge

/// A property that invalidates itself during its evaluation (overtaking it), then reads itself.
private final class SelfInvalidatingReader {
    @ObservableVar var trigger = false
    /// How many evaluations may still invalidate the property (-1: every one).
    nonisolated(unsafe) var invalidationsLeft = -1
    @Synthetic({ (model: SelfInvalidatingReader) -> Int in
        guard model.trigger, model.invalidationsLeft != 0 else { return 1 }
        model.invalidationsLeft -= 1
        model.invalidateP()  // overtakes this evaluation
        return model.readP() + 1  // a re-entry: the last value, or computed once if there is none
    })
    var p: Int
    @Synthetic({ (model: SelfInvalidatingReader) in model.p * 10 }) var q: Int

    func invalidateP() { $p.invalidate() }
    func readP() -> Int { p }
}

private final class WritingCounter {
    @ObservableVar var count = 0
    @Synthetic({ (counter: WritingCounter) in
        let n = counter.count
        counter.count = n + 1
        return n
    })
    var next: Int
}

private final class TwoLoop {
    @Synthetic({ (loop: TwoLoop) in loop.b + 1 }) var a: Int
    @Synthetic({ (loop: TwoLoop) in loop.a + 1 }) var b: Int
}

/// `p` reads `q` only while `s` is true; `q` reads `p` only while `x` is true. No state has
/// both (`y` true and `x` true never hold together): the program has no cycle.
private final class MixModel: @unchecked Sendable {
    nonisolated(unsafe) var armed = true
    @ObservableVar var y = true
    @ObservableVar var x = false
    @Synthetic({ (model: MixModel) -> Bool in
        let y = model.y
        if model.armed {
            model.armed = false
            model.switchOnAnotherThread()
        }
        return y
    })
    var s: Bool
    @Synthetic({ (model: MixModel) -> Int in model.s ? model.q + 1 : 0 }) var p: Int
    @Synthetic({ (model: MixModel) -> Int in model.x ? model.p + 1 : 0 }) var q: Int

    /// Another thread goes from the state (y, !x) to (!y, x), while `s` computes.
    func switchOnAnotherThread() {
        let box = UncheckedBox(self)
        runOnThreadAndJoin {
            box.value.y = false
            box.value.x = true
        }
    }
}

/// `next` writes `count`, which it reads through `q`; stops writing after `writesLeft` runs
/// (a bound, so that a regression to retrying ends).
private final class IndirectWriter {
    @ObservableVar var count = 0
    nonisolated(unsafe) var writesLeft = 300
    @Synthetic({ (model: IndirectWriter) in model.count }) var q: Int
    @Synthetic({ (model: IndirectWriter) -> Int in
        let n = model.q
        if model.writesLeft > 0 {
            model.writesLeft -= 1
            model.count = n + 1
        }
        return n
    })
    var next: Int
}

/// `next` sets `hybrid`, a synthetic property it read, to a new value each run (bounded).
private final class HybridWriter {
    nonisolated(unsafe) var writesLeft = 300
    @Synthetic({ (_: HybridWriter) in 0 }) var hybrid: Int
    @Synthetic({ (model: HybridWriter) -> Int in
        let n = model.hybrid
        if model.writesLeft > 0 {
            model.writesLeft -= 1
            model.hybrid = n + 1
        }
        return n
    })
    var next: Int
}

/// What a re-entry is: re-entering a property this thread is computing is a cycle, unless an
/// invalidation or set overtook that computation; then the read gets the last value (or
/// computes it once), and nothing computed from it is stored. A function that writes what it
/// read is reported like a cycle, never retried.
@Suite("Synthetic properties: re-entry and cycles")
struct SyntheticReentryTests {
    @Test func anOvertakenReentryGetsTheLastValueAndNothingComputedFromItIsStored() {
        let model = SelfInvalidatingReader()
        #expect(model.p == 1)
        model.trigger = true
        #expect(model.p == 2)  // the last value, 1, plus one
        #expect(!model.$p.isValid)
        #expect(model.q == 20)
        #expect(!model.$q.isValid)
        model.trigger = false
        #expect(model.p == 1)
        #expect(model.$p.isValid)
        #expect(model.q == 10)
        #expect(model.$q.isValid)
    }

    @Test func anOvertakenReentryIntoAPropertyWithNoValueComputesItOnce() {
        let model = SelfInvalidatingReader()
        model.trigger = true
        model.invalidationsLeft = 1
        // The first evaluation invalidates the property and reads it: no value yet, so it is
        // computed once more (which no longer invalidates: 1).
        #expect(model.p == 2)
        #expect(model.$p.evaluationCount == 2)
        #expect(!model.$p.isValid)
        #expect(model.p == 1)
        #expect(model.$p.isValid)
    }

    @Test func aSecondReentryIntoAnOvertakenPropertyWithNoValueIsACycle() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = SelfInvalidatingReader()
            model.trigger = true
            _ = model.p
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                text.contains(
                    "synthetic property cycle: SelfInvalidatingReader.p → SelfInvalidatingReader.p → "
                        + "SelfInvalidatingReader.p"), "\(text)")
        }
    }

    @Test func aReentryThatNothingOvertookIsACycleNamingItsProperties() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = TwoLoop().a
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                text.contains("synthetic property cycle: TwoLoop.a → TwoLoop.b → TwoLoop.a"),
                "\(text)")
        }
    }

    @Test func anObservedFunctionThatWritesWhatItReadIsReportedNamingBoth() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let counter = WritingCounter()
            let observer = TestObserver()
            observer.observe(counter.$next) { _ in }
            withExtendedLifetime(observer) {}
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("WritingCounter.next changed WritingCounter.count"), "\(text)")
        }
    }

    @Test func aLazyReadOfAFunctionThatWritesWhatItReadIsReportedToo() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = WritingCounter().next
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("WritingCounter.next changed WritingCounter.count"), "\(text)")
        }
    }

    /// A re-entry into an evaluation that read a value that is not current (its epoch did
    /// not move) is reported as a cycle, though no state has one.
    @Test func aReentryIntoATaintedEvaluationIsNoCycle() async {
        await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let model = MixModel()
            _ = model.p
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(!text.contains("cycle"), "\(text)")
        }
    }

    @Test func anObservedFunctionThatWritesWhatItReadThroughAPropertyIsReported() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = IndirectWriter()
            let observer = TestObserver()
            observer.observe(model.$next) { _ in }
            withExtendedLifetime(observer) {}
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("IndirectWriter.next changed IndirectWriter.count"), "\(text)")
        }
    }

    @Test func anObservedFunctionThatSetsAHybridItReadIsReported() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = HybridWriter()
            let observer = TestObserver()
            observer.observe(model.$next) { _ in }
            withExtendedLifetime(observer) {}
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("HybridWriter.next changed HybridWriter.hybrid"), "\(text)")
        }
    }

    @Test func anObservedFunctionThatInvalidatesAPropertyItReadIsReported() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Invalidating {
                @ObservableVar var base = 1
                @Synthetic({ (m: Invalidating) in m.base + 1 }) var q: Int
                @Synthetic({ (m: Invalidating) -> Int in
                    let value = m.q + 1
                    m.invalidateQ()
                    return value
                })
                var p: Int
                func invalidateQ() { $q.invalidate() }
            }
            let model = Invalidating()
            let observer = TestObserver()
            observer.observe(model.$p) { _ in }
            withExtendedLifetime(observer) {}
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("Invalidating.p changed Invalidating.q"), "\(text)")
        }
    }
}
