import Foundation
import HeraldTestSupport
import Testing

@testable import KeyPathBridge

/// A property that invalidates itself during its evaluation (overtaking it), then reads itself.
private final class SelfOvertaking {
    @ObservableVar var trigger = false
    /// How many evaluations may still invalidate the property (-1: every one).
    nonisolated(unsafe) var invalidationsLeft = -1
    @Synthetic({ (model: SelfOvertaking) -> Int in
        guard model.trigger, model.invalidationsLeft != 0 else { return 1 }
        model.invalidationsLeft -= 1
        model.invalidateP()  // overtakes this evaluation
        return model.readP() + 1  // a re-entry: the last value, or computed once if there is none
    })
    var p: Int
    @Synthetic({ (model: SelfOvertaking) in model.p * 10 }) var q: Int

    func invalidateP() { $p.invalidate() }
    func readP() -> Int { p }
}

private final class Counter {
    @ObservableVar var count = 0
    @Synthetic({ (counter: Counter) in
        let n = counter.count
        counter.count = n + 1
        return n
    })
    var next: Int
}

private final class Loop {
    @Synthetic({ (loop: Loop) in loop.b + 1 }) var a: Int
    @Synthetic({ (loop: Loop) in loop.a + 1 }) var b: Int
}

/// What a re-entry is: re-entering a property this thread is computing is a cycle, unless an
/// invalidation or set overtook that computation; then the read gets the last value (or
/// computes it once), and nothing computed from it is stored. A function that writes what it
/// read is reported like a cycle, never retried.
@Suite("Synthetic properties: re-entry and cycles")
struct SyntheticReentryTests {
    @Test func anOvertakenReentryGetsTheLastValueAndNothingComputedFromItIsStored() {
        let model = SelfOvertaking()
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
        let model = SelfOvertaking()
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
            let model = SelfOvertaking()
            model.trigger = true
            _ = model.p
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                text.contains(
                    "synthetic property cycle: SelfOvertaking.p → SelfOvertaking.p → "
                        + "SelfOvertaking.p"), "\(text)")
        }
    }

    @Test func aReentryThatNothingOvertookIsACycleNamingItsProperties() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Loop().a
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("synthetic property cycle: Loop.a → Loop.b → Loop.a"), "\(text)")
        }
    }

    @Test func anObservedFunctionThatWritesWhatItReadIsReportedNamingBoth() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let counter = Counter()
            let observer = TestObserver()
            observer.observe(counter.$next) { _ in }
            withExtendedLifetime(observer) {}
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("Counter.next wrote Counter.count"), "\(text)")
        }
    }

    @Test func aLazyReadOfAFunctionThatWritesWhatItReadIsReportedToo() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Counter().next
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("Counter.next wrote Counter.count"), "\(text)")
        }
    }
}
