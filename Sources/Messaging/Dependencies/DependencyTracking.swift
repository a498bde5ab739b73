import RuntimeShims
import Synchronization

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

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
        guard let context = ThreadContext.current else { return true }
        return context.work.isEmpty
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
        guard let context = ThreadContext.current, context.owedWait != nil else { return nil }
        defer { context.owedWait = nil }
        return context.owedWait
    }

    /// An identity of this thread, for telling who evaluates what.
    @usableFromInline
    package static var thisThread: ObjectIdentifier {
        ObjectIdentifier(ThreadContext.forThisThread)
    }

    /// Queues `work` for the end of this thread's outermost propagation.
    package static func enqueue(_ work: any PropagationWork) {
        ThreadContext.withThisThread { $0.queued.append(work) }
    }

    /// Runs the queued work, in order, including work queued while it runs, unless this thread
    /// is already doing so further up the stack (that pass picks up what was queued) or is
    /// evaluating (the outermost evaluation runs it when it ends).
    @usableFromInline
    package static func propagateQueuedWork() {
        ThreadContext.withThisThread { propagateQueuedWork(in: $0) }
    }

    /// `propagateQueuedWork()` on the thread whose context is `context` (this one).
    private static func propagateQueuedWork(in context: ThreadContext) {
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
    package static func propagate(_ work: MarkedWork) {
        ThreadContext.withThisThread { context in
            switch work {
            case .none: return
            case .one(let work): context.queued.append(work)
            case .many(let work): context.queued.append(contentsOf: work)
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
        // The entries are used unretained: `dependents` keeps them alive (the caller holds it).
        dependents.entries.withUnsafeBufferPointer { entries in
            for index in entries.indices {
                Unmanaged.passUnretained(entries[index])._withUnsafeGuaranteedRef { entry in
                    guard let live = entry.reference.retained() else { return }
                    let change = entry.kind.mark(live, definitely: definitely, in: context)
                    handOn(change, in: context, keepingAlive: keepingAlive)
                    // Kept alive as `change.released` is (see `handOn`).
                    if keepingAlive { context.keptAlive.append(live) } else { live.release() }
                }
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

/// The dependents of a source, held weakly. Immutable: a change makes a new list, so a sender
/// can use the list it read under the source's lock after unlocking.
@usableFromInline
package final class DependentList: @unchecked Sendable {
    /// An object, not a struct, so that marking reads it without copying it.
    package final class Entry: @unchecked Sendable {
        /// Not `weak`: that would give every dependent a side table, slowing each retain and
        /// release of it (see ``NativeWeak``). Dependents are Herald's own, native, objects.
        let reference: NativeWeak<AnyObject>
        /// The dependent's type, for calling the object that `reference` gave (retained) —
        /// never before, when it may have begun to deinitialize.
        let kind: any Dependent.Type
        let identity: ObjectIdentifier

        init(_ dependent: any Dependent) {
            reference = NativeWeak(dependent)
            kind = type(of: dependent)
            identity = ObjectIdentifier(dependent)
        }

        /// Whether the dependent has not begun to deinitialize (asked under the source's lock:
        /// it retains nothing, so it cannot release a last reference there).
        var isLive: Bool { reference.isLive }
    }
    package let entries: [Entry]
    /// The identity of the source whose dependents these are.
    package let source: ObjectIdentifier

    init(_ entries: [Entry], of source: ObjectIdentifier) {
        self.entries = entries
        self.source = source
    }

    /// `list`, the dependents of `source`, with `dependent` added (once).
    package static func adding(
        _ dependent: any Dependent, to list: DependentList?, of source: AnyObject
    ) -> DependentList {
        let identity = ObjectIdentifier(dependent)
        let live = (list?.entries ?? []).filter(\.isLive)
        let of = ObjectIdentifier(source)
        if live.contains(where: { $0.identity == identity }) { return DependentList(live, of: of) }
        return DependentList(live + [Entry(dependent)], of: of)
    }

    /// `list` without `dependent` (and without dependents that died), or nil if none is left.
    package static func removing(_ identity: ObjectIdentifier, from list: DependentList?)
        -> DependentList?
    {
        guard let list else { return nil }
        let rest = list.entries.filter { $0.identity != identity && $0.isLive }
        return rest.isEmpty ? nil : DependentList(rest, of: list.source)
    }
}

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
    @inline(__always)
    static func withThisThread<Result>(_ body: (ThreadContext) -> Result) -> Result {
        guard let pointer = herald_thread_context() else { return body(forThisThread) }
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
        if let current { return current }
        let context = ThreadContext()
        let retained = Unmanaged.passRetained(context).toOpaque()
        pthread_setspecific(key, retained)
        herald_set_thread_context(retained)
        return context
    }
}

extension Array {
    /// `removeAll(keepingCapacity: true)` for the few elements these queues hold: popping them
    /// one by one is cheaper than the generic `replaceSubrange` that `removeAll` goes through.
    fileprivate mutating func removeAllKeepingCapacity() {
        while popLast() != nil {}
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
