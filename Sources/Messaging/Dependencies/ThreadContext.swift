import RuntimeShims
import Synchronization

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What one thread keeps for dependency tracking: its open frames and its queued propagation.
/// Used by its thread only, so its properties need no exclusivity checks at run time.
final class ThreadContext {
    /// The innermost open frame (the others are its parents), set with `setTop(_:)`.
    /// Not retained: an open frame is kept alive by the evaluation that opened it.
    @exclusivity(unchecked) private(set) var top: Unmanaged<EvaluationFrame>?

    /// Makes `frame` the innermost open frame, here and in the thread-local variable that reads
    /// look it up in (see `DependencyTracking.currentFrame`). Only on the thread itself.
    @inline(__always)
    func setTop(_ frame: Unmanaged<EvaluationFrame>?) {
        top = frame
        herald_set_thread_top_frame(frame?.toOpaque())
    }
    @exclusivity(unchecked) var queued: [any PropagationWork] = []
    @exclusivity(unchecked) var isPropagating = false
    /// What joined the thread's outermost batch (see `batch(_:)`), to run when it ends. (How many
    /// batches the thread is inside is a C thread-local variable: `herald_thread_batch_depth`.)
    @exclusivity(unchecked) var joinedBatch: [(key: ObjectIdentifier, end: () -> Void)] = []
    /// Delivery turns the thread owes (see `OwedTurns`), and whether it is paying them.
    @exclusivity(unchecked) var owedTurns: [any DeliveryTurns] = []
    @exclusivity(unchecked) var isPayingOwedTurns = false
    /// What the thread brings up to date, outermost first (see `DependencyTracking.beginWork`).
    @exclusivity(unchecked) var work = WorkStack()
    /// A property to wait for once the thread holds nothing (see `DependencyTracking.oweWait`).
    @exclusivity(unchecked) var owedWait: AnyObject?
    /// What marking under a source's lock loaded, released after unlocking (see
    /// `markWhileLocked`).
    @exclusivity(unchecked) var keptAlive = RetainedObjects()
    /// Where the work queued by the last `markWhileLocked` starts.
    @exclusivity(unchecked) var markedFrom = 0
    /// The marking running on the thread (see `Dependent.sourceChanged(definitely:marking:)`),
    /// 0 if none.
    @exclusivity(unchecked) var marking: UInt64 = 0
    /// The next marking's identity, and how many of the block it is in are left.
    @exclusivity(unchecked) private var nextMarking: UInt64 = 0
    @exclusivity(unchecked) private var markingsLeft: UInt64 = 0
    /// How many blocks of identities for markings the threads took, in the process.
    private static let markingBlocks = Atomic<UInt64>(0)
    private static let markingBlockSize: UInt64 = 1_024

    /// Starts a marking (with an identity no other has, taken from this thread's block),
    /// until `endMarking(_:)`, to which it returns what to pass. (A marking runs no user code,
    /// but a release during it may run a deinit that starts another: that one has an identity
    /// of its own.)
    @inline(__always)
    func beginMarking(of source: ObjectIdentifier?) -> Marking {
        if _slowPath(markingsLeft == 0) { takeMarkingBlock() }
        markingsLeft -= 1
        let outer = Marking(id: marking, source: markingSource)
        marking = nextMarking
        markingSource = source
        nextMarking += 1
        return outer
    }

    /// Ends what `beginMarking(of:)` began, which returned `outer`.
    @inline(__always)
    func endMarking(_ outer: Marking) {
        marking = outer.id
        markingSource = outer.source
    }

    /// A marking running on the thread: its identity, and the source whose change it marks
    /// (for an invalidation, the property invalidated).
    struct Marking {
        let id: UInt64
        let source: ObjectIdentifier?
    }
    /// The source whose change the running marking marks, if any.
    @exclusivity(unchecked) var markingSource: ObjectIdentifier?
    /// The source whose dependents the running marking marks now (`markingSource`, or a
    /// property it reached).
    @exclusivity(unchecked) var markingHop: ObjectIdentifier?

    /// The dependents that told their own dependents again in the marking `retoldIn`, while
    /// stale (see `DependencyTracking.firstRetelling(by:in:)`).
    @exclusivity(unchecked) var retold: Set<ObjectIdentifier> = []
    @exclusivity(unchecked) var retoldIn: UInt64 = 0

    private func takeMarkingBlock() {
        let block = Self.markingBlocks.wrappingAdd(1, ordering: .relaxed).oldValue
        // Identities start at 1: 0 is no marking.
        nextMarking = block &* Self.markingBlockSize &+ 1
        markingsLeft = Self.markingBlockSize
    }

    /// The thread-local storage key, plus one (0 until it is made): only for its destructor,
    /// which releases the context when its thread ends. The context itself is looked up in a C
    /// thread-local variable (RuntimeShims), a load where `pthread_getspecific` is a call. An
    /// atomic with a constant initial value is initialized statically (a `static let` computed
    /// at first use would call `swift_once` on each use).
    private static let keyPlusOne = Atomic<UInt>(0)

