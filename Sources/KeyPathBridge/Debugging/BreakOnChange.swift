import Transforms

extension Inspector {
    /// Stops in the debugger whenever the end value of `path` from the object changes, and logs
    /// the change: the path, the previous and the new value, the author, and where the watch was
    /// set. It follows re-wiring: replacing an object along the path watches the new one.
    ///
    /// ```swift
    /// Inspector(cache).breakOnChange(PropertyPath(\.$currentUser).appending(\.$name))
    /// // Herald: UserCache.currentUser.name changed: "Ann" → "Anne" (by Variable<String>;
    /// //   watched at App/AppDelegate.swift:20)
    /// ```
    ///
    /// It stops (with `SIGTRAP`, like a breakpoint; continue to go on) only while a debugger is
    /// attached; otherwise it only logs. The watch runs until the object dies or you call
    /// `stop()` on the returned path; you need not hold it. When the object dies, the watch ends,
    /// after logging a last change to `unreachable` if the path was reachable. (When the object
    /// is an `@Observable` one, the path cannot hear of its death: the next `breakOnChange`, on
    /// any object, finds it dead, and the watch logs that last line, on that call's thread (or
    /// on that of another call running at the same time), and ends then. An object whose first
    /// property on the path outlives it is found dead at that property's next change.) The
    /// lines go to `log` if you pass it, to standard error otherwise.
    @discardableResult
    public func breakOnChange<Value>(
        _ path: PropertyPath<Object, Value>, fileID: StaticString = #fileID, line: UInt = #line,
        log: (@Sendable (String) -> Void)? = nil
    ) -> ObservedPath<Object, Value> {
        watch(
            ObservedPath(object, path, fileID: fileID, line: line), named: { path.names },
            fileID: fileID, line: line, log: log)
    }

    /// Stops in the debugger (or logs) whenever the end value of the path given as text
    /// changes; see ``breakOnChange(_:fileID:line:log:)-(PropertyPath<Object,Value>,_,_,_)``.
    ///
    /// ```swift
    /// try Inspector(cache).breakOnChange("currentUser.address.zipCode")
    /// ```
    ///
    /// - Throws: ``PathError`` as ``ObservedPath/init(_:path:fileID:line:)`` does.
    @discardableResult
    public func breakOnChange(
        _ path: String, fileID: StaticString = #fileID, line: UInt = #line,
        log: (@Sendable (String) -> Void)? = nil
    ) throws(PathError) -> ObservedPath<Object, Any> {
        watch(
            try ObservedPath(object, path: path, fileID: fileID, line: line), named: { path },
            fileID: fileID, line: line, log: log)
    }

    /// Registers the watch of `observed`; `names` spells its path at the time of a change (a
    /// typed path learns some names as it attaches).
    private func watch<Value>(
        _ observed: ObservedPath<Object, Value>, named names: @escaping () -> String,
        fileID: StaticString, line: UInt, log: (@Sendable (String) -> Void)?
    ) -> ObservedPath<Object, Value> {
        let site = DeclarationSite(fileID: fileID, line: line)
        PathWatches.shared.add(observed, fileID: fileID, line: line) { update, author in
            let line =
                "Herald: \(Object.self).\(names()) changed: \(describe(update.old)) → "
                + "\(describe(update.new)) (by \(type(of: author)); watched at \(site))"
            if let log { log(line) } else { Debugger.log(line) }
            if Debugger.isAttached { Debugger.stop() }
        }
        return observed
    }
}

/// A value for a log line: `unreachable`, `nil`, or the value as `debugPrint` shows it.
private func describe(_ value: Any?) -> String {
    guard var value else { return "unreachable" }
    while let optional = value as? any _OptionalType {
        guard let wrapped = optional._wrappedValue else { return "nil" }
        value = wrapped
    }
    return String(reflecting: value)
}

/// The debug watches that nobody else holds: each lives until its root dies or it is stopped.
final class PathWatches: @unchecked Sendable {
    static let shared = PathWatches()

    /// One watch: its path and the receiver of its observation.
    private final class Watch: Observer {
        let receiver = Receiver()
        let path: AnyObject
        /// Whether the path ended (stopped, or ended with its root).
        let hasEnded: () -> Bool
        /// Ends the path, after its last line, if its root died; nil for a path whose root
        /// tells of its death (it ends on the thread where the root dies, and nothing else
        /// touches it, not even to hold it for a moment).
        let endIfUntoldRootDied: (() -> Void)?

        init<Root, Value>(_ path: ObservedPath<Root, Value>) {
            self.path = path
            hasEnded = { [weak path] in path?.hasEnded ?? true }
            endIfUntoldRootDied =
                path.tracksItsRoot ? { [weak path] in path?.endIfUntoldRootDied() } : nil
        }
    }

    private let lock = Lock()
    @exclusivity(unchecked) private var watches: [Watch] = []

    func add<Root, Value>(
        _ path: ObservedPath<Root, Value>, fileID: StaticString, line: UInt,
        handler: @escaping (Update<Value?>, AnyAuthor) -> Void
    ) {
        let watch = Watch(path)
        watch.observe(path, fileID: fileID, line: line, receive: handler)
        path.whenEnded { [weak self, weak watch] in
            guard let self, let watch else { return }
            self.remove { $0 === watch }
        }
        // Only the others whose root cannot tell of its death, and their paths weakly: a watch
        // that ends meanwhile (on this thread, from a line logged below, or on another) is freed
        // as soon as it is forgotten, and a path rooted at a Herald object is never touched.
        let others = lock.withLock {
            watches.append(watch)
            return watches.compactMap { $0 === watch ? nil : $0.endIfUntoldRootDied }
        }
        // A path whose root died and cannot tell of it (an @Observable root) ends here, after
        // its last line, and its end handler forgets it. Any other path ends with its root, on
        // the thread where the root dies; until then it is kept, so as to log its last line.
        for endIfUntoldRootDied in others { endIfUntoldRootDied() }
        // This watch's path may have ended before its end handler was set (every other one was
        // set before its watch was listed). Only its own: another watch that ended is
        // forgotten, and freed, by its end handler, on the thread where it ended.
        if watch.hasEnded() { remove { $0 === watch } }
    }

    /// Removes the watches that match; they are released after unlocking.
    private func remove(where shouldRemove: (Watch) -> Bool) {
        let removed = lock.withLock {
            let removed = watches.filter(shouldRemove)
            watches.removeAll(where: shouldRemove)
            return removed
        }
        _ = removed
    }
}
