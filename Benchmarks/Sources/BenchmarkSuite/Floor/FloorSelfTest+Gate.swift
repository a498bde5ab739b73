import Synchronization

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension FloorSelfTest {
    /// Starts the self-test's threads together and waits for them to end, through atomics (which
    /// the thread sanitizer sees).
    final class Gate: Sendable {
        /// How many threads arrived.
        private let arrived = Atomic<Int>(0)
        /// How many threads left.
        private let left = Atomic<Int>(0)

        /// This thread arrived: waits until `threads` have.
        func arriveAndWait(for threads: Int) {
            arrived.add(1, ordering: .acquiringAndReleasing)
            while arrived.load(ordering: .acquiring) < threads { sched_yield() }
        }

        /// This thread is done.
        func leave() {
            left.add(1, ordering: .releasing)
        }

        /// Waits until `threads` threads are done.
        func waitUntilLeft(by threads: Int) {
            while left.load(ordering: .acquiring) < threads { usleep(1_000) }
        }
    }
}
