#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One thread's wait for one event, blocking (no spinning), for at most a given time: the
/// thread calls ``park(forAtMost:)``, and another thread calls ``unpark()`` once. Either may
/// come first. Made for one wait; used where a sender waits to be handed a messenger's
/// delivering role (see `DeliveryTurn`), which is rare, so it may allocate.
///
/// A POSIX mutex and condition variable, which the thread sanitizer sees; on Linux the
/// condition variable measures time on the monotonic clock, so a change of the wall clock
/// neither shortens nor lengthens a wait.
@usableFromInline
package final class Parker: @unchecked Sendable {
    // `mutex` protects `isUnparked`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var isUnparked = false

    @usableFromInline package init() {
        pthread_mutex_init(mutex, nil)
        #if canImport(Darwin)
            pthread_cond_init(condition, nil)
        #else
            var attributes = pthread_condattr_t()
            pthread_condattr_init(&attributes)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
            pthread_cond_init(condition, &attributes)
            pthread_condattr_destroy(&attributes)
        #endif
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Blocks until ``unpark()`` was called (returns at once if it was), or until
    /// `nanoseconds` passed. True if it was unparked.
    @usableFromInline package func park(forAtMost nanoseconds: Int) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        #if canImport(Darwin)
            var timeout = timespec(
                tv_sec: nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
            while !isUnparked {
                // Relative: a spurious wake-up (rare) starts the whole time again. The time
                // only bounds a wait for another thread's progress, so that is harmless.
                if pthread_cond_timedwait_relative_np(condition, mutex, &timeout) == ETIMEDOUT {
                    break
                }
            }
        #else
            var deadline = timespec()
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            let total = Int(deadline.tv_nsec) + nanoseconds
            deadline.tv_sec += total / 1_000_000_000
            deadline.tv_nsec = total % 1_000_000_000
            while !isUnparked {
                if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
            }
        #endif
        return isUnparked
    }

    /// Blocks until ``unpark()`` was called (returns at once if it was).
    @usableFromInline package func park() {
        pthread_mutex_lock(mutex)
        while !isUnparked { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }

    /// Lets the parked thread go on (or the thread that parks next return at once).
    @usableFromInline package func unpark() {
        pthread_mutex_lock(mutex)
        isUnparked = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }
}
