import RuntimeShims
import Synchronization

/// Something an evaluation can depend on: a variable's or a collection's core, or a computed
/// property. Its dependents are marked when it changes, before the change is delivered.
@usableFromInline
package protocol DependencySource: AnyObject {
    /// Starts telling `dependent` of changes. The source holds it weakly.
    func addDependent(_ dependent: any Dependent)
    /// Stops telling the dependent whose identity is `dependent` of changes. Harmless if it
    /// was not told.
    func removeDependent(_ dependent: ObjectIdentifier)
}

/// Something that holds a dependency source (a messenger, a wrapper of one): for naming the
/// source in a message, found by reflection on the object that holds it.
package protocol DependencySourceHolder {
    /// The identity of the source it holds.
    var heldDependencySource: ObjectIdentifier { get }
}

extension Messenger: DependencySourceHolder {
    package var heldDependencySource: ObjectIdentifier { ObjectIdentifier(core) }
}

extension ObservableVar: DependencySourceHolder {
    package var heldDependencySource: ObjectIdentifier { ObjectIdentifier(projectedValue.core) }
}

/// Something whose value is computed from sources (a synthetic property). As
/// ``PropagationWork``, it brings itself up to date and tells its observers, if it is observed.
@usableFromInline
package protocol Dependent: PropagationWork {
    /// A source it depends on changed (`definitely`), or one further up did (it may be stale).
    /// Marks it, and returns what the marking must do next. Called on the changing thread
    /// before the change is delivered to anyone, possibly under the source's lock (see
    /// ``DependencyTracking/markWhileLocked(_:changing:)``): it must run no user code. The references in
    /// the result are retained once for the marking, which hands them on or releases them (call
    /// it only through ``DependencyTracking``).
    ///
    /// `marking` identifies the marking (one change's, from its source down): unique in the
    /// process, the same for every dependent it reaches. A dependent tells its own dependents
    /// once per marking (at most once more if it was valid when first reached and another
    /// marking reached it since), so that marking ends where what properties read last forms a
    /// circle (see ``DependencyTracking/firstRetelling(by:in:)``).
    func sourceChanged(definitely: Bool, marking: UInt64) -> SourceChange
}

/// What a dependent that was marked asks of the marking. Its references are retained once, for
/// whoever receives it, who releases them: passed as unmanaged references, they cost the
/// marking no retain and release of its own.
@usableFromInline
package struct SourceChange {
    /// Tell these dependents that they may be stale.
    @usableFromInline package var dependents: Unmanaged<DependentList>?
    /// Queue the dependent for propagation (it is observed).
    @usableFromInline package var mustPropagate: Bool
    /// Something the dependent let go of, to be released after the source's lock (its deinit
    /// may be anyone's code).
    @usableFromInline package var released: Unmanaged<AnyObject>?

    @inlinable
    package init(
        dependents: consuming DependentList?, mustPropagate: Bool,
        released: consuming AnyObject? = nil
    ) {
        self.dependents = dependents.map { Unmanaged.passRetained($0) }
        self.mustPropagate = mustPropagate
        self.released = released.map { Unmanaged.passRetained($0) }
    }
}

/// Work that a change leaves for the end of its propagation (an observed computed property
/// that must recompute and tell its observers).
@usableFromInline
package protocol PropagationWork: AnyObject {
    /// Recomputes and tells; runs on the thread whose change queued it, outside every lock.
    func propagate()
}

