import Transforms

// `observer.observeUpdates(root, \.$a, \.$b, …) { update in }`: the typed paths of
// `Observer+Paths.swift`, delivering the old and the new end value (KVO's `.old` and `.new`,
// THObserver's old-and-new block). The same overloads, each building a `PropertyPath` for the
// one implementation.

extension Observer {
    /// Observes the end value of the path of 1 property from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(settings, \.$volume) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<Root: AnyObject, P1: ObservableProperty>(
        _ root: Root, _ p1: KeyPath<Root, P1>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P1.Value?>) -> Void
    ) -> ObservedPath<Root, P1.Value> {
        observeUpdates(
            root, PropertyPath(p1), options: options, fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 2 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(document, \.$owner, \.$name) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, P1: ObservableProperty, P2: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>,
        options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P2.Value?>) -> Void
    ) -> ObservedPath<Root, P2.Value> where P1.Value == A {
        observeUpdates(
            root, PropertyPath(p1).appending(p2), options: options, fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 2 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(document, \.$owner, \.$name) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, P1: ObservableProperty, P2: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>,
        options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P2.Value?>) -> Void
    ) -> ObservedPath<Root, P2.Value> where P1.Value == A? {
        observeUpdates(
            root, PropertyPath(p1).appending(p2), options: options, fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 3 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(cache, \.$currentUser, \.$address, \.$zipCode) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, B: AnyObject, P1: ObservableProperty, P2: ObservableProperty,
        P3: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P3.Value?>) -> Void
    ) -> ObservedPath<Root, P3.Value> where P1.Value == A, P2.Value == B {
        observeUpdates(
            root, PropertyPath(p1).appending(p2).appending(p3), options: options, fileID: fileID,
            line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 3 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(cache, \.$currentUser, \.$address, \.$zipCode) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, B: AnyObject, P1: ObservableProperty, P2: ObservableProperty,
        P3: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P3.Value?>) -> Void
    ) -> ObservedPath<Root, P3.Value> where P1.Value == A, P2.Value == B? {
        observeUpdates(
            root, PropertyPath(p1).appending(p2).appending(p3), options: options, fileID: fileID,
            line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 3 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(cache, \.$currentUser, \.$address, \.$zipCode) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, B: AnyObject, P1: ObservableProperty, P2: ObservableProperty,
        P3: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P3.Value?>) -> Void
    ) -> ObservedPath<Root, P3.Value> where P1.Value == A?, P2.Value == B {
        observeUpdates(
            root, PropertyPath(p1).appending(p2).appending(p3), options: options, fileID: fileID,
            line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 3 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(cache, \.$currentUser, \.$address, \.$zipCode) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, B: AnyObject, P1: ObservableProperty, P2: ObservableProperty,
        P3: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P3.Value?>) -> Void
    ) -> ObservedPath<Root, P3.Value> where P1.Value == A?, P2.Value == B? {
        observeUpdates(
            root, PropertyPath(p1).appending(p2).appending(p3), options: options, fileID: fileID,
            line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(app, \.$session, \.$user, \.$address, \.$zipCode) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P4.Value?>) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A, P2.Value == B, P3.Value == C {
        observeUpdates(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(app, \.$session, \.$user, \.$address, \.$zipCode) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P4.Value?>) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A, P2.Value == B, P3.Value == C? {
        observeUpdates(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(app, \.$session, \.$user, \.$address, \.$zipCode) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P4.Value?>) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A, P2.Value == B?, P3.Value == C {
        observeUpdates(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(app, \.$session, \.$user, \.$address, \.$zipCode) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P4.Value?>) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A, P2.Value == B?, P3.Value == C? {
        observeUpdates(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(app, \.$session, \.$user, \.$address, \.$zipCode) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P4.Value?>) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A?, P2.Value == B, P3.Value == C {
        observeUpdates(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(app, \.$session, \.$user, \.$address, \.$zipCode) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P4.Value?>) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A?, P2.Value == B, P3.Value == C? {
        observeUpdates(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(app, \.$session, \.$user, \.$address, \.$zipCode) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P4.Value?>) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A?, P2.Value == B?, P3.Value == C {
        observeUpdates(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }

    /// Observes the end value of the path of 4 properties from `root`; `receive` gets an
    /// ``Update`` of it (old and new; `nil` while unreachable) whenever it changes.
    ///
    /// ```swift
    /// observer.observeUpdates(app, \.$session, \.$user, \.$address, \.$zipCode) { update in }
    /// ```
    @discardableResult @inlinable
    public func observeUpdates<
        Root: AnyObject, A: AnyObject, B: AnyObject, C: AnyObject, P1: ObservableProperty,
        P2: ObservableProperty, P3: ObservableProperty, P4: ObservableProperty
    >(
        _ root: Root, _ p1: KeyPath<Root, P1>, _ p2: KeyPath<A, P2>, _ p3: KeyPath<B, P3>,
        _ p4: KeyPath<C, P4>, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<P4.Value?>) -> Void
    ) -> ObservedPath<Root, P4.Value> where P1.Value == A?, P2.Value == B?, P3.Value == C? {
        observeUpdates(
            root, PropertyPath(p1).appending(p2).appending(p3).appending(p4), options: options,
            fileID: fileID, line: line,
            receive: receive)
    }
}
