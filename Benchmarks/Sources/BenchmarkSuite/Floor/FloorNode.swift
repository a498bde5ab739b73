/// A source: a variable or a computed property, and what depends on it.
class FloorNode {
    /// Guards `dependents`, and the subclass's state.
    final let lock = FloorLock()
    /// What read this node in its last evaluation. Guarded by `lock`. Unretained: a dependent
    /// must outlive its sources.
    @exclusivity(unchecked) final var dependents: [Unmanaged<FloorComputedBase>] = []

    /// `dependent` read this node: its changes mark `dependent` from now on.
    final func addDependent(_ dependent: Unmanaged<FloorComputedBase>) {
        lock.withLock { dependents.append(dependent) }
    }

    /// `dependent` no longer reads this node.
    final func removeDependent(_ dependent: Unmanaged<FloorComputedBase>) {
        lock.withLock { dependents.removeAll { $0.toOpaque() == dependent.toOpaque() } }
    }

    /// Marks the dependents; the caller holds `lock`.
    @inline(__always)
    final func markDependentsWhileLocked(definitely: Bool, in context: FloorContext) {
        // Indexed, not iterated: iterating retains the array.
        var index = 0
        while index < dependents.count {
            dependents[index]._withUnsafeGuaranteedRef {
                $0.mark(definitely: definitely, in: context)
            }
            index += 1
        }
    }
}
