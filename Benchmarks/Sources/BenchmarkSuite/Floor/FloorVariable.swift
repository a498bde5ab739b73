import FloorShims

/// A variable.
final class FloorVariable<Value: Equatable>: FloorNode {
    /// The value. Guarded by `lock`.
    @exclusivity(unchecked) var stored: Value

    /// A variable that holds `value`.
    init(_ value: Value) { stored = value }

    /// The value. A read inside an evaluation is recorded first; a write of another value marks
    /// what read the variable, then tells the observed properties it marked (at once, or when
    /// the outermost read around it ends, for a write inside an evaluation).
    var value: Value {
        get {
            if let pointer = floor_thread_frame() {
                _ = Unmanaged<FloorFrame>.fromOpaque(pointer)._withUnsafeGuaranteedRef {
                    $0.record(self, computed: nil)
                }
            }
            return lock.withLock { stored }
        }
        set {
            let marked = lock.withLock { () -> Bool in
                guard stored != newValue else { return false }
                stored = newValue
                guard !dependents.isEmpty else { return false }
                return FloorContext.with { context in
                    markDependentsWhileLocked(definitely: true, in: context)
                    return !context.queued.isEmpty
                }
            }
            if marked { FloorContext.propagateQueued() }
        }
    }
}
