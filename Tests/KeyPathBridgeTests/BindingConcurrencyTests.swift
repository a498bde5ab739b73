import HeraldTestSupport
import KeyPathBridge
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
}
