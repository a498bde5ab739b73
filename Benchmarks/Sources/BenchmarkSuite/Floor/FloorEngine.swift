import FloorShims

/// The floor engine: the least that a thread-safe, pull-based design with automatic
/// dependencies does, to measure how close to RAW such a design can come at all
/// (`herald-benchmarks --floor`, Docs/Performance.md). It is not a library and nothing else
/// uses it; `herald-benchmarks --floor-selftest` checks it (``FloorSelfTest``).
///
/// The class of designs it stands for: a lock taken on every access to a property (a read of a
/// variable, of a computed property, a write), values of any type (no atomics in place of a
/// lock for small ones), and no user code (a computation, a handler) run under a lock. The
/// floor keeps to that class: it has no lock-free reads.
///
/// What it does, as Herald does and at the least cost found:
/// - one lock per property (``FloorLock``, with the uncontended cost of Herald's internal Lock
///   type where that keeps its word inline: a compare-exchange to take it, a store to let it
///   go);
/// - a read finds the thread's open evaluation in a C thread-local variable, and records itself
///   there; an evaluation that reads what the last one read, in the same order, moves a cursor,
///   and a source read again right after itself records nothing (``FloorFrame``);
/// - a change marks what depends on it before anything reads the new value (invalid for direct
///   dependents, to check for the rest), under the locks of what it marks; a property that is
///   computed or checked while marked passes the mark on, so that what read the value it was
///   computing learns that the value may be stale (``FloorComputedBase/mark(definitely:in:)``);
/// - a property to check brings its computed sources up to date first, and computes only if one
///   has another version than it read (an equal value makes nothing downstream compute);
/// - one evaluation of a property at a time (a second reader waits);
/// - an observed property is brought up to date after the change that marked it, and its
///   handler runs if its version moved and the value is current (``FloorComputed/tell()``);
///   a write inside an evaluation is told when the outermost read around it ends
///   (``propagateDeferred()``).
///
/// What it leaves out, each of which Herald pays for: dependents held weakly (here a dependent
/// must outlive its sources), cycles (here a stack overflow or a hang), a thread waiting for
/// another without deadlock (here it spins), sets of computed properties (hybrids), authors,
/// delivery order between threads (two threads may run one handler at once, in either order),
/// declared paths, and any observer other than one handler.
enum FloorEngine {
    /// Runs the tells that writes inside evaluations queued (``FloorContext/propagateQueued()``
    /// defers them while an evaluation is open), at the end of an outermost read.
    ///
    /// User code runs inside an evaluation (a frame is open), in a handler (while the thread
    /// tells, which picks up what is queued) or outside both; so a read made where no frame is
    /// open is one that no check or evaluation on this thread encloses, and once it returns,
    /// telling cannot read a property that this thread is still checking or computing (and
    /// wait for itself). The cost: one thread-local load per outermost read.
    @inline(__always)
    static func propagateDeferred() {
        if floor_take_deferred_propagation() { FloorContext.propagateQueued() }
    }
}
