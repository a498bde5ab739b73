import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge

/// Stops the runs of a function whose numbers (0 first) are in `stops`, until released.
private final class RunGate: @unchecked Sendable {
    private let runs = Atomic<Int>(0)
    private let stops: [Int]
    private let entered: [DispatchSemaphore]
    private let released: [DispatchSemaphore]

    init(stops: [Int]) {
        self.stops = stops
        entered = stops.map { _ in DispatchSemaphore(value: 0) }
        released = stops.map { _ in DispatchSemaphore(value: 0) }
    }

    func pass() {
        let run = runs.wrappingAdd(1, ordering: .sequentiallyConsistent).oldValue
        guard let index = stops.firstIndex(of: run) else { return }
        entered[index].signal()
        released[index].wait()
    }

    func waitUntilStopped(atRun run: Int) { entered[stops.firstIndex(of: run)!].wait() }
    func release(run: Int) { released[stops.firstIndex(of: run)!].signal() }
}

private final class AsideModel: @unchecked Sendable {
    let gate: RunGate
    init(stops: [Int]) { gate = RunGate(stops: stops) }
    @ObservableVar var base = 1
    @Synthetic({ (model: AsideModel) in
        let value = model.base * 10
        model.gate.pass()
        return value
    })
    var slow: Int
    @Synthetic({ (model: AsideModel) in model.slow + 1 }) var reader: Int
}

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

/// Runs `body` on a new thread; `finished(within:)` waits for it.
private final class ProofThread: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    init(_ body: @escaping @Sendable () -> Void) {
        Thread { [done] in
            body()
            done.signal()
        }.start()
    }
    func finished(within seconds: Double) -> Bool {
        done.wait(timeout: .now() + seconds) == .success
    }
}

/// A value computed aside (by a thread inside an evaluation, while another thread holds the
/// property) is never what a result is stored from: a check through it sees the new value, and
/// nothing stays valid on it once its sources change.
@Suite("Synthetic properties: values computed aside (concurrency)", .serialized)
struct SyntheticAsideConcurrencyTests {
    /// A check that refreshes a source computed aside compares the stored version (the old
    /// value's) and finds nothing moved, though the aside computed a new value.
    @Test func aCheckThroughAnAsideSeesTheNewValue() {
        let model = AsideModel(stops: [1])
        let box = UncheckedBox(model)
        #expect(model.reader == 11)
        model.base = 2  // slow invalid, reader may be stale
        let holder = ProofThread { _ = box.value.slow }  // run 1: holds slow
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
        let model = AsideModel(stops: [0])
        let box = UncheckedBox(model)
        let holder = ProofThread { _ = box.value.slow }  // run 0: holds slow
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
        let holder = ProofThread { _ = box.value.p }  // run 1: reads flag, y; stops
        model.gate.waitUntilStopped(atRun: 1)
        model.flag = true  // overtakes run 1
        model.z = 100  // r must compute
        let got = Recording<Int>()
        let inside = ProofThread { got.append(box.value.r) }  // p aside, run 2: flag, x; stops
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
