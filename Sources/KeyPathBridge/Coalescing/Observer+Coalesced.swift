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
    /// as the observer, or until `observer.stopObserving(root)` or `observer.stopObserving()`.
    /// Starting sends nothing. Blocks run
    /// in `coalescer`'s flushes: ``Coalescer/main`` (the main queue) by default.
    public func observeCoalesced<Root: AnyObject, each Value>(
        _ root: Root, _ paths: repeat PropertyPath<Root, each Value>,
        in coalescer: Coalescer = .main, fileID: StaticString = #fileID, line: UInt = #line,
        _ block: @escaping (Self, Root) -> Void
    ) {
        let site = DeclarationSite(fileID: fileID, line: line)
        let entry = Coalescer.Entry { [weak self, weak root] in
            guard let observer = self, let root else { return nil }
            return { block(observer, root) }
        }
        // Filed under the root, for `stopObserving(root)` and `isObserving(root)`.
        let group = PathRoot.group(of: root)
        for path in repeat each paths {
            if path.components.count == 1, let observe = path.components[0].observeChanges {
                // One property of the root never re-wires: observe it directly, without reading
                // its values (no generic metadata per change) or holding it.
                observe(root, receiver, group, site) { coalescer.schedule(entry) }
                continue
            }
            if path.components.count == 1, path.components[0].isOwnedByReceiver {
                // One variable of the root never re-wires: observe it directly.
                do throws(PathError) {
                    _ = try path.components[0].attach(root, receiver, group, site, false) {
                        _, _, _ in coalescer.schedule(entry)
                    }
                } catch {
                    PathDiagnostics.report(error)  // a string path's name the root lacks
                }
                continue
            }
            let observed = ObservedPath(root, path, fileID: fileID, line: line)
            // The observation (owned by this observer) holds the observed path and the entry.
            observe(observed, root: root, options: [], site: site) { _ in coalescer.schedule(entry)
            }
        }
    }

    /// Observes several properties of `root` with one block that a ``Coalescer`` runs at most
    /// once per flush, like the form that takes property paths.
    ///
    /// ```swift
    /// observer.observeCoalesced(person, \.$firstName, \.$lastName) { observer, person in
    ///     observer.label.text = "\(person.firstName) \(person.lastName)"
    /// }
    /// ```
    public func observeCoalesced<Root: AnyObject, each Property: ObservableProperty>(
        _ root: Root, _ properties: repeat KeyPath<Root, each Property>,
        in coalescer: Coalescer = .main, fileID: StaticString = #fileID, line: UInt = #line,
        _ block: @escaping (Self, Root) -> Void
    ) {
        observeCoalesced(
            root, repeat PropertyPath(each properties), in: coalescer, fileID: fileID,
            line: line, block)
    }
}
