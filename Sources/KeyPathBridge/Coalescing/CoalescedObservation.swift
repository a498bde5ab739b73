import Transforms

/// One coalesced observation, as `observeCoalesced` returns it: stop it alone, whole or one of
/// its paths, or run or schedule its block by hand (EBN's `stopTelling:aboutChangesTo:`,
/// `execute` and `schedule`).
///
/// ```swift
/// let redraw = observer.observeCoalesced(model, \.$firstName, \.$lastName) { observer, model in
///     observer.redraw(model)
/// }
/// redraw.run()               // now, on this thread
/// redraw.schedule()          // in the coalescer's next flush, as a change would
/// redraw.stop(pathAt: 1)     // no longer told about `lastName`
/// redraw.stop()              // ends it; the observer's other observations go on
/// ```
///
/// The observation is owned by its observer, as every observation is: keeping the handle is
/// optional, and the handle keeps neither the observer nor the root alive. It ends when every
/// path stopped, when the observer or the root dies, or at `observer.stopObserving(root)`.
/// Thread-safe.
public final class CoalescedObservation: Sendable {
    /// How one path is observed, to stop it or ask whether it still is.
    enum Part: Sendable {
        /// A property of the root, observed directly; or a path's ad hoc observation, which
        /// holds the path. Weak: the observer owns it.
        case connection(WeakConnection)
        /// A string path's property of the root, whose link holds its observation.
        case link(UncheckedSendable<PathLink>)

        var isObserving: Bool {
            switch self {
            case .connection(let weak): weak.connection?.isActive ?? false
            case .link(let link): link.value.isObserving && link.value.isAlive
            }
        }

        func end() {
            switch self {
            case .connection(let weak): weak.connection?.end()
            case .link(let link): link.value.end()
            }
        }
    }

    /// A connection held weakly.
    struct WeakConnection: @unchecked Sendable {
        weak var connection: ConnectionBase?
    }

    private let parts: [Part]
    private let entry: Coalescer.Entry
    private let coalescer: Coalescer

    init(parts: [Part], entry: Coalescer.Entry, coalescer: Coalescer) {
        self.parts = parts
        self.entry = entry
        self.coalescer = coalescer
    }

    /// How many paths the observation was started with (the indices of ``stop(pathAt:)``).
    public var pathCount: Int { parts.count }

    /// Whether any of its paths is still observed.
    public var isActive: Bool { parts.contains { $0.isObserving } }

    /// Whether the path at `index` (in the order given to `observeCoalesced`) is still
    /// observed.
    ///
    /// - Precondition: `index` is below ``pathCount``.
    public func isObserving(pathAt index: Int) -> Bool {
        precondition(parts.indices.contains(index), "no path at \(index) of \(parts.count)")
        return parts[index].isObserving
    }

    /// Ends the observation: changes schedule its block no more. A block already scheduled
    /// still runs (as in EBN). Calling it again is harmless.
    public func stop() {
        for part in parts { part.end() }
    }

    /// Stops observing the path at `index` (in the order given to `observeCoalesced`); the
    /// other paths still schedule the block.
    ///
    /// ```swift
    /// let shown = observer.observeCoalesced(person, \.$firstName, \.$lastName) { _, _ in }
    /// shown.stop(pathAt: 1)   // changes of lastName are no longer coalesced into it
    /// ```
    ///
    /// - Precondition: `index` is below ``pathCount``.
    public func stop(pathAt index: Int) {
        precondition(parts.indices.contains(index), "no path at \(index) of \(parts.count)")
        parts[index].end()
    }

    /// Runs the block now, on the calling thread, if the observation is active and its
    /// observer and root are alive. It does not count as the block's run in a flush: a block
    /// already scheduled still runs there.
    public func run() {
        guard isActive, let run = entry.prepare() else { return }
        run()
    }

    /// Schedules the block in its coalescer as a change of one of its paths would (it runs
    /// once in the next flush, however often it was scheduled), if the observation is active.
    public func schedule() {
        guard isActive else { return }
        coalescer.schedule(entry)
    }
}