/// Reads recorded as dependencies, and the propagation of changes to what depends on them.
///
/// A read of a Herald property (a variable, a collection) calls ``recordRead(of:)``, which costs
/// a load of a thread-local variable while no evaluation is open on the thread. An evaluation
/// opens a frame on its thread with ``withFrame(_:on:_:)``; reads on that thread then go to the
/// frame. (Reads on other threads that the evaluation starts are not recorded.)
///
/// A change marks what depends on the changed source (``Dependent/sourceChanged(definitely:)``)
/// before the change is delivered, so that an observer of the source that reads a computed value
/// computes it afresh. The marking queues the dependents whose observers need work (see
/// ``SourceChange``), which runs after the change was delivered (``propagateQueuedWork()``): one
/// pass, however many sources the work depends on, and never inside an evaluation.
@usableFromInline
package enum DependencyTracking {
    /// Records a read of `source` in this thread's open evaluation, if there is one.
    @inlinable @inline(__always)
    package static func recordRead(of source: @autoclosure () -> any DependencySource) {
        let frame = herald_thread_top_frame()
        if _slowPath(frame != nil) {
            recordRead(of: source(), in: frame.unsafelyUnwrapped)
        }
    }

    /// Records a read of `source` in `frame`, the thread's open frame (the thread-local
    /// variable's value, which the caller loaded: not loaded again).
    @usableFromInline
    static func recordRead(of source: any DependencySource, in frame: UnsafeMutableRawPointer) {
        Unmanaged<EvaluationFrame>.fromOpaque(frame)._withUnsafeGuaranteedRef {
            $0.recordRead(of: source)
        }
    }

    /// The innermost evaluation frame open on this thread, if any, unretained: it stays alive
    /// while it is open, that is, until the caller returns to the evaluation that opened it.
    /// (A thread-local variable holds it, besides the thread's context: a read of a property
    /// finds it with one load, and an evaluation opens it with no atomic operation.)
    @inlinable
    package static var currentFrame: Unmanaged<EvaluationFrame>? {
        herald_thread_top_frame().map { Unmanaged<EvaluationFrame>.fromOpaque($0) }
    }

    /// Runs `body` with `frame` open on `thread` (this thread, as ``beginWork(on:since:)`` returned
    /// it): the reads it makes go to `frame` (and not to a frame opened before it).
    @usableFromInline
    package static func withFrame<Result>(
        _ frame: EvaluationFrame, on thread: ObjectIdentifier, _ body: () throws -> Result
    ) rethrows -> Result {
        try ThreadContext.with(thread) { context in
            frame.parent = context.top
            // Not retained: the caller keeps `frame` alive until this returns.
            context.setTop(Unmanaged.passUnretained(frame))
            defer {
                context.setTop(frame.parent)
                frame.parent = nil
            }
            return try body()
        }
    }

    /// Runs `body` with no frame open on this thread (reads in it record nothing): for observers
    /// called while an evaluation is open. What the thread computes and checks stays on its work
    /// stack (see ``beginWork(on:since:)``).
    @usableFromInline
    package static func withoutFrames<Result>(_ body: () throws -> Result) rethrows -> Result {
        guard let context = ThreadContext.current else { return try body() }
        return try withoutFrames(in: context, body)
    }

    /// `withoutFrames(_:)` on the thread whose context is `context` (this one).
    private static func withoutFrames<Result>(
        in context: ThreadContext, _ body: () throws -> Result
    ) rethrows -> Result {
        guard let saved = context.top else { return try body() }
        context.setTop(nil)
        defer { context.setTop(saved) }
        return try body()
    }

    /// Queues `work` for the end of this thread's outermost propagation.
    package static func enqueue(_ work: any PropagationWork) {
        ThreadContext.withThisThread { $0.queued.append(work) }
    }

    /// Runs the queued work, in order, including work queued while it runs, unless this thread
    /// is already doing so further up the stack (that pass picks up what was queued), is
    /// evaluating (the outermost evaluation runs it when it ends) or is inside a ``batch(_:)``
    /// (which runs it when it ends).
    @usableFromInline
    package static func propagateQueuedWork() {
        ThreadContext.withThisThread { propagateQueuedWork(in: $0) }
    }

    /// `propagateQueuedWork()` on the thread whose context is `context` (this one).
    private static func propagateQueuedWork(in context: ThreadContext) {
        guard herald_thread_batch_depth() == 0 else { return }
        runQueuedWork(in: context)
    }

    /// `propagateQueuedWork(in:)`, inside a batch too (the batch that ends runs it).
    static func runQueuedWork(in context: ThreadContext) {
        guard !context.isPropagating, context.work.isEmpty, !context.queued.isEmpty else {
            return
        }
        context.isPropagating = true
        defer { context.isPropagating = false }
        // Observers called from here are not part of an evaluation that set a variable.
        withoutFrames(in: context) {
            var next = 0
            while next < context.queued.count {
                let work = context.queued[next]
                next += 1
                work.propagate()
            }
            context.queued.removeAllKeepingCapacity()
        }
    }

    /// Marks `dependents` as changed, and recursively what depends on them, while the source's
    /// lock is held (so that no thread delivers the change before it is marked). What the marking
    /// loaded is kept alive, and the work it queued is set apart, until ``takeMarkedWork(on:)``
    /// after unlocking: a last reference must not be released under the source's lock.
    /// Returns this thread's identity (for ``takeMarkedWork(on:)``) and whether it queued work.
    ///
    /// `dependents` is not retained: the source's lock, which the caller holds, keeps it.
    @usableFromInline
    package static func markWhileLocked(
        _ dependents: Unmanaged<DependentList>, changing source: ObjectIdentifier
    ) -> LockedMarking {
        ThreadContext.withThisThread { context in
            context.markedFrom = context.queued.count
            let outer = context.beginMarking(of: source)
            defer { context.endMarking(outer) }
            dependents._withUnsafeGuaranteedRef {
                mark($0, definitely: true, in: context, keepingAlive: true)
            }
            return LockedMarking(
                thread: ObjectIdentifier(context),
                queuedWork: context.queued.count > context.markedFrom)
        }
    }

    /// After ``markWhileLocked(_:changing:)``, once unlocked, on the `thread` it returned (this one):
    /// releases what it kept alive and returns the work it queued (taken out of this thread's
    /// queue, for whoever runs it).
    @usableFromInline
    package static func takeMarkedWork(on thread: ObjectIdentifier) -> MarkedWork {
        ThreadContext.with(thread) { context in
            let start = context.markedFrom
            let work: MarkedWork
            switch context.queued.count - start {
            case ..<1:
                work = .none
            case 1:
                work = .one(context.queued.removeLast())
            case _ where start == 0:
                // The whole queue: moved, not copied item by item (a retain and a release each).
                work = .many(context.queued)
                context.queued = []
            default:
                work = .many(Array(context.queued[start...]))
                while context.queued.count > start { context.queued.removeLast() }
            }
            // Then: a deinit that a release runs may change something, and mark again.
            context.releaseKeptAlive()
            return work
        }
    }

    /// Queues `work` (taken by ``takeMarkedWork(on:)``, maybe on another thread) on this thread
    /// and runs the queue (see ``propagateQueuedWork()``).
    @usableFromInline
    package static func propagate(_ work: consuming MarkedWork) {
        // Taken apart here, outside the closure, so that the array is moved, not shared: a
        // shared one would be copied at the queue's first change.
        let one: (any PropagationWork)?
        var many: [any PropagationWork]
        switch consume work {
        case .none: return
        case .one(let work): (one, many) = (work, [])
        case .many(let work): (one, many) = (nil, work)
        }
        ThreadContext.withThisThread { context in
            if let one {
                context.queued.append(one)
            } else if context.queued.isEmpty {
                swap(&context.queued, &many)
            } else {
                context.queued.append(contentsOf: many)
            }
            propagateQueuedWork(in: context)
        }
    }

    /// Marks `dependents`, and recursively what depends on them, queuing what is observed and
    /// running nothing.
    @usableFromInline
    package static func mark(
        _ dependents: DependentList, definitely: Bool, changing source: ObjectIdentifier
    ) {
        ThreadContext.withThisThread { context in
            let outer = context.beginMarking(of: source)
            defer { context.endMarking(outer) }
            mark(dependents, definitely: definitely, in: context, keepingAlive: false)
        }
    }

    /// `mark(_:definitely:)` on the thread whose context is `context` (this one), keeping what
    /// it loads alive in the context if `keepingAlive`.
    private static func mark(
        _ dependents: DependentList, definitely: Bool, in context: ThreadContext,
        keepingAlive: Bool
    ) {
        // The source whose dependents these are (for `changesWhatIsRead`).
        let outerHop = context.markingHop
        context.markingHop = dependents.source
        defer { context.markingHop = outerHop }
        // The entries are used in place, through the pointer: `dependents` keeps them (the
        // caller holds it), and a copy of an entry would retain its unowned reference (an atomic
        // increment, and a decrement after).
        withExtendedLifetime(dependents) {
            let entries = dependents.unsafeEntries
            guard var entry = entries.baseAddress else { return }
            let end = entry + entries.count
            while entry < end {
                defer { entry += 1 }
                guard let live = DependentList.Entry.retained(at: entry) else { continue }
                let change = entry.pointee.kind.mark(live, definitely: definitely, in: context)
                handOn(change, in: context, keepingAlive: keepingAlive)
                // Kept alive as `change.released` is (see `handOn`).
                if keepingAlive { context.keptAlive.append(live) } else { live.release() }
            }
        }
    }

    /// Marks `dependent` itself (`definitely`: a manual invalidation), then what depends on it,
    /// queuing what is observed and running nothing.
    @usableFromInline
    package static func markDependent(_ dependent: some Dependent, definitely: Bool) {
        ThreadContext.withThisThread { context in
            let outer = context.beginMarking(of: ObjectIdentifier(dependent))
            defer { context.endMarking(outer) }
            let change = dependent.sourceChanged(definitely: definitely, marking: context.marking)
            if change.mustPropagate { context.queued.append(dependent) }
            handOn(change, in: context, keepingAlive: false)
        }
    }

    /// Marks `dependent` itself and what depends on it, as ``markDependent(_:definitely:)``
    /// does, and returns the work the marking queued instead of leaving it in this thread's
    /// queue: for a caller that propagates it later, maybe on another thread, with
    /// ``propagate(_:)``.
    package static func markDependentForLater(_ dependent: some Dependent) -> MarkedWork {
        let thread = ThreadContext.withThisThread { context in
            context.markedFrom = context.queued.count
            let outer = context.beginMarking(of: ObjectIdentifier(dependent))
            defer { context.endMarking(outer) }
            let change = dependent.sourceChanged(definitely: true, marking: context.marking)
            if change.mustPropagate { context.queued.append(dependent) }
            handOn(change, in: context, keepingAlive: false)
            return ObjectIdentifier(context)
        }
        return takeMarkedWork(on: thread)
    }

    /// Does what `change` asks after its dependent was marked, and lets go of its references
    /// (the one place that does: they are retained once for it): marks the dependents it names,
    /// and keeps what the dependent let go of for the release after unlocking if
    /// `keepingAlive`, else releases it now.
    private static func handOn(
        _ change: SourceChange, in context: ThreadContext, keepingAlive: Bool
    ) {
        if let next = change.dependents {
            next._withUnsafeGuaranteedRef {
                mark($0, definitely: false, in: context, keepingAlive: keepingAlive)
            }
            // Releasing a list runs nothing but the ends of references that do not keep their
            // objects alive: no need to wait for the unlocking.
            next.release()
        }
        guard let released = change.released else { return }
        // Released after unlocking, when it is not the last reference.
        if keepingAlive { context.keptAlive.append(released) } else { released.release() }
    }
}

