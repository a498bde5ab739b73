import Synchronization
import Transforms

/// Being marked when what the property read changes, and the list of what depends on it.
extension Synthetic: SyntheticNode {
    @usableFromInline var nodeName: String {
        "\(Owner.self).\(resolvedName() ?? "?")"
    }

    @usableFromInline var epochNow: UInt64 { core.lock.withLock { state.epoch } }

    @usableFromInline package func sourceChanged(definitely: Bool, marking: UInt64)
        -> SourceChange
    {
        // Only on a thread inside an evaluation: a function that writes what it read.
        if _slowPath(DependencyTracking.currentFrame != nil),
            let written = DependencyTracking.changesWhatIsRead(by: self)
        {
            reportWrite(of: written)
        }
        let (action, setter) = core.lock.withLock {
            () -> (SyntheticState.MarkAction, AnyAuthor?) in
            // The value told next is no longer the one that was set. (Its setter is released
            // after the locks: it may be any object.)
            defer { self.setter = nil }
            // A set is counted (releasing) under its property's lock once made: a marking that
            // loads the count after that tells what the set made valid.
            let sets = SyntheticState.setsOverStale.load(ordering: .acquiring)
            let action = state.mark(
                definitely: definitely, marking: marking, setsOverStale: sets)
            return (action, self.setter)
        }
        guard _slowPath(action.retells),
            !DependencyTracking.firstRetelling(by: ObjectIdentifier(self), in: marking)
        else {
            return SourceChange(
                dependents: action.dependents, mustPropagate: action.enqueue, released: setter)
        }
        return SourceChange(dependents: nil, mustPropagate: action.enqueue, released: setter)
    }

    /// Stops the process: the function wrote `source`, which its evaluation read.
    private func reportWrite(of source: ObjectIdentifier) -> Never {
        // Under the written source's lock: no user code, so not a custom mirror (which could
        // read the source, and wait for that lock).
        let owner = core.lock.withLock { self.owner.object }.flatMap {
            $0 is CustomReflectable ? nil : $0
        }
        let name = owner.flatMap { owner in
            ObservableProperties.storedProperties(of: owner).first {
                ($0.value as? DependencySourceHolder)?.heldDependencySource == source
                    || ($0.value as? any SyntheticNode).map(ObjectIdentifier.init) == source
            }.map { "\(Owner.self).\($0.name)" }
        }
        SyntheticCycle.reportWrite(of: name ?? "a property", readBy: self)
    }

    @usableFromInline package func addDependent(_ dependent: any Dependent) {
        core.lock.withLock {
            state.dependents = DependentList.adding(dependent, to: state.dependents, of: self)
        }
    }

    @usableFromInline package func removeDependent(_ dependent: ObjectIdentifier) {
        core.lock.withLock {
            state.dependents = DependentList.removing(dependent, from: state.dependents)
        }
    }

    @usableFromInline package func propagate() {
        tell(self)
    }
}
