import RuntimeShims
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
///   compare-exchange (acquiring), unlocking one store (releasing). A waiter spins briefly, then
///   yields, then sleeps with a growing pause (up to a millisecond), so a holder that was
///   preempted always gets to run, whatever the threads' priorities. It allocates nothing, and
///   the thread sanitizer sees its happens-before edges, because the atomics are compiled in this
///   module. (Why not `Synchronization.Mutex`: on Linux its futex path is invisible to the
///   sanitizer, which then reports false races on correctly locked state. A heap
///   `pthread_mutex_t` is correct too, but costs a call, two atomic read-modify-writes and an
///   allocation per lock; measured in Docs/Performance.md.) In debug builds the lock records its
///   holder and, when the same thread locks it again, traps (after a couple of seconds) instead
///   of waiting forever.
///
/// Optimized code is the code to reason about here: see the comment at the unlocking store for
/// why it is preceded by a call the optimizer cannot see into.
///
/// The owner keeps the protected state in its own stored properties (marked
/// `@exclusivity(unchecked)`, since the lock, not the runtime, guarantees exclusive access) and
/// touches them only inside ``withLock(_:)``. Never call user code inside `withLock`, and never
/// release there what might be the last reference to an object whose `deinit` locks. Not
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
            os_unfair_lock_lock(primitive)  // traps on re-entry by itself
            defer { os_unfair_lock_unlock(primitive) }
            return try body()
        }
    #else
        /// 0 when free, 1 when held.
        @usableFromInline let word = Atomic<UInt32>(0)
        #if DEBUG
            /// The holding thread, to trap re-entry.
            @usableFromInline let holder = Atomic<UInt>(0)
        #endif

        @usableFromInline package init() {}

        /// Runs `body` with the lock held.
        @inlinable @inline(__always)
        package borrowing func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
            if !word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
                lockContended()
            }
            #if DEBUG
                holder.store(Self.currentThread, ordering: .relaxed)
            #endif
            defer {
                #if DEBUG
                    holder.store(0, ordering: .relaxed)
                #endif
                // A compiler barrier first. The releasing store orders memory accesses, but
                // Swift's optimizer does not count it as able to release an object, so it moved
                // the retain of a reference that `body` read (the old value of a variable, a
                // snapshot of a list) to after the store: in optimized builds another thread
                // could release the object before this one retained it, a use after free. Nor
                // may a release from after the unlocking move into the critical section, where
                // a `deinit` that locks would wait for this very lock. An opaque call (it may
                // retain or release anything, as far as the optimizer knows) pins both in place,
                // whatever `body` is. Checked by the stress tests that CI runs in release builds.
                herald_lock_barrier()
                word.store(0, ordering: .releasing)
            }
            return try body()
        }

        /// Waits for the holder: spins briefly (critical sections are tiny), then yields, then
        /// sleeps with a growing pause.
        @usableFromInline
        borrowing func lockContended() {
            var attempts = 0
            var pause: UInt32 = 1
            while true {
                if word.load(ordering: .relaxed) == 0,
                    word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
                {
                    return
                }
                attempts += 1
                #if DEBUG
                    // After about two seconds of waiting (the backoff is capped at 1 ms), a lock
                    // whose holder is this very thread is a re-entry, which would wait forever.
                    // (Checked only so late because a new thread may reuse a dead thread's id
                    // and briefly see that thread's stale holder value.)
                    if attempts == 2_200, holder.load(ordering: .acquiring) == Self.currentThread {
                        preconditionFailure(
                            "Herald: a lock was taken again by the thread that holds it. Code "
                                + "that runs under a Herald lock (such as a variable's Value.==) "
                                + "touched the same object.")
                    }
                #endif
                if attempts < 64 { continue }
                if attempts < 128 {
                    sched_yield()
                } else {
                    usleep(pause)
                    pause = min(pause * 2, 1_000)
                }
            }
        }

        #if DEBUG
            @usableFromInline static var currentThread: UInt { UInt(pthread_self()) }
        #endif
    #endif
}
