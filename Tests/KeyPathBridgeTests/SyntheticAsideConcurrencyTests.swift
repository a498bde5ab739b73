import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge

private final class DropModel: @unchecked Sendable {
    let gate = RunGate(stops: [1, 2])
    @ObservableVar var flag = true
    @ObservableVar var x = 0
    @ObservableVar var y = 0
    @ObservableVar var z = 0
    @Synthetic({ (model: DropModel) in
        let value = model.flag ? model.x : model.y
        model.gate.pass()
        return value
    })
    var p: Int
    @Synthetic({ (model: DropModel) in model.p + model.z }) var r: Int
}

/// A value computed aside (by a thread inside an evaluation, while another thread holds the
/// property) is never what a result is stored from: a check through it sees the new value, and
/// nothing stays valid on it once its sources change.
@Suite("Synthetic properties: values computed aside (concurrency)", .serialized)
struct SyntheticAsideConcurrencyTests {
    /// A check that refreshes a source computed aside compares the stored version (the old
    /// value's) and finds nothing moved, though the aside computed a new value.
    @Test func aCheckThroughAnAsideSeesTheNewValue() {
        let model = GatedSlow(stops: [1])
        let box = UncheckedBox(model)
        #expect(model.reader == 11)
        model.base = 2  // slow invalid, reader may be stale
        let holder = FinishingThread { _ = box.value.slow }  // run 1: holds slow
        model.gate.waitUntilStopped(atRun: 1)
        // This thread checks reader; slow is held elsewhere: computed aside (run 2), 20.
        let got = model.reader
        #expect(got == 21, "the check found no version moved: reader kept 11")
        model.gate.release(run: 1)
        #expect(holder.finished(within: 10))
        #expect(model.slow == 20)
        #expect(model.reader == 21, "reader stays valid with a value from base 1")
    }

    /// A value stored from an aside while the source is invalid is not told of a later
    /// change of the source (a stale property tells nothing downstream).
    @Test func aValueComputedFromAnAsideHearsOfALaterChange() {
        let model = GatedSlow(stops: [0])
        let box = UncheckedBox(model)
        let holder = FinishingThread { _ = box.value.slow }  // run 0: holds slow
        model.gate.waitUntilStopped(atRun: 0)
        #expect(model.reader == 11)  // slow computed aside (run 1); reader stored
        model.base = 2
        #expect(!model.$reader.isValid, "reader is valid although what it read changed")
        model.gate.release(run: 0)
        #expect(holder.finished(within: 10))
        #expect(model.reader == 21, "lost update: reader keeps 11 with base 2")
    }

    /// The holder's evaluation drops a source that an aside running meanwhile read, and
    /// unsubscribes the property from it: a change of that source during the aside no longer
    /// moves the epoch, and the aside's value counts as current.
    @Test func aSourceThatAnAsideReadStaysSubscribedWhileItRuns() {
        let model = DropModel()
        let box = UncheckedBox(model)
        #expect(model.r == 0)  // p (run 0) read flag and x
        model.flag = false
        let holder = FinishingThread { _ = box.value.p }  // run 1: reads flag, y; stops
        model.gate.waitUntilStopped(atRun: 1)
        model.flag = true  // overtakes run 1
        model.z = 100  // r must compute
        let got = Recording<Int>()
        let inside = FinishingThread { got.append(box.value.r) }  // p aside, run 2: flag, x; stops
        model.gate.waitUntilStopped(atRun: 2)
        model.gate.release(run: 1)
        #expect(holder.finished(within: 10))  // dropped x: unsubscribed p from it
        model.x = 5  // during the aside, which read x (0)
        model.gate.release(run: 2)
        #expect(inside.finished(within: 10))
        #expect(model.p == 5)
        #expect(model.r == 105, "r stored from the aside's p = 0, though x changed meanwhile")
    }

}
