import Dispatch
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge

@Suite("Synthetic properties: cycles across threads (concurrency)", .serialized)
struct SyntheticCycleConcurrencyTests {
    /// Found by the adversarial round (an intermittent fatal error in stress tests, also before
    /// it): thread A, computing `label`, waits for `positive`, which thread B computes. B
    /// finishes `positive`, then reads `label` and waits for A. If A looks for a cycle from what
    /// it read before B finished, it finds B waiting for A — no cycle, since B no longer
    /// computes `positive`. Gates hold A between reading who computes `positive` and looking for
    /// a cycle. (`HeldCheck` is in SyntheticHybridConcurrencyTests.)
    @Test("threads: a thread that finished what another waits for, then waits for it, is no cycle")
    func handOverIsNoCycle() {
        let model = HeldCheck()
        let positive = ObjectIdentifier(model.$positive)
        let label = ObjectIdentifier(model.$label)
        let aChecks = DispatchSemaphore(value: 0)
        let aMayCheck = DispatchSemaphore(value: 0)
        let bWaits = DispatchSemaphore(value: 0)
        let heldOnce = Atomic<Bool>(false)
        SyntheticCycle.setCheckHook { node in
            // A, about to look for a cycle while waiting for `positive`: held there once.
            guard node == positive, !heldOnce.exchange(true, ordering: .sequentiallyConsistent)
            else { return }
            aChecks.signal()
            aMayCheck.wait()
        }
        SyntheticCycle.setWaitHook { node in
            if node == label { bWaits.signal() }
        }
        defer {
            SyntheticCycle.setCheckHook(nil)
            SyntheticCycle.setWaitHook(nil)
        }
        model.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let results = Recording<String>()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {  // B
            results.append("B \(box.value.positive)")  // computes `positive`, held at the gate
            results.append("B \(box.value.label)")  // then waits for A's evaluation of `label`
            done.signal()
        }
        model.entered.wait()
        DispatchQueue.global().async {  // A
            results.append("A \(box.value.label)")  // waits for B's evaluation of `positive`
            done.signal()
        }
        aChecks.wait()  // A read that B computes `positive`
        model.hold.store(false, ordering: .sequentiallyConsistent)
        model.gate.signal()  // B finishes `positive`, reads `label`, which A computes
        bWaits.wait()
        aMayCheck.signal()  // A looks for a cycle: there is none
        done.wait()
        done.wait()
        #expect(Set(results.elements) == ["B true", "A yes", "B yes"])
        #expect(model.$positive.evaluationCount == 1)
        #expect(model.$label.evaluationCount == 1)
    }
}
