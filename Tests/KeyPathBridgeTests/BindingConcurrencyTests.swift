import Dispatch
import HeraldTestSupport
import KeyPathBridge
import Synchronization
import Testing

/// Two-way bindings under writes from several threads: both sides end equal.
@Suite("Bindings: concurrency")
struct BindingConcurrencyTests {
    @Test func writesToBothSidesFromTwoThreadsEndEqual() {
        for round in 0..<200 {
            let a = Var(0)
            let b = Var(0)
            let binding = bindTwoWay(a, b)
            concurrently(threads: 2) { thread in
                for step in 1...50 {
                    if thread == 0 { a.value = step * 2 } else { b.value = step * 2 + 1 }
                }
            }
            // Every delivery ended before the writing threads did (a send returns once what it
            // delivers is delivered, and the threads delivered).
            #expect(a.value == b.value, "round \(round)")
            withExtendedLifetime(binding) {}
        }
    }

    /// A thread that keeps changing `a` does not hold the thread that syncs the binding (here the
    /// one calling `bindTwoWay`) for as long as it changes `a`.
    @Test func aBindingsFirstSyncReturnsWhileAnotherThreadKeepsChangingASide() {
        let a = Var(-1)
        let b = Var(0)
        let observer = TestObserver()
        let started = DispatchSemaphore(value: 0)
        let sent = AtomicCount()
        let bCalls = AtomicCount()
        observer.observe(b) { update in
            if update.new == -1 {
                started.signal()
                while sent.value < 8 {}
            }
            for _ in 0..<20 { busyWork() }  // a slow observer of b (a UI, say)
            bCalls.increment()
        }
        let total = 300_000
        let sentByThen = stepsMadeElsewhere(
            total: total, made: sent, startingAfter: started, step: { a.value = $0 },
            during: {
                let binding = bindTwoWay(a, b)  // syncs a -> b on this thread
                withExtendedLifetime(binding) {}
            })
        #expect(sentByThen != nil)
        #expect(
            sentByThen ?? total < total,
            "bindTwoWay returned only after the other thread stopped (\(bCalls.value) syncs)")
    }
}
