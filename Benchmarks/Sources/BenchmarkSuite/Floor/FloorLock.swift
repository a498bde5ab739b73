import Synchronization

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A property's lock, with the uncontended cost of Herald's internal Lock type where that keeps
/// its word inline: a compare-exchange to take it, a store to let it go; a waiter yields.
/// Not re-entrant; no user code runs under it.
struct FloorLock: ~Copyable, @unchecked Sendable {
    /// 0 when free, 1 when held.
    let word = Atomic<UInt32>(0)

    /// Runs `body` with the lock held.
    @inline(__always)
    borrowing func withLock<Result>(_ body: () -> Result) -> Result {
        if !word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            waitForHolder()
        }
        defer { word.store(0, ordering: .releasing) }
        return body()
    }

    /// Takes the lock once its holder lets it go, yielding meanwhile.
    @inline(never)
    borrowing func waitForHolder() {
        while word.load(ordering: .relaxed) != 0
            || !word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
        {
            sched_yield()
        }
    }
}
