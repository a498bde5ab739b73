import Transforms

/// A synthetic property seen without its value type: what the dependency graph, the frames and
/// the debugging tools need of it.
@usableFromInline
protocol SyntheticNode: AnyObject, Dependent, DependencySource, PropagationWork {
    /// A name for messages: `Type.property` where known.
    var nodeName: String { get }
    /// The property's epoch (its count of invalidations and sets) now.
    var epochNow: UInt64 { get }
    /// Waits, holding nothing, until no thread holds the property.
    func waitForHolder()
}
