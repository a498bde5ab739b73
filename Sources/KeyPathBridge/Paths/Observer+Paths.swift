import Transforms

// `observer.observe(root, \.$a, \.$b, …) { value in }` for paths of 1 to 4 properties, each any
// `ObservableProperty`. Each intermediate property may hold an object or an optional object, and
// the next key path is rooted at that object's type, so each arity has one overload per
// combination (2^(n-1)); new kinds of property need none. Every overload builds a
// `PropertyPath` and calls the one implementation below, and returns the path.

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
    ///
    /// With `options: .initial`, `receive` gets the current end value at once (see
    /// ``ObservationOptions/initial``); without, starting sends nothing.
    @discardableResult @inlinable
    public func observe<Root: AnyObject, Value>(
        _ root: Root, _ path: PropertyPath<Root, Value>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Value?) -> Void
    ) -> ObservedPath<Root, Value> {
        let observed = ObservedPath(root, path, fileID: fileID, line: line)
        // The handler, built here to be specialized for `Value`, holds the path as a plain
        // object.
        let held: AnyObject = observed
        startAdHocObservation(
            of: observed, root: root, options: options,
            site: DeclarationSite(fileID: fileID, line: line)
        ) { update in
            withExtendedLifetime(held) { receive(update.new) }
        }
        return observed
    }

    /// Observes the end value of `path` from `root`, as `observe(root, path)` does, but
    /// `receive` gets each change as an ``Update``: the old and the new end value (`nil` while
    /// unreachable), as an observer of the ``ObservedPath`` does.
    ///
    /// ```swift
    /// observer.observeUpdates(cache, PropertyPath(\.$currentUser).appending(\.$name)) { update in
    ///     print("\(update.old ?? "-") → \(update.new ?? "-")")
    /// }
    /// ```
    ///
    /// With `options: .initial`, the first update is `Update(current, current)`.
    @discardableResult @inlinable
    public func observeUpdates<Root: AnyObject, Value>(
        _ root: Root, _ path: PropertyPath<Root, Value>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<Value?>) -> Void
    ) -> ObservedPath<Root, Value> {
        let observed = ObservedPath(root, path, fileID: fileID, line: line)
        let held: AnyObject = observed
        startAdHocObservation(
            of: observed, root: root, options: options,
            site: DeclarationSite(fileID: fileID, line: line)
        ) { update in
            withExtendedLifetime(held) { receive(update) }
        }
        return observed
    }

    /// Starts the ad hoc observation of `observed`, a path from `root`: it holds the path, ends
    /// with the observer (or a stop), and is filed under the root, for `stopObserving(root)`
    /// and `isObserving(root)`.
    func observe<Root: AnyObject, Value>(
        _ observed: ObservedPath<Root, Value>, root: Root, options: ObservationOptions,
        site: DeclarationSite, receive: @escaping (Update<Value?>) -> Void
    ) {
        // The handler holds the path as a plain object: keeping it alive then needs no generic
        // metadata per delivery.
        let path: AnyObject = observed
        startAdHocObservation(of: observed, root: root, options: options, site: site) { update in
            withExtendedLifetime(path) { receive(update) }
        }
    }

    /// Starts the ad hoc observation of `observed` with `handler`, which holds the path (see
    /// ``observe(_:root:site:receive:)``).
    @usableFromInline
    func startAdHocObservation<Root: AnyObject, Value>(
        of observed: ObservedPath<Root, Value>, root: Root, options: ObservationOptions,
        site: DeclarationSite, handler: @escaping (Update<Value?>) -> Void
    ) {
        let connection = observed.connect(
            options: options, receiver: receiver, site: site,
            groupedUnder: PathRoot.group(of: root), handler: .message(handler))
        observed.belongs(to: connection)
        // A path that is over already (it cannot observe its root) frees this observation now;
        // one that ends later ends it itself.
        if !observed.isActive { connection.end() }
    }

    /// Observes the end value of the path of 1 property from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(settings, \.$volume) { volume in }
    /// ```
    @discardableResult @inlinable
    public func observe<Root: AnyObject, P1: ObservableProperty>(
        _ root: Root, _ p1: KeyPath<Root, P1>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P1.Value?) -> Void
    ) -> ObservedPath<Root, P1.Value> {
        observe(
            root, PropertyPath(p1), options: options, fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 2 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(document, \.$owner, \.$name) { name in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, P1: ObservableProperty, P2: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>,
        options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P2.Value?) -> Void
    ) -> ObservedPath<Root, P2.Value> where P1.Value == A {
        observe(
            root, PropertyPath(p1).appending(p2), options: options, fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 2 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(document, \.$owner, \.$name) { name in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, P1: ObservableProperty, P2: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>,
        options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P2.Value?) -> Void
    ) -> ObservedPath<Root, P2.Value> where P1.Value == A? {
        observe(
            root, PropertyPath(p1).appending(p2), options: options, fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 3 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, B: AnyObject, P1: ObservableProperty, P2: ObservableProperty,
        P3: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P3.Value?) -> Void
    ) -> ObservedPath<Root, P3.Value> where P1.Value == A, P2.Value == B {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3), options: options, fileID: fileID,
            line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 3 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, B: AnyObject, P1: ObservableProperty, P2: ObservableProperty,
        P3: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P3.Value?) -> Void
    ) -> ObservedPath<Root, P3.Value> where P1.Value == A, P2.Value == B? {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3), options: options, fileID: fileID,
            line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 3 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, B: AnyObject, P1: ObservableProperty, P2: ObservableProperty,
        P3: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P3.Value?) -> Void
    ) -> ObservedPath<Root, P3.Value> where P1.Value == A?, P2.Value == B {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3), options: options, fileID: fileID,
            line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 3 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, B: AnyObject, P1: ObservableProperty, P2: ObservableProperty,
        P3: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P3.Value?) -> Void
    ) -> ObservedPath<Root, P3.Value> where P1.Value == A?, P2.Value == B? {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3), options: options, fileID: fileID,
            line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P4.Value?) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A, P2.Value == B, P3.Value == C {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P4.Value?) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A, P2.Value == B, P3.Value == C? {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P4.Value?) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A, P2.Value == B?, P3.Value == C {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P4.Value?) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A, P2.Value == B?, P3.Value == C? {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P4.Value?) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A?, P2.Value == B, P3.Value == C {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P4.Value?) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A?, P2.Value == B, P3.Value == C? {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P4.Value?) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A?, P2.Value == B?, P3.Value == C {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets the new
    /// value, or `nil` while an intermediate object is `nil` (unreachable).
    ///
    /// ```swift
    /// observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode) { zip in }
    /// ```
    @discardableResult @inlinable
    public func observe<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (P4.Value?) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A?, P2.Value == B?, P3.Value == C? {
        observe(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }
}
