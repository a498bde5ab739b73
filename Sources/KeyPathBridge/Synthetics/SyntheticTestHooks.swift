#if DEBUG
    /// Test hooks of synthetic properties, task-local so that tests running in parallel do not
    /// see each other's.
    @usableFromInline package enum SyntheticTestHooks {
        /// Runs when an observed property is about to tell its observers, after its author was
        /// taken (outside every lock).
        @usableFromInline @TaskLocal package static var beforeSending: (@Sendable () -> Void)?
    }
#endif
