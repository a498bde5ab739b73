import Transforms

extension PropertyPath where Value == Any {
    /// A path given as text, for dynamic cases: observable property names separated by dots,
    /// such as `"currentUser.address.zipCode"`. A last component `*` stands for every observable
    /// property of the object it reaches; the end value is then the `(property: String,
    /// value: Any)` that changed. A `*` in the middle fans out: `"currentUser.*.zipCode"`
    /// follows every observable property of the user, and from each the rest of the path (see
    /// ``PropertyPath/init(everyPropertyHolding:)`` for the rules).
    ///
    /// ```swift
    /// let zip = try PropertyPath<UserCache, Any>("currentUser.address.zipCode")
    /// ```
    ///
    /// The names are resolved by reflection each time the path is wired to an object (never per
    /// message). Observable properties are `Var` properties and `@ObservableVar` properties.
    ///
    /// The grammar also has the forms that observable collections will use: `#3` (the element
    /// at index 3, whichever it is), `3` (the element at index 3 when the observation starts,
    /// followed as it moves) and `count`. Until then, an element form is an error when it is
    /// resolved on an object (``PathError/notACollection(_:type:path:)``). A backslash makes the
    /// next character part of a name, for keys that contain `.` or `\` or start with `#`, `*`
    /// or a digit: `"files.readme\\.md"`, `"tags.\\#swift"`, `"scores.\\3d"`.
    ///
    /// - Throws: ``PathError/malformed(path:reason:)`` for text that does not follow the grammar:
    ///   empty text or components, a `#` without an index, an unescaped component that starts
    ///   with a digit but is no index, or a lone backslash at the end.
    ///   Unknown names are found when the path is observed from a root (see
    ///   ``ObservedPath/init(_:path:fileID:line:)``).
    public init(_ text: String) throws(PathError) {
        let tokens = try StringPathGrammar.parse(text)
        self.init(
            components: tokens.indices.map { index in
                tokens[index] == .everyProperty && index < tokens.count - 1
                    ? PathComponent(fanningOut: { PathComponent(fanningOutAnything: $0) })
                    : PathComponent(tokens[index], in: text)
            })
    }
}

extension ObservedPath where Value == Any {
    /// Starts tracking the path given as text from `root`.
    ///
    /// ```swift
    /// let zip = try ObservedPath(cache, path: "currentUser.address.zipCode")
    /// ```
    ///
    /// - Throws: ``PathError`` if the text is malformed, or if a component does not fit the
    ///   object that the path reaches now there: an object with no observable property of that
    ///   name (the error names the property, the type and what it has), an element component on
    ///   an object that is not a collection, or a component after a property holding a value
    ///   that is not an object. A component that does not fit an object the path reaches only
    ///   later makes the rest of the path unreachable and is reported through
    ///   ``PathDiagnostics``. The same resolver decides both, as the path is wired.
    public convenience init(
        _ root: Root, path text: String, fileID: StaticString = #fileID, line: UInt = #line
    ) throws(PathError) {
        let path = try PropertyPath<Root, Any>(text)
        self.init(
            root, path, site: DeclarationSite(fileID: fileID, line: line),
            collectingProblems: true)
        if let problem = wiringProblem {
            stop()
            throw problem
        }
    }
}

extension Observer {
    /// Observes the end value of the path given as text from `root` (see
    /// ``ObservedPath/init(_:path:fileID:line:)``); `receive` gets the new value, or `nil` while
    /// the path is unreachable.
    ///
    /// ```swift
    /// try observer.observe(cache, path: "currentUser.address.zipCode") { zip in }
    /// ```
    ///
    /// Like the typed form, it lasts until the observer dies, `observer.stopObserving(root)`,
    /// `observer.stopObserving()` or the root's death, and returns the path, to keep or ignore.
    /// With `options: .initial`, `receive` gets the current end value at once.
    @discardableResult
    public func observe<Root: AnyObject>(
        _ root: Root, path text: String, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line, receive: @escaping (Any?) -> Void
    ) throws(PathError) -> ObservedPath<Root, Any> {
        let observed = try ObservedPath(root, path: text, fileID: fileID, line: line)
        observe(
            observed, root: root, options: options,
            site: DeclarationSite(fileID: fileID, line: line)
        ) {
            receive($0.new)
        }
        return observed
    }

    /// Observes the end value of the path given as text from `root`, as
    /// ``observe(_:path:options:fileID:line:receive:)`` does, but `receive` gets each change as
    /// an ``Update`` of the old and the new end value (`nil` while unreachable).
    ///
    /// ```swift
    /// try observer.observeUpdates(cache, path: "currentUser.name") { update in }
    /// ```
    @discardableResult
    public func observeUpdates<Root: AnyObject>(
        _ root: Root, path text: String, options: ObservationOptions = [],
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Update<Any?>) -> Void
    ) throws(PathError) -> ObservedPath<Root, Any> {
        let observed = try ObservedPath(root, path: text, fileID: fileID, line: line)
        observe(
            observed, root: root, options: options,
            site: DeclarationSite(fileID: fileID, line: line), receive: receive)
        return observed
    }
}
