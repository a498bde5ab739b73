extension DependencyTracking {
    /// Starts bringing `node`, a computed property, up to date on this thread (checking its
    /// sources or computing it), as the thread saw it at `epoch` (the property's count of
    /// invalidations and sets), until ``endWork(on:)``; returns this thread's identity (for the
    /// calls that follow, which then need not look the thread up). The thread's work stack is
    /// what a cycle's message names, what tells a re-entry, and what keeps a thread that brings
    /// something up to date from waiting. Work queued meanwhile (by a function that set a
    /// variable) waits for the end of the outermost work: running it inside would re-enter what
    /// is being computed.
    @usableFromInline
    package static func beginWork(on node: AnyObject, since epoch: UInt64) -> ObjectIdentifier {
        ThreadContext.withThisThread { context in
            context.work.push(WorkItem(node: .passUnretained(node), epoch: epoch))
            return ObjectIdentifier(context)
        }
    }

    /// The innermost work, begun with ``beginWork(on:since:)`` on `thread` (this one), now
    /// starts again at `epoch` (a check that goes on to compute).
    @usableFromInline
    package static func restartWork(since epoch: UInt64, on thread: ObjectIdentifier) {
        ThreadContext.with(thread) { $0.work.restartInnermost(since: epoch) }
    }

    /// Ends the innermost work on `thread` (this one); the outermost runs the work queued
    /// meanwhile.
    @usableFromInline
    package static func endWork(on thread: ObjectIdentifier) {
        let mustPropagate = ThreadContext.with(thread) { context in
            context.work.pop()
            return context.work.isEmpty && !context.queued.isEmpty
        }
        if mustPropagate { propagateQueuedWork() }
    }

    /// Whether this thread brings no computed value up to date (its work stack is empty), so
    /// that no other thread can be waiting for it: only such a thread may wait, for another
    /// thread's computation or for a messenger's delivering role.
    @usableFromInline
    package static var holdsNothing: Bool {
        ThreadContext.withCurrent { $0.work.isEmpty } ?? true
    }

    /// This thread's identity (see ``beginWork(on:since:)``) and ``holdsNothing``, with one
    /// look-up.
    @usableFromInline
    package static var thisThreadAndWhetherItHoldsNothing: (ObjectIdentifier, Bool) {
        ThreadContext.withThisThread { (ObjectIdentifier($0), $0.work.isEmpty) }
    }

    /// The work on this thread's stack, outermost first: what it checks and computes, and
    /// the epoch at which each began.
    package static var workOfThisThread: [WorkItem] {
        ThreadContext.current?.work.items ?? []
    }

    /// Whether `dependent` tells its dependents again, while stale, for the first time in
    /// `marking`, which runs on this thread. A dependent tells them once per marking (it
    /// remembers the last marking that reached it), so that marking ends where what properties
    /// read last forms a circle; but two markings that go round such a circle at once, each
    /// reaching the properties the other just reached, would never find their own: a stale
    /// dependent that tells again asks this first. (A marking started inside another, by a
    /// deinit that a release during marking runs, clears what the outer one recorded: the
    /// outer one may tell some dependents once more, no more.)
    package static func firstRetelling(by dependent: ObjectIdentifier, in marking: UInt64)
        -> Bool
    {
        ThreadContext.withThisThread { context in
            if context.retoldIn != marking {
                // A large marking's set is not kept for the thread's whole life.
                if context.retold.capacity > 256 {
                    context.retold = []
                } else {
                    context.retold.removeAll(keepingCapacity: true)
                }
                context.retoldIn = marking
            }
            return context.retold.insert(dependent).inserted
        }
    }

    /// Whether the marking running on this thread marks a change that `dependent`'s function
    /// made, of a source it read: the innermost evaluation open on the thread is
    /// `dependent`'s, and it read the source, or the property through which the change
    /// reached it. Such a function overtakes its own
    /// evaluation every time. (A change that a function nested inside made reaches an outer
    /// evaluation as any other change does: that one is overtaken once, and computed again.)
    /// Only in a marking. Returns the source's identity if so.
    package static func changesWhatIsRead(by dependent: AnyObject) -> ObjectIdentifier? {
        guard let context = ThreadContext.current, let source = context.markingSource else {
            return nil
        }
        guard let frame = context.top?.takeUnretainedValue(),
            frame.dependent.map({ $0 === dependent }) == true,
            let hop = context.markingHop, frame.hasRecorded(hop)
        else { return nil }
        return source
    }

    /// Whether an evaluation open on this thread read a value that is not current (see
    /// ``EvaluationFrame/readWhatIsNotCurrent()``).
    package static var anOpenEvaluationIsTainted: Bool {
        var next = ThreadContext.current?.top
        while let frame = next?.takeUnretainedValue() {
            if frame.isTainted { return true }
            next = frame.parent
        }
        return false
    }

    /// Records a property this thread is to wait for once it holds nothing (a computation aside
    /// made its evaluation of an observed property not current: computing that again before
    /// the holder finished would only do the same). Replaces one recorded before.
    package static func oweWait(for node: AnyObject) {
        ThreadContext.withThisThread { $0.owedWait = node }
    }

    /// Takes the property this thread is to wait for, if any (see ``oweWait(for:)``).
    @usableFromInline
    package static func takeOwedWait() -> AnyObject? {
        // Unretained, and moved out: this runs before every propagation of a property.
        ThreadContext.withCurrent { $0.owedWait.take() } ?? nil
    }

    /// An identity of this thread, for telling who evaluates what.
    @usableFromInline
    package static var thisThread: ObjectIdentifier {
        ObjectIdentifier(ThreadContext.forThisThread)
    }
}

/// A computed property a thread checks or computes (on its work stack; see
/// ``DependencyTracking/beginWork(on:since:)``).
package struct WorkItem {
    /// Not retained: the read that began the work holds it until the work ends.
    package let node: Unmanaged<AnyObject>
    /// The property's epoch (its count of invalidations and sets) when the work began.
    package var epoch: UInt64

    /// Whether this is work on `object`.
    package func isOn(_ object: AnyObject) -> Bool {
        node.toOpaque() == Unmanaged.passUnretained(object).toOpaque()
    }
}

/// A thread's work stack (see `DependencyTracking.beginWork`): a buffer of its own, since a push
/// and a pop come with every check and evaluation, and an array's cost several times theirs.
struct WorkStack: ~Copyable {
    private var storage = UnsafeMutablePointer<WorkItem>.allocate(capacity: 16)
    private var capacity = 16
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    mutating func push(_ item: WorkItem) {
        if _slowPath(count == capacity) { grow() }
        (storage + count).initialize(to: item)
        count += 1
    }

    @inline(__always)
    mutating func pop() {
        count -= 1
    }

    /// The innermost item now starts at `epoch`.
    mutating func restartInnermost(since epoch: UInt64) {
        storage[count - 1].epoch = epoch
    }

    /// The items, outermost first.
    var items: [WorkItem] { Array(UnsafeBufferPointer(start: storage, count: count)) }

    private mutating func grow() {
        let larger = UnsafeMutablePointer<WorkItem>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: storage, count: count)
        storage.deallocate()
        storage = larger
        capacity *= 2
    }

    deinit { storage.deallocate() }
}