    /// The thread-local storage key, made on first use.
    private static var key: pthread_key_t {
        let stored = keyPlusOne.load(ordering: .acquiring)
        if _fastPath(stored != 0) { return pthread_key_t(truncatingIfNeeded: stored &- 1) }
        return makeKey()
    }

    @inline(never)
    private static func makeKey() -> pthread_key_t {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            // First forget it: a deinit that the release runs may use Herald on this thread,
            // which then makes a new context (and the thread's exit releases that one too).
            herald_set_thread_context(nil)
            #if canImport(Darwin)
                Unmanaged<ThreadContext>.fromOpaque(pointer).release()
            #else
                if let pointer { Unmanaged<ThreadContext>.fromOpaque(pointer).release() }
            #endif
        }
        precondition(status == 0, "Herald: no thread-local storage key (\(status))")
        let (made, existing) = keyPlusOne.compareExchange(
            expected: 0, desired: UInt(key) + 1, ordering: .acquiringAndReleasing)
        if made { return key }
        // Another thread made one first.
        pthread_key_delete(key)
        return pthread_key_t(truncatingIfNeeded: existing &- 1)
    }

    /// This thread's context, if it has made one.
    static var current: ThreadContext? {
        guard let pointer = herald_thread_context() else { return nil }
        return Unmanaged<ThreadContext>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// `body` applied to this thread's context (made on first use), without retaining it.
    /// (`body` is called from one place, so that it is inlined: called from two, the fast path
    /// and the first use, it was compiled as a closure of its own.)
    @inline(__always)
    static func withThisThread<Result>(_ body: (ThreadContext) -> Result) -> Result {
        let pointer = herald_thread_context() ?? makeForThisThread()
        return Unmanaged<ThreadContext>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
    }

    /// `body` applied to this thread's context, without retaining it, if the thread has made
    /// one (else nil, and `body` does not run).
    @inline(__always)
    static func withCurrent<Result>(_ body: (ThreadContext) -> Result) -> Result? {
        guard let pointer = herald_thread_context() else { return nil }
        return Unmanaged<ThreadContext>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
    }

    /// `body` applied to the context whose identity `thread` is, without retaining it: the
    /// context of the calling thread, which keeps it alive (only that thread may pass its own
    /// identity).
    @inline(__always)
    static func with<Result>(
        _ thread: ObjectIdentifier, _ body: (ThreadContext) throws -> Result
    ) rethrows -> Result {
        assert(
            current.map(ObjectIdentifier.init) == thread,
            "Herald: a thread's identity was used on another thread")
        return try Unmanaged<ThreadContext>.fromOpaque(
            UnsafeRawPointer(bitPattern: UInt(bitPattern: thread)).unsafelyUnwrapped
        )._withUnsafeGuaranteedRef(body)
    }

    /// Releases what marking kept alive, one at a time: a release may run a deinit that marks
    /// again (and keeps more, which this releases too).
    func releaseKeptAlive() {
        while let object = keptAlive.popLast() { object.release() }
    }

    /// This thread's context, made on first use.
    static var forThisThread: ThreadContext {
        let pointer = herald_thread_context() ?? makeForThisThread()
        return Unmanaged<ThreadContext>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Makes this thread's context (it has none), kept until the thread ends; returns it,
    /// unretained.
    @inline(never)
    private static func makeForThisThread() -> UnsafeMutableRawPointer {
        let retained = Unmanaged.passRetained(ThreadContext()).toOpaque()
        pthread_setspecific(key, retained)
        herald_set_thread_context(retained)
        return retained
    }
}

extension Array {
    /// `removeAll(keepingCapacity: true)` for the few elements these queues hold: popping them
    /// one by one is cheaper than the generic `replaceSubrange` that `removeAll` goes through.
    mutating func removeAllKeepingCapacity() {
        while popLast() != nil {}
    }
}

/// Objects retained once each, released together later: what marking under a source's lock
/// loaded (see `markWhileLocked`). A buffer of its own: appending an object to an array costs a
/// uniqueness check and a retain, and marking appends once per dependent it reaches.
struct RetainedObjects: ~Copyable {
    private var storage = UnsafeMutablePointer<Unmanaged<AnyObject>>.allocate(capacity: 8)
    private var capacity = 8
    private var count = 0

    /// Keeps `object`, which the caller retained once, until it is popped.
    @inline(__always)
    mutating func append(_ object: Unmanaged<AnyObject>) {
        if _slowPath(count == capacity) { grow() }
        (storage + count).initialize(to: object)
        count += 1
    }

    /// The object kept last, taken out (the caller releases it), if any.
    @inline(__always)
    mutating func popLast() -> Unmanaged<AnyObject>? {
        guard count > 0 else { return nil }
        count -= 1
        return storage[count]
    }

    private mutating func grow() {
        let larger = UnsafeMutablePointer<Unmanaged<AnyObject>>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: storage, count: count)
        storage.deallocate()
        storage = larger
        capacity *= 2
    }

    deinit {
        for index in 0..<count { storage[index].release() }
        storage.deallocate()
    }
}
