import Transforms

/// A binding between observable properties: an object whose life is the binding's. Dropping it
/// (or calling ``unbind()``) ends it.
///
/// ```swift
/// let binding = bind(model, PropertyPath(\.$title), to: label, PropertyPath(\.$text)) { $0 }
/// let sync = bindTwoWay(form.$email, settings.$email)
/// ```
///
/// Made by ``bind(_:_:to:_:fileID:line:transform:)`` (one-way) and
/// ``bindTwoWay(_:_:_:_:fileID:line:)`` (two-way), or their forms for variables. The binding is
/// the author of every value it writes, which is how it never reacts to its own writes.
public final class PropertyBinding: @unchecked Sendable {
    // `lock` protects `paths` and `connections`: what keeps the binding running.
    private let lock = Lock()
    @exclusivity(unchecked) private var paths: [AnyObject] = []
    @exclusivity(unchecked) private var connections: [ConnectionBase] = []

    init() {}

    deinit {
        unbind()
    }

    /// Ends the binding; the bound properties keep their values. Calling it again is harmless.
    public func unbind() {
        let (paths, connections) = lock.withLock {
            defer {
                self.paths = []
                self.connections = []
            }
            return (self.paths, self.connections)
        }
        for connection in connections { connection.end() }
        _ = paths  // released after unlocking
    }

    /// Whether the binding still runs.
    public var isBound: Bool { lock.withLock { !connections.isEmpty } }

    /// Keeps `path` running for the binding, calling `changed` with the author of each change
    /// of its end value that the binding did not write itself.
    func follow<Root, Value>(
        _ path: ObservedPath<Root, Value>, site: DeclarationSite,
        _ changed: @escaping (PropertyBinding) -> Void
    ) {
        let connection = path.messenger.core.connect(receiver: nil, site: site) {
            [weak self] _, author in
            guard let self, author !== self else { return }  // never react to its own writes
            changed(self)
        }
        lock.withLock {
            paths.append(path)
            connections.append(connection)
        }
    }
}

/// Binds a target property to a source property, one way: the target takes the source's value
/// (transformed) now, whenever the source changes, and whenever the target path re-wires to
/// another property.
///
/// ```swift
/// let binding = bind(document, PropertyPath(\.$title), to: window, PropertyPath(\.$title)) {
///     $0.isEmpty ? "Untitled" : $0
/// }
/// ```
///
/// While the source path is unreachable the target keeps its value; while the target path is
/// unreachable nothing is written.
public func bind<Source: AnyObject, SourceValue, Target: AnyObject, TargetValue>(
    _ source: Source, _ sourcePath: PropertyPath<Source, SourceValue>,
    to target: Target, _ targetPath: PropertyPath<Target, TargetValue>,
    fileID: StaticString = #fileID, line: UInt = #line,
    transform: @escaping (SourceValue) -> TargetValue
) -> PropertyBinding {
    let site = DeclarationSite(fileID: fileID, line: line)
    let binding = PropertyBinding()
    let from = ObservedPath(source, sourcePath, fileID: fileID, line: line)
    let to = ObservedPath(target, targetPath, fileID: fileID, line: line)
    let sync = { [weak from, weak to] (binding: PropertyBinding) in
        guard let from, let to, let value = from.value else { return }
        _ = to.write(transform(value), as: binding)
    }
    binding.follow(from, site: site, sync)
    binding.follow(to, site: site) { _ in }  // held, not followed: a one-way target
    to.whenEndPropertyChanges { [weak binding] in if let binding { sync(binding) } }
    sync(binding)
    return binding
}

/// Binds two properties of the same type both ways: `b` takes `a`'s value now, then a change on
/// either side is written to the other.
///
/// ```swift
/// let sync = bindTwoWay(form, PropertyPath(\.$email), settings, PropertyPath(\.$email))
/// ```
///
/// There is no feedback loop: the binding never reacts to its own writes. When a side
/// normalizes a value it receives (an observer of `b` uppercases what the binding wrote), the
/// normalized value flows back once, so both sides end equal. When either path re-wires to
/// another property, `b` takes `a`'s value again.
public func bindTwoWay<A: AnyObject, B: AnyObject, Value>(
    _ a: A, _ aPath: PropertyPath<A, Value>, _ b: B, _ bPath: PropertyPath<B, Value>,
    fileID: StaticString = #fileID, line: UInt = #line
) -> PropertyBinding {
    let site = DeclarationSite(fileID: fileID, line: line)
    let binding = PropertyBinding()
    let first = ObservedPath(a, aPath, fileID: fileID, line: line)
    let second = ObservedPath(b, bPath, fileID: fileID, line: line)
    let aToB = { [weak first, weak second] (binding: PropertyBinding) in
        guard let first, let second, let value = first.value else { return }
        _ = second.write(value, as: binding)
    }
    let bToA = { [weak first, weak second] (binding: PropertyBinding) in
        guard let first, let second, let value = second.value else { return }
        _ = first.write(value, as: binding)
    }
    binding.follow(first, site: site, aToB)
    binding.follow(second, site: site, bToA)
    first.whenEndPropertyChanges { [weak binding] in if let binding { aToB(binding) } }
    second.whenEndPropertyChanges { [weak binding] in if let binding { aToB(binding) } }
    aToB(binding)
    return binding
}

/// Binds `target` to `source`, one way (see the form for property paths).
///
/// ```swift
/// let binding = bind(model.$volume, to: slider.$value) { Double($0) }
/// ```
public func bind<Source: ObservableProperty, Target: SettableProperty>(
    _ source: Source, to target: Target, fileID: StaticString = #fileID, line: UInt = #line,
    transform: @escaping (Source.Value) -> Target.Value
) -> PropertyBinding {
    bind(
        source, PropertyPath(\Source.self), to: target, PropertyPath(\Target.self),
        fileID: fileID, line: line, transform: transform)
}

/// Binds `target` to `source`, one way, without a transform.
///
/// ```swift
/// let binding = bind(document.$title, to: window.$title)
/// ```
public func bind<Source: ObservableProperty, Target: SettableProperty>(
    _ source: Source, to target: Target, fileID: StaticString = #fileID, line: UInt = #line
) -> PropertyBinding where Source.Value == Target.Value {
    bind(source, to: target, fileID: fileID, line: line) { $0 }
}

/// Binds two variables both ways (see the form for property paths).
///
/// ```swift
/// let sync = bindTwoWay(form.$email, settings.$email)
/// ```
public func bindTwoWay<A: SettableProperty, B: SettableProperty>(
    _ a: A, _ b: B, fileID: StaticString = #fileID, line: UInt = #line
) -> PropertyBinding where A.Value == B.Value {
    bindTwoWay(a, PropertyPath(\A.self), b, PropertyPath(\B.self), fileID: fileID, line: line)
}
