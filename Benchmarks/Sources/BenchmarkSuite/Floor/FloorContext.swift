import FloorShims

/// What one thread keeps: the observed properties that its changes marked, to be told.
final class FloorContext {
    /// The observed properties to tell, in the order their marks queued them (retained).
    @exclusivity(unchecked) var queued: [FloorComputedBase] = []
    /// Whether this thread tells the queued properties further up its stack.
    @exclusivity(unchecked) var isPropagating = false

    /// `body` applied to this thread's context (made on first use and kept for the thread's
    /// life: the floor never frees one).
    @inline(__always)
    static func with<Result>(_ body: (FloorContext) -> Result) -> Result {
        if let pointer = floor_thread_context() {
            return Unmanaged<FloorContext>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
        }
        let made = Unmanaged.passRetained(FloorContext())
        floor_set_thread_context(made.toOpaque())
        return made._withUnsafeGuaranteedRef(body)
    }

    /// Tells what the changes queued, unless an evaluation is open on this thread (then the
    /// outermost read tells them as it ends: see ``FloorEngine/propagateDeferred()``) or this
    /// thread tells already (that pass picks up what was queued).
    static func propagateQueued() {
        guard floor_thread_frame() == nil else {
            floor_defer_propagation()
            return
        }
        with { $0.propagate() }
    }

    /// Tells the queued properties, including those queued meanwhile, unless this thread tells
    /// them already.
    private func propagate() {
        guard !isPropagating, !queued.isEmpty else { return }
        isPropagating = true
        var next = 0
        while next < queued.count {
            let property = queued[next]
            property.propagate(property)
            next += 1
        }
        // Popped: `removeAll(keepingCapacity:)` goes through the generic `replaceSubrange`.
        while queued.popLast() != nil {}
        // What writes inside the evaluations above deferred was told here.
        _ = floor_take_deferred_propagation()
        isPropagating = false
    }
}
