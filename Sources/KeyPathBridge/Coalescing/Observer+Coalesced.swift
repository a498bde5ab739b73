import Transforms

extension Observer {
    /// Observes several paths from `root` with one block that a ``Coalescer`` runs at most once
    /// per flush, however many of the paths changed (EBN's `whenAny`, HTB's multiple key paths).
    ///
    /// ```swift
    /// observer.observeCoalesced(
    ///     cache, PropertyPath(\.$currentUser).appending(\.$name),
    ///     PropertyPath(\.$currentUser).appending(\.$address)
    /// ) { observer, cache in
    ///     observer.showUser(of: cache)
    /// }
    /// ```
    ///
    /// The block receives the observer and the root, so it need not capture either; both are
    /// held strongly only from the moment a change schedules the block until it ran (otherwise
    /// weakly: a block whose observer or root is gone is not run). The observation lasts as long
    /// as the observer, or until `observer.stopObserving(root)`, `observer.stopObserving()`, or
    /// the returned ``CoalescedObservation``'s `stop()`; keep that handle to stop it alone (or
    /// one of its paths), or to run or schedule its block by hand. Starting sends nothing. Blocks
    /// run in `coalescer`'s flushes: ``Coalescer/main`` (the main queue) by default.
    ///
    /// A component of a string-built path (`PropertyPath<Root, Any>("name")`) that does not fit
    /// the object it reaches is reported through ``PathDiagnostics``; the form that takes the
    /// paths as text (``observeCoalesced(_:paths:in:fileID:line:_:)``) throws instead.
    @discardableResult
    public func observeCoalesced<Root: AnyObject, each Value>(
        _ root: Root, _ paths: repeat PropertyPath<Root, each Value>,
        in coalescer: Coalescer = .main, fileID: StaticString = #fileID, line: UInt = #line,
        _ block: @escaping (Self, Root) -> Void
    ) -> CoalescedObservation {
        let site = DeclarationSite(fileID: fileID, line: line)
        let entry = coalescedEntry(root, block)
        // Filed under the root, for `stopObserving(root)` and `isObserving(root)`.
        let group = PathRoot.group(of: root)
        // A collection's part can end (an object-following element that leaves): only the
        // path's wiring ends its observation then.
        let rootNeverEndsAPart = !(root is any PathCollection)
        var parts: [CoalescedObservation.Part] = []
        for path in repeat each paths {
            if rootNeverEndsAPart, path.components.count == 1,
                let observe = path.components[0].observeChanges
            {
                // One property of the root never re-wires: observe it directly, without reading
                // its values (no generic metadata per change) or holding it.
                let connection = observe(root, receiver, group, site) {
                    coalescer.schedule(entry)
                }
                parts.append(.connection(.init(connection: connection)))
                continue
            }
            if rootNeverEndsAPart, path.components.count == 1,
                path.components[0].isOwnedByReceiver
            {
                // One variable of the root never re-wires: observe it directly.
                do throws(PathError) {
                    let link = try path.components[0].attach(root, receiver, group, site, false) {
                        _, _, _ in coalescer.schedule(entry)
                    }
                    // The handle keeps the link: it must not keep the value it started with.
                    _ = link.takeStart()
                    parts.append(.link(UncheckedSendable(link)))
                } catch {
                    PathDiagnostics.report(error)  // a string path's name the root lacks
                    parts.append(.connection(.init(connection: nil)))  // observes nothing
                }
                continue
            }
            let observed = ObservedPath(root, path, fileID: fileID, line: line)
            parts.append(observeCoalesced(observed, root: root, site: site, entry, coalescer))
        }
        return CoalescedObservation(parts: parts, entry: entry, coalescer: coalescer)
    }

    /// Observes several paths given as text from `root` with one block that a ``Coalescer``
    /// runs at most once per flush, like the form that takes property paths.
    ///
    /// ```swift
    /// try observer.observeCoalesced(cache, paths: "currentUser.name", "currentUser.address") {
    ///     observer, cache in observer.showUser(of: cache)
    /// }
    /// ```
    ///
    /// - Throws: the ``PathError`` that ``ObservedPath/init(_:path:fileID:line:)`` throws for the
    ///   first path that is malformed or does not fit the objects it reaches now; nothing is
    ///   observed then. A component that does not fit an object reached only later is reported
    ///   through ``PathDiagnostics``.
    @discardableResult
    public func observeCoalesced<Root: AnyObject>(
        _ root: Root, paths texts: String..., in coalescer: Coalescer = .main,
        fileID: StaticString = #fileID, line: UInt = #line,
        _ block: @escaping (Self, Root) -> Void
    ) throws(PathError) -> CoalescedObservation {
        // Every path is wired (and checked) before any is observed.
        var observedPaths: [ObservedPath<Root, Any>] = []
        for text in texts {
            observedPaths.append(try ObservedPath(root, path: text, fileID: fileID, line: line))
        }
        let site = DeclarationSite(fileID: fileID, line: line)
        let entry = coalescedEntry(root, block)
        let parts = observedPaths.map {
            observeCoalesced($0, root: root, site: site, entry, coalescer)
        }
        return CoalescedObservation(parts: parts, entry: entry, coalescer: coalescer)
    }

    /// The coalescer's entry for `block`: it runs only while the observer and `root` live.
    private func coalescedEntry<Root: AnyObject>(
        _ root: Root, _ block: @escaping (Self, Root) -> Void
    ) -> Coalescer.Entry {
        Coalescer.Entry { [weak self, weak root] in
            guard let observer = self, let root else { return nil }
            return { block(observer, root) }
        }
    }

    /// Starts the ad hoc observation of `observed` that schedules `entry`; the observation
    /// (owned by this observer) holds the path and the entry.
    private func observeCoalesced<Root: AnyObject, Value>(
        _ observed: ObservedPath<Root, Value>, root: Root, site: DeclarationSite,
        _ entry: Coalescer.Entry, _ coalescer: Coalescer
    ) -> CoalescedObservation.Part {
        observe(observed, root: root, options: [], site: site) { _ in coalescer.schedule(entry) }
        return .connection(.init(connection: observed.adHocObservation))
    }

    /// Observes several properties of `root` with one block that a ``Coalescer`` runs at most
    /// once per flush, like the form that takes property paths.
    ///
    /// ```swift
    /// observer.observeCoalesced(person, \.$firstName, \.$lastName) { observer, person in
    ///     observer.label.text = "\(person.firstName) \(person.lastName)"
    /// }
    /// ```
    @discardableResult
    public func observeCoalesced<Root: AnyObject, each Property: ObservableProperty>(
        _ root: Root, _ properties: repeat KeyPath<Root, each Property>,
        in coalescer: Coalescer = .main, fileID: StaticString = #fileID, line: UInt = #line,
        _ block: @escaping (Self, Root) -> Void
    ) -> CoalescedObservation {
        observeCoalesced(
            root, repeat PropertyPath(each properties), in: coalescer, fileID: fileID,
            line: line, block)
    }
}
