import Transforms

/// A synthetic property seen without its value type: what the dependency graph, the frames and
/// the debugging tools need of it.
@usableFromInline
protocol SyntheticNode: AnyObject, Dependent, DependencySource, PropagationWork {
    /// A name for messages: `Type.property` where known.
    var nodeName: String { get }
    /// The thread computing the value, if one is.
    var computingThread: ObjectIdentifier? { get }
    /// Whether a thread checks the property, and it was invalidated or set since the check
    /// began (see `SyntheticState.checkWasOvertaken`).
    var checkWasOvertaken: Bool { get }
    /// Whether a thread checks or computes the property, and it was invalidated or set since
    /// that began (since the evaluation began, for one inside the thread's own check; see
    /// `SyntheticState.wasOvertaken`).
    var wasOvertaken: Bool { get }
    /// Whether there is a cached value (valid or not).
    var hasValue: Bool { get }
    /// Taints the evaluation or check the calling thread runs (see `SyntheticState.taint(retry:)`).
    func taint(retry: Bool)
}
