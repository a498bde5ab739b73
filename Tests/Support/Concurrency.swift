import Dispatch
import Foundation
import Synchronization

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

/// A thread started at once on `body`, whose end a test waits for with a limit: a test of "this
/// must not deadlock" then fails rather than hangs (the limit says nothing about speed).
public final class FinishingThread: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)

    /// Starts a thread running `body`.
    public init(_ body: @escaping @Sendable () -> Void) {
        Thread { [done] in
            body()
            done.signal()
        }.start()
    }

    /// Waits until the thread has finished, for at most `seconds`; whether it did.
    public func finished(within seconds: Double) -> Bool {
        done.wait(timeout: .now() + seconds) == .success
    }
}

/// Stops the runs of a function whose numbers (0 first) are in `stops`, until released.
public final class RunGate: @unchecked Sendable {
    private let runs = Atomic<Int>(0)
    private let stops: [Int]
    private let entered: [DispatchSemaphore]
    private let released: [DispatchSemaphore]

    /// A gate that stops the runs numbered in `stops`.
    public init(stops: [Int]) {
        self.stops = stops
        entered = stops.map { _ in DispatchSemaphore(value: 0) }
        released = stops.map { _ in DispatchSemaphore(value: 0) }
    }

    /// Called by the function on each run: stops this run if its number is in `stops`, until
    /// it is released.
    public func pass() {
        let run = runs.wrappingAdd(1, ordering: .sequentiallyConsistent).oldValue
        guard let index = stops.firstIndex(of: run) else { return }
        entered[index].signal()
        released[index].wait()
    }

    /// Waits until run `run` is stopped at the gate.
    public func waitUntilStopped(atRun run: Int) { entered[stops.firstIndex(of: run)!].wait() }
    /// Lets run `run` go on.
    public func release(run: Int) { released[stops.firstIndex(of: run)!].signal() }
}

/// A box that one thread fills and another empties: lets a test drop the last reference to an
/// object on a chosen thread.
public final class Box<Object: AnyObject>: @unchecked Sendable {
    private let lock = NSLock()
    private var object: Object?

    /// A box holding `object`.
    public init(_ object: Object) { self.object = object }

    /// Puts `object` in the box.
    public func put(_ object: Object) {
        lock.lock()
        self.object = object
        lock.unlock()
    }

    /// Takes the object out (nil if empty).
    public func take() -> Object? {
        lock.lock()
        defer { lock.unlock() }
        defer { object = nil }
        return object
    }
}

/// Threads spin until all have arrived, then go together: aligns actions on two threads to
/// within a fraction of a microsecond, to hit narrow windows.
public final class SpinBarrier: Sendable {
    private let arrived = Atomic<Int>(0)

    /// A barrier nobody has reached yet.
    public init() {}

    /// Waits until `parties` threads have called this.
    public func wait(parties: Int) {
        arrived.add(1, ordering: .acquiringAndReleasing)
        while arrived.load(ordering: .acquiring) < parties {}
    }
}

/// Carries a non-Sendable value into the threads of a test that only reads it.
public struct UncheckedBox<Value>: @unchecked Sendable {
    /// The carried value.
    public let value: Value
    /// Carries `value`.
    public init(_ value: Value) { self.value = value }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// A POSIX thread running a closure. Joining it returns once the thread has ended, its
/// thread-local destructors included (a `Thread` or a dispatch queue cannot be joined).
public struct JoinableThread {
    private let handle: pthread_t

    /// Starts a thread running `body`.
    public init(_ body: @escaping () -> Void) {
        final class Body {
            let run: () -> Void
            init(_ run: @escaping () -> Void) { self.run = run }
        }
        let argument = Unmanaged.passRetained(Body(body)).toOpaque()
        #if canImport(Darwin)
            var thread: pthread_t?
        #else
            var thread = pthread_t()
        #endif
        let status = pthread_create(
            &thread, nil,
            { argument in
                #if canImport(Darwin)
                    Unmanaged<Body>.fromOpaque(argument).takeRetainedValue().run()
                #else
                    Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue().run()
                #endif
                return nil
            }, argument)
        precondition(status == 0, "pthread_create failed (\(status))")
        #if canImport(Darwin)
            handle = thread!
        #else
            handle = thread
        #endif
    }

    /// Waits until the thread has ended.
    public func join() {
        pthread_join(handle, nil)
    }
}

/// Runs `body` on a new thread and returns once the thread has ended, its thread-local
/// destructors included.
public func runOnThreadAndJoin(_ body: @escaping () -> Void) {
    JoinableThread(body).join()
}

/// A count that any thread may add to.
public final class AtomicCount: Sendable {
    private let count = Atomic<Int>(0)

    /// A count of zero.
    public init() {}

    /// Adds one.
    public func increment() { count.add(1, ordering: .relaxed) }

    /// The count so far.
    public var value: Int { count.load(ordering: .acquiring) }
}

/// Which thread runs: comparable across threads, for tests of where a handler ran.
public enum ThreadIdentity {
    /// The calling thread's identity.
    public static var current: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }
}

/// Runs `call` on this thread while another thread runs `step` for each of `1...total`, once
/// `started` is signalled (if given), counting each step in `made`; stops the other thread when
/// `call` returned, and returns how many steps it had made by then, or nil if `call` and the
/// other thread did not end within `seconds` (a deadlock). For "a call is not held by another
/// thread's work for as long as that work comes": the count is below `total` then.
public func stepsMadeElsewhere(
    total: Int, made: AtomicCount, startingAfter started: DispatchSemaphore? = nil,
    within seconds: Double = 60, step: @escaping @Sendable (Int) -> Void,
    during call: @escaping @Sendable () -> Void
) -> Int? {
    let madeByThen = Atomic<Int>(-1)
    let finished = finishes(within: seconds) {
        let stop = Atomic<Bool>(false)
        let other = JoinableThread {
            started?.wait()
            for index in 1...total {
                if stop.load(ordering: .relaxed) { break }
                step(index)
                made.increment()
            }
        }
        call()
        madeByThen.store(made.value, ordering: .relaxed)
        stop.store(true, ordering: .relaxed)
        other.join()
    }
    return finished ? madeByThen.load(ordering: .relaxed) : nil
}

/// Work that takes a while (some microseconds), for a handler that must be slower than a send.
/// Its input and result go through an atomic, so that an optimized build cannot fold it away.
public func busyWork() {
    var x = busyWorkState.load(ordering: .relaxed)
    for step in 0..<20_000 { x = x &* 31 &+ step }
    busyWorkState.store(x, ordering: .relaxed)
}

private let busyWorkState = Atomic<Int>(1)
