import Transforms

/// How an observer files its path observations: under their root, so that
/// `observer.stopObserving(root)` and `observer.isObserving(root)` reach them as they reach the
/// observations of the root itself.
enum PathRoot {
    /// The identity a path observation from `root` is filed under: that of the root's messenger
    /// core when the root is an observable object (where its own observations are filed), else
    /// the root's.
    static func group(of root: AnyObject) -> ObjectIdentifier {
        func core<Observable: ObservableObject>(of observable: Observable) -> AnyObject {
            observable.messenger.core
        }
        guard let observable = root as? any ObservableObject else { return ObjectIdentifier(root) }
        return ObjectIdentifier(core(of: observable))
    }
}

extension Observer {
    /// Ends every path observation from `root` by this observer: ad hoc paths
    /// (`observe(root, …)`, `observe(root, path:)`) and coalesced ones (`observeCoalesced`).
    /// Harmless if there is none, or if `root` is nil. (For a root that is an observable object,
    /// `stopObserving(_:)` ends its own observations and these together.)
    ///
    /// ```swift
    /// viewModel.observe(document, \.$owner, \.$name) { name in }
    /// viewModel.stopObserving(document)
    /// ```
    ///
    /// - Complexity: Amortized O(1) expected per observation ended, however many other
    ///   observations the observer has.
    public func stopObserving<Root: AnyObject>(_ root: Root?) {
        guard let root else { return }
        receiver.endObservations(inGroup: PathRoot.group(of: root))
    }

    /// Whether this observer has at least one running path observation from `root` (or, for a
    /// root that is an observable object, an observation of the root itself).
    ///
    /// ```swift
    /// if !viewModel.isObserving(document) { viewModel.observe(document, \.$title) { _ in } }
    /// ```
    public func isObserving<Root: AnyObject>(_ root: Root) -> Bool {
        receiver.isObserving(inGroup: PathRoot.group(of: root))
    }

    /// Ends this observer's observations of `path`: those of the path as an object, and the ad
    /// hoc observation that returned it (`observe(root, …)`). Other observers' observations of
    /// the path go on (while something holds the path). Harmless if there is none, or if
    /// `path` is nil.
    ///
    /// ```swift
    /// let zip = viewModel.observe(cache, \.$currentUser, \.$address, \.$zipCode) { _ in }
    /// viewModel.stopObserving(zip)
    /// ```
    public func stopObserving<Root: AnyObject, Value>(_ path: ObservedPath<Root, Value>?) {
        guard let path else { return }
        receiver.endObservations(inGroup: ObjectIdentifier(path.messenger.core))
        path.adHocObservation(ownedBy: receiver)?.end()
    }

    /// Whether this observer observes `path`: as an object, or through the ad hoc observation
    /// that returned it.
    public func isObserving<Root: AnyObject, Value>(_ path: ObservedPath<Root, Value>) -> Bool {
        receiver.isObserving(inGroup: ObjectIdentifier(path.messenger.core))
            || path.adHocObservation(ownedBy: receiver) != nil
    }
}
