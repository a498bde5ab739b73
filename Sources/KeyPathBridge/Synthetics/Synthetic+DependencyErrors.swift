import Transforms

extension Synthetic {
    /// The errors of the declared string paths that name nothing (see
    /// ``SyntheticDependency/path(_:)-(String)``), in declaration order: found when the property
    /// observed its declared paths; none before it did.
    var declaredDependencyErrors: [PathError] {
        core.lock.withLock { declaredObservations }.compactMap {
            ($0 as? FailedDependencyObservation)?.error
        }
    }
}
