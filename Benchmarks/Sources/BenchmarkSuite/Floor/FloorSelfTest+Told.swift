import Synchronization

extension FloorSelfTest {
    /// What an observer's handler was told: how many times, the last value and the largest
    /// (handlers may run on several threads at once).
    final class Told: Sendable {
        /// Storage of `count`.
        private let told = Atomic<Int>(0)
        /// Storage of `last`.
        private let lastValue = Atomic<Int>(0)
        /// Storage of `largest`.
        private let largestValue = Atomic<Int>(Int.min)

        /// How many times the handler ran.
        var count: Int { told.load(ordering: .acquiring) }
        /// The value the handler was last told (in the order the handlers stored it).
        var last: Int { lastValue.load(ordering: .acquiring) }
        /// The largest value the handler was told (`Int.min` before any).
        var largest: Int { largestValue.load(ordering: .acquiring) }

        /// The handler was told `value`.
        func record(_ value: Int) {
            lastValue.store(value, ordering: .releasing)
            var current = largestValue.load(ordering: .relaxed)
            while current < value {
                let (exchanged, original) = largestValue.compareExchange(
                    expected: current, desired: value, ordering: .acquiringAndReleasing)
                if exchanged { break }
                current = original
            }
            told.add(1, ordering: .releasing)
        }
    }
}
