import Dispatch
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge

/// `total` reads `part`, whose function can be held at a gate. No cycle.
final class HandOver: @unchecked Sendable {
    @ObservableVar var input = 1
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let holdAtGate = Atomic<Bool>(false)
    @Synthetic({ (h: HandOver) in
        let value = h.input
        if h.holdAtGate.exchange(false, ordering: .sequentiallyConsistent) {
            h.entered.signal()
            h.gate.wait()
        }
        return value
    })
    var part: Int
    @Synthetic({ (h: HandOver) in h.part * 2 }) var total: Int
}

@Suite("Synthetic properties: cycles across threads (concurrency)", .serialized)
struct SyntheticCycleConcurrencyTests {
    /// Found by the adversarial round (an intermittent fatal error in stress tests, also before
    /// it): thread A, computing `total`, waits for `part`, which thread B computes. B finishes
    /// `part`, then reads `total` and waits for A. If A looks for a cycle from what it read
    /// before B finished, it finds B waiting for A — no cycle, since B no longer computes
    /// `part`. Gates hold A between reading who computes `part` and looking for a cycle.
    @Test("threads: a thread that finished what another waits for, then waits for it, is no cycle")
    func handOverIsNoCycle() {
        let model = HandOver()
        let part = ObjectIdentifier(model.$part)
        let total = ObjectIdentifier(model.$total)
        let aChecks = DispatchSemaphore(value: 0)
        let aMayCheck = DispatchSemaphore(value: 0)
        let bWaits = DispatchSemaphore(value: 0)
        let heldOnce = Atomic<Bool>(false)
        SyntheticCycle.setCheckHook { node in
            // A, about to look for a cycle while waiting for `part`: held there once.
            guard node == part, !heldOnce.exchange(true, ordering: .sequentiallyConsistent)
            else { return }
            aChecks.signal()
            aMayCheck.wait()
        }
        SyntheticCycle.setWaitHook { node in
            if node == total { bWaits.signal() }
        }
        defer {
            SyntheticCycle.setCheckHook(nil)
            SyntheticCycle.setWaitHook(nil)
        }
        model.holdAtGate.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let results = Recording<String>()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {  // B
            results.append("B part \(box.value.part)")  // computes `part`, held at the gate
            results.append("B total \(box.value.total)")  // then waits for A's evaluation
            done.signal()
        }
        model.entered.wait()
        DispatchQueue.global().async {  // A
            results.append("A total \(box.value.total)")  // waits for B's evaluation of `part`
            done.signal()
        }
        aChecks.wait()  // A read that B computes `part`
        model.gate.signal()  // B finishes `part`, reads `total`, which A computes
        bWaits.wait()
        aMayCheck.signal()  // A looks for a cycle: there is none
        done.wait()
        done.wait()
        #expect(Set(results.elements) == ["B part 1", "A total 2", "B total 2"])
        #expect(model.$part.evaluationCount == 1)
        #expect(model.$total.evaluationCount == 1)
    }
}
