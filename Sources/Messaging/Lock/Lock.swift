import Synchronization

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The one lock Herald uses. Every critical section it guards is a handful of instructions
/// (snapshot a list, append to a queue), and no user code ever runs inside one.
///
/// - On Apple platforms: `os_unfair_lock` at a heap address.
/// - Elsewhere: a word in an `Atomic<UInt32>` stored inline in the owner. Locking is one
///   compare-exchange (acquiring), unlocking one store (releasing); under contention it spins
///   briefly, then yields the processor until the holder is done. It allocates nothing, and
///   the thread sanitizer sees its happens-before edges, because the atomics are compiled in this
///   module. (Why not `Synchronization.Mutex`: on Linux its futex path is invisible to the
///   sanitizer, which then reports false races on correctly locked state. A heap
///   `pthread_mutex_t` is correct too, but costs a call, two atomic read-modify-writes and an
///   allocation per lock; measured in Docs/Performance.md.)
///
/// The owner keeps the protected state in its own stored properties (marked
/// `@exclusivity(unchecked)`, since the lock, not the runtime, guarantees exclusive access) and
/// touches them only inside ``withLock(_:)``. Never call user code inside `withLock`. Not
/// re-entrant.
@usableFromInline
package struct Lock: ~Copyable, @unchecked Sendable {
    #if canImport(Darwin)
        @usableFromInline let primitive: UnsafeMutablePointer<os_unfair_lock>

        @usableFromInline package init() {
            primitive = .allocate(capacity: 1)
            primitive.initialize(to: os_unfair_lock())
        }

        deinit {
            primitive.deinitialize(count: 1)
            primitive.deallocate()
        }

        /// Runs `body` with the lock held.
        @inlinable @inline(__always)
        package borrowing func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
            os_unfair_lock_lock(primitive)
            defer { os_unfair_lock_unlock(primitive) }
            return try body()
        }
    #else
        /// 0 when free, 1 when held.
        @usableFromInline let word = Atomic<UInt32>(0)

        @usableFromInline package init() {}

        /// Runs `body` with the lock held.
        @inlinable @inline(__always)
        package borrowing func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
            if !word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
                lockContended()
            }
            defer { word.store(0, ordering: .releasing) }
            return try body()
        }

        /// Waits for the holder: a short spin (the critical sections are tiny), then yields.
        @usableFromInline
        borrowing func lockContended() {
            var attempts = 0
            while true {
                if word.load(ordering: .relaxed) == 0,
                    word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
                {
                    return
                }
                attempts += 1
                if attempts > 100 { sched_yield() }
            }
        }
    #endif
}
