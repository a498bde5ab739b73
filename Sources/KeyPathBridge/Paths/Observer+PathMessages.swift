import Transforms

// A path that ends at an observable object: the observer receives that object's own messages,
// whichever object the path leads to now (the path re-wires; the object's observation switches
// on Herald's re-wiring engine, as `flatMapLatest` does).

extension Observer {
    /// Observes the messages of the observable object that `path` leads to from `root`,
    /// whichever object that is now: when an object along the path is replaced, the
    /// observation switches to the new end object (and receives nothing while the path is
    /// unreachable).
    ///
    /// ```swift
    /// viewModel.observeMessages(of: app, PropertyPath(\.$workspace).appending(\.$document)) {
    ///     change in viewModel.show(change)
    /// }
    /// ```
    ///
    /// Switching to an object that is an ``ObservableCache`` also delivers its latest message
    /// (the state seen has changed). A message of an object that was replaced is never
    /// delivered after the switch. Like `observe(root, …)`, the observation is filed under the
    /// root, ends with the observer, `stopObserving(root)` or the root's death, and returns the
    /// path to the end object.
    @discardableResult
    public func observeMessages<Root: AnyObject, Object: ObservableObject>(
        of root: Root, _ path: PropertyPath<Root, Object?>, fileID: StaticString = #fileID,
        line: UInt = #line, receive: @escaping (Object.Message) -> Void
    ) -> ObservedPath<Root, Object?> {
        observeMessages(
            of: root, path, site: DeclarationSite(fileID: fileID, line: line), object: { $0 },
            receive: receive)
    }

    /// Observes the messages of the observable object that `path` leads to from `root` (see
    /// the form for a path to an optional object).
    @discardableResult
    public func observeMessages<Root: AnyObject, Object: ObservableObject>(
        of root: Root, _ path: PropertyPath<Root, Object>, fileID: StaticString = #fileID,
        line: UInt = #line, receive: @escaping (Object.Message) -> Void
    ) -> ObservedPath<Root, Object> {
        observeMessages(
            of: root, path, site: DeclarationSite(fileID: fileID, line: line), object: { $0 },
            receive: receive)
    }

    /// Observes the messages of the observable object that the property `p1` of `root` holds,
    /// whichever object that is now. (Longer paths: the form for a ``PropertyPath``.)
    ///
    /// ```swift
    /// viewModel.observeMessages(of: workspace, \.$currentDocument) { change in }
    /// ```
    @discardableResult
    public func observeMessages<Root: AnyObject, P1: ObservableProperty, Object: ObservableObject>(
        of root: Root, _ p1: KeyPath<Root, P1>, fileID: StaticString = #fileID,
        line: UInt = #line, receive: @escaping (Object.Message) -> Void
    ) -> ObservedPath<Root, Object?> where P1.Value == Object? {
        observeMessages(
            of: root, PropertyPath(p1), fileID: fileID, line: line, receive: receive)
    }

    /// Observes the messages of the observable object that the property `p1` of `root` holds.
    @discardableResult
    public func observeMessages<Root: AnyObject, P1: ObservableProperty, Object: ObservableObject>(
        of root: Root, _ p1: KeyPath<Root, P1>, fileID: StaticString = #fileID,
        line: UInt = #line, receive: @escaping (Object.Message) -> Void
    ) -> ObservedPath<Root, Object> where P1.Value == Object {
        observeMessages(
            of: root, PropertyPath(p1), fileID: fileID, line: line, receive: receive)
    }

    /// The one implementation: the path's end value, turned into the object by `object`,
    /// selects the object whose messages the observation forwards.
    func observeMessages<Root: AnyObject, End, Object: ObservableObject>(
        of root: Root, _ path: PropertyPath<Root, End>, site: DeclarationSite,
        object: @escaping (End) -> Object?, receive: @escaping (Object.Message) -> Void
    ) -> ObservedPath<Root, End> {
        let observed = ObservedPath(root, path, site: site, collectingProblems: false)
        let latest = LatestInner<Object>(site: site) { message, _ in receive(message) }
        // The path's observation holds `latest`; when it ends, `latest` ends the object's.
        observe(observed, root: root, options: [], site: site) { [weak observed] update in
            latest.switchTo(update.new.flatMap(object), author: observed ?? latest)
        }
        // Wired to the current end object once the path's observation exists.
        latest.start { [weak observed] in observed?.value.flatMap(object) }
        return observed
    }
}
