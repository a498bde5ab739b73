import Transforms

extension PropertyPath where Value == Any {
    /// A path given as text, for dynamic cases: observable property names separated by dots,
    /// such as `"currentUser.address.zipCode"`. A last component `*` stands for every observable
    /// property of the object it reaches; the end value is then the `(property: String,
    /// value: Any)` that changed.
    ///
    /// ```swift
    /// let zip = try PropertyPath<UserCache, Any>("currentUser.address.zipCode")
    /// ```
    ///
    /// The names are resolved by reflection each time the path is wired to an object (never per
    /// message). Observable properties are `Var` properties and `@ObservableVar` properties.
    ///
    /// - Throws: ``PathError/malformed(path:reason:)`` for empty text or components, or a `*`
    ///   that is not last. Unknown names are found when the path is observed from a root (see
    ///   ``ObservedPath/init(_:path:fileID:line:)``).
    public init(_ text: String) throws(PathError) {
        let names = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !text.isEmpty else { throw PathError.malformed(path: text, reason: "it is empty") }
        if let empty = names.firstIndex(where: \.isEmpty) {
            throw PathError.malformed(path: text, reason: "component \(empty + 1) is empty")
        }
        if let star = names.firstIndex(of: "*"), star != names.count - 1 {
            throw PathError.malformed(path: text, reason: "\"*\" can only be the last component")
        }
        self.init(components: names.map { PathComponent(named: $0, in: text) })
    }
}

extension ObservedPath where Value == Any {
    /// Starts tracking the path given as text from `root`.
    ///
    /// ```swift
    /// let zip = try ObservedPath(cache, path: "currentUser.address.zipCode")
    /// ```
    ///
    /// - Throws: ``PathError`` if the text is malformed, or if an object that the path reaches
    ///   now has no observable property of a name in it (the error names the property and the
    ///   type). An object that the path reaches only later and that lacks the property makes the
    ///   rest of the path unreachable and is reported through ``PathDiagnostics``.
    public convenience init(
        _ root: Root, path text: String, fileID: StaticString = #fileID, line: UInt = #line
    ) throws(PathError) {
        let path = try PropertyPath<Root, Any>(text)
        try Self.validate(text, from: root)
        self.init(root, path, fileID: fileID, line: line)
    }

    /// Resolves each name on the objects the path reaches now.
    private static func validate(_ text: String, from root: AnyObject) throws(PathError) {
        var object: AnyObject? = root
        for name in text.split(separator: ".").map(String.init) where name != "*" {
            guard let current = object else { return }  // unreachable from here on: checked later
            let property = try ObservableProperties.named(name, of: current, in: text)
            object = PathLink.object(in: property.anyValue)
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
    @discardableResult
    public func observe<Root: AnyObject>(
        _ root: Root, path text: String, fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Any?) -> Void
    ) throws(PathError) -> ObservedPath<Root, Any> {
        let observed = try ObservedPath(root, path: text, fileID: fileID, line: line)
        observe(observed, root: root, site: DeclarationSite(fileID: fileID, line: line)) {
            receive($0.new)
        }
        return observed
    }
}
