import Dispatch
import Foundation

/// Runs `body` on `threads` new threads that start together, passing each its index, and returns
/// when all have finished. (`DispatchQueue.concurrentPerform` would use at most one thread per
/// core, which on a 2-core machine is too little contention.)
func concurrently(threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
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
final class NSLockLike: @unchecked Sendable {
    private let lock = NSLock()
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