extension Dependent {
    /// Marks the dependent `object` (of this type, retained by the caller) and queues it if it
    /// must propagate. Called through the type, so that marking retains the dependent no more
    /// than the one time that makes sure it is not deinitializing.
    fileprivate static func mark(
        _ object: Unmanaged<AnyObject>, definitely: Bool, in context: ThreadContext
    ) -> SourceChange {
        unsafeBitCast(object, to: Unmanaged<Self>.self)._withUnsafeGuaranteedRef { dependent in
            let change = dependent.sourceChanged(definitely: definitely, marking: context.marking)
            if change.mustPropagate { context.queued.append(dependent) }
            return change
        }
    }
}

/// What ``DependencyTracking/markWhileLocked(_:changing:)`` did, for its caller.
@usableFromInline
package struct LockedMarking {
    /// The marking thread's identity (for ``DependencyTracking/takeMarkedWork(on:)``).
    @usableFromInline package let thread: ObjectIdentifier
    /// Whether the marking queued work (something it marked is observed).
    @usableFromInline package let queuedWork: Bool
}

/// The work that marking queued (see ``DependencyTracking/takeMarkedWork(on:)``): usually none or
/// one item, which need no array.
@usableFromInline
package enum MarkedWork {
    case none
    case one(any PropagationWork)
    case many([any PropagationWork])

    /// Whether there is work.
    @inlinable package var isEmpty: Bool {
        if case .none = self { return true }
        return false
    }
}
