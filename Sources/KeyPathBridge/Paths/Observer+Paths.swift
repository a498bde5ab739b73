import Transforms

// `observer.observe(root, \.$a, \.$b, …) { value in }` for paths of 1 to 4 properties. Each
// intermediate property may hold an object or an optional object, so the arities are spelled out
// by hand (every overload builds a `PropertyPath` and calls the one implementation below); the
// engine rebuild (issue 10) makes them generic over a property protocol. Each returns the path.

extension Observer {
    /// Observes the end value of `path` from `root`: `receive` gets the new end value, or `nil`
    /// while the path is unreachable, whenever it changes (see ``ObservedPath``).
    ///
    /// ```swift
    /// observer.observe(cache, PropertyPath(\.$currentUser).appending(\.$address)) { address in }
    /// ```
    ///
    /// The observation lasts as long as the observer, or until `observer.stopObserving(root)`,
    /// `observer.stopObserving()`, or the root's death. It returns the path: ignore it, or keep
    /// it to read ``ObservedPath/value`` or to ``ObservedPath/stop()`` this one observation.
    ///
    /// ```swift
    /// let zip = observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) { zip in }
    /// zip.value    // the current end value
    /// zip.stop()   // ends this observation only
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, Value>(
        _ root: Root, _ path: PropertyPath<Root, Value>, fileID: StaticString = #fileID,
        line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        let observed = ObservedPath(root, path, fileID: fileID, line: line)
        observe(observed, root: root, site: DeclarationSite(fileID: fileID, line: line)) {
            receive($0.new)
        }
        return observed
    }

    /// Starts the ad hoc observation of `observed`, a path from `root`: it holds the path, ends
    /// with the observer (or a stop), and is filed under the root, for `stopObserving(root)`
    /// and `isObserving(root)`.
    func observe<Root: AnyObject, Value>(
        _ observed: ObservedPath<Root, Value>, root: Root, site: DeclarationSite,
        receive: @escaping (Update<Value?>) -> Void
    ) {
        _ = observed.messenger.core.connect(
            receiver: receiver, site: site, groupedUnder: PathRoot.group(of: root),
            handler: .message { [observed] update in
                withExtendedLifetime(observed) { receive(update) }
            })
    }

    /// Observes the end value of the path of 1 property from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(settings, \.$volume) { volume in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(root, PropertyPath(p1), fileID: fileID, line: line, receive: receive)
    }

    /// Observes the end value of the path of 2 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(document, \.$owner, \.$name) { name in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A>>, _ p2: KeyPath<A, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(root, PropertyPath(p1).appending(p2), fileID: fileID, line: line, receive: receive)
    }

    /// Observes the end value of the path of 2 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(document, \.$owner, \.$name) { name in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A?>>, _ p2: KeyPath<A, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(root, PropertyPath(p1).appending(p2), fileID: fileID, line: line, receive: receive)
    }

    /// Observes the end value of the path of 3 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, B: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A>>, _ p2: KeyPath<A, Variable<B>>,
        _ p3: KeyPath<B, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3), fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 3 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, B: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A>>, _ p2: KeyPath<A, Variable<B?>>,
        _ p3: KeyPath<B, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3), fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 3 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, B: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A?>>, _ p2: KeyPath<A, Variable<B>>,
        _ p3: KeyPath<B, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3), fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 3 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, B: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A?>>, _ p2: KeyPath<A, Variable<B?>>,
        _ p3: KeyPath<B, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3), fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A>>, _ p2: KeyPath<A, Variable<B>>,
        _ p3: KeyPath<B, Variable<C>>, _ p4: KeyPath<C, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), fileID: fileID,
            line: line, receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A>>, _ p2: KeyPath<A, Variable<B>>,
        _ p3: KeyPath<B, Variable<C?>>, _ p4: KeyPath<C, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), fileID: fileID,
            line: line, receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A>>, _ p2: KeyPath<A, Variable<B?>>,
        _ p3: KeyPath<B, Variable<C>>, _ p4: KeyPath<C, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), fileID: fileID,
            line: line, receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A>>, _ p2: KeyPath<A, Variable<B?>>,
        _ p3: KeyPath<B, Variable<C?>>, _ p4: KeyPath<C, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), fileID: fileID,
            line: line, receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A?>>, _ p2: KeyPath<A, Variable<B>>,
        _ p3: KeyPath<B, Variable<C>>, _ p4: KeyPath<C, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), fileID: fileID,
            line: line, receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A?>>, _ p2: KeyPath<A, Variable<B>>,
        _ p3: KeyPath<B, Variable<C?>>, _ p4: KeyPath<C, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), fileID: fileID,
            line: line, receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A?>>, _ p2: KeyPath<A, Variable<B?>>,
        _ p3: KeyPath<B, Variable<C>>, _ p4: KeyPath<C, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), fileID: fileID,
            line: line, receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult
    public func observe<Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, Value>(
        _ root: Root, _ p1: KeyPath<Root, Variable<A?>>, _ p2: KeyPath<A, Variable<B?>>,
        _ p3: KeyPath<B, Variable<C?>>, _ p4: KeyPath<C, Variable<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), fileID: fileID,
            line: line, receive: receive)
    }
}
