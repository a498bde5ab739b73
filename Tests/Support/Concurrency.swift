import Dispatch
import Foundation

/// Runs `body` on `threads` new threads that start together, passing each its index, and returns
/// when all have finished. (`DispatchQueue.concurrentPerform` would use at most one thread per
/// core, which on a 2-core machine is too little contention.)
public func concurrently(threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    for index in 0..<threads {
        let thread = Thread {
            ready.signal()
            go.wait()
            body(index)
            done.signal()
        }
        thread.start()
    }
    for _ in 0..<threads { ready.wait() }
    for _ in 0..<threads { go.signal() }
    for _ in 0..<threads { done.wait() }
}

/// A tiny lock for test helpers (Foundation's `NSLock` with a closure API).
public final class NSLockLike: @unchecked Sendable {
    /// Creates an unlocked lock.
    public init() {}
    private let lock = NSLock()
    /// Runs `body` with the lock held.
    public func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

/// Runs `body` on a new thread and returns whether it finished within `seconds`. Only for tests
/// of "this must not deadlock": the limit is generous and says nothing about speed.
public func finishes(within seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread {
        body()
        done.signal()
    }.start()
    return done.wait(timeout: .now() + seconds) == .success
}
