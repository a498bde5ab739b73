#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The one lock Herald uses: a heap-allocated `os_unfair_lock` on Apple platforms and a
/// `pthread_mutex_t` elsewhere.
///
/// Why not `Synchronization.Mutex`: on Linux its futex calls are invisible to the thread
/// sanitizer, which then reports false races on correctly locked state. A mutex at a stable heap
/// address is seen by TSan, and being heap-allocated it never moves with its owner.
///
/// The owner keeps the protected state in its own stored properties (marked
/// `@exclusivity(unchecked)`, since the lock, not the runtime, guarantees exclusive access) and
/// touches them only inside ``withLock(_:)``. Never call user code inside `withLock`.
@usableFromInline
package struct Lock: ~Copyable, @unchecked Sendable {
    #if canImport(Darwin)
        @usableFromInline typealias Primitive = os_unfair_lock
    #else
        @usableFromInline typealias Primitive = pthread_mutex_t
    #endif

    @usableFromInline let primitive: UnsafeMutablePointer<Primitive>

    @usableFromInline package init() {
        primitive = .allocate(capacity: 1)
        #if canImport(Darwin)
            primitive.initialize(to: os_unfair_lock())
        #else
            primitive.initialize(to: pthread_mutex_t())
            let result = pthread_mutex_init(primitive, nil)
            precondition(result == 0, "pthread_mutex_init failed: \(result)")
        #endif
    }

    deinit {
        #if !canImport(Darwin)
            pthread_mutex_destroy(primitive)
        #endif
        primitive.deinitialize(count: 1)
        primitive.deallocate()
    }

    /// Runs `body` with the lock held. Not re-entrant.
    @inlinable @inline(__always)
    package borrowing func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        #if canImport(Darwin)
            os_unfair_lock_lock(primitive)
            defer { os_unfair_lock_unlock(primitive) }
        #else
            pthread_mutex_lock(primitive)
            defer { pthread_mutex_unlock(primitive) }
        #endif
        return try body()
    }
}
