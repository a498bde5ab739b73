import Messaging
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
    // `lock` protects `paths`, `connections` (what keeps the binding running) and `sync`.
    private let lock = Lock()
    @exclusivity(unchecked) private var paths: [AnyObject] = []
    @exclusivity(unchecked) private var connections: [ConnectionBase] = []
    @exclusivity(unchecked) private var sync = BindingSyncState()
    /// Where syncs are done in turn, one at a time (see ``BindingSyncState``).
    private let turns = MessengerCore<Void>()
    /// Write one side's current value to the other. Set before the binding is shared.
    private var fromFirst: (PropertyBinding) -> Void = { _ in }
    private var fromSecond: (PropertyBinding) -> Void = { _ in }

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

    /// Sets what syncing from each side does (before the binding is shared).
    func syncs(
        fromFirst: @escaping (PropertyBinding) -> Void,
        fromSecond: @escaping (PropertyBinding) -> Void = { _ in }
    ) {
        self.fromFirst = fromFirst
        self.fromSecond = fromSecond
    }

    /// A side changed (or its path re-wired, or the binding starts): brings the other side in
    /// sync, now, or in turn after the sync another thread (or an outer call on this one) is
    /// doing (see ``BindingSyncState``). Each sync reads the side's value as it is then, never an
    /// older one from an update, so the sides end equal (see
    /// ``bindTwoWay(_:_:_:_:fileID:line:)`` for the writes that can still be overwritten).
    func changed(_ side: BindingSide) {
        guard lock.withLock({ sync.changed(side) }) else { return }
        turns.performInTurn { [weak self] in self?.syncQueued() }
    }

    /// Does a queued sync, from the side heard of last.
    private func syncQueued() {
        switch lock.withLock({ sync.start() }) {
        case .first: fromFirst(self)
        case .second: fromSecond(self)
        case nil: return
        }
    }

    /// Keeps `path` running for the binding, telling ``changed(_:)`` of each change of its end
    /// value that the binding did not write itself (if `side` is given).
    func follow<Root, Value>(
        _ path: ObservedPath<Root, Value>, as side: BindingSide?, site: DeclarationSite
    ) {
        let connection = path.messenger.core.connect(receiver: nil, site: site) {
            [weak self] _, author in
            guard let self, author !== self, let side else { return }  // never its own writes
            changed(side)
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
    binding.syncs(fromFirst: { [weak from, weak to] binding in
        guard let from, let to, let value = from.liveValue else { return }
        _ = to.write(transform(value), as: binding)
    })
    binding.follow(from, as: .first, site: site)
    binding.follow(to, as: nil, site: site)  // held, not followed: a one-way target
    to.whenEndPropertyChanges { [weak binding] in binding?.changed(.first) }
    binding.changed(.first)
    return binding
}

/// Binds two properties of the same type both ways: `b` takes `a`'s value now, then a change on
/// either side is written to the other.
///
/// ```swift
/// let sync = bindTwoWay(form, PropertyPath(\.$email), settings, PropertyPath(\.$email))
/// ```
///
/// There is no feedback loop: the binding never reacts to its own writes. Both sides end equal,
/// to the last change the binding heard of: it copies each side's value as it is when it
/// copies, never an older one from an update it is handling (another observer may have changed
/// the side since), one thread at a time, from the side heard of last.
/// When a side normalizes a value it receives (an observer of `b` uppercases what the binding
/// wrote), the normalized value flows back once. When either path re-wires to another property,
/// `b` takes `a`'s value again.
///
/// Writes to both sides from several threads at once end equal too. A property has no
/// compare-and-set, so a write that lands on a side between the binding's read of the other
/// side and its write can be overwritten by that write, as by any other later write.
public func bindTwoWay<A: AnyObject, B: AnyObject, Value>(
    _ a: A, _ aPath: PropertyPath<A, Value>, _ b: B, _ bPath: PropertyPath<B, Value>,
    fileID: StaticString = #fileID, line: UInt = #line
) -> PropertyBinding {
    let site = DeclarationSite(fileID: fileID, line: line)
    let binding = PropertyBinding()
    let first = ObservedPath(a, aPath, fileID: fileID, line: line)
    let second = ObservedPath(b, bPath, fileID: fileID, line: line)
    binding.syncs(
        fromFirst: { [weak first, weak second] binding in
            guard let first, let second, let value = first.liveValue else { return }
            _ = second.write(value, as: binding)
        },
        fromSecond: { [weak first, weak second] binding in
            guard let first, let second, let value = second.liveValue else { return }
            _ = first.write(value, as: binding)
        })
    binding.follow(first, as: .first, site: site)
    binding.follow(second, as: .second, site: site)
    // A side that re-wired to another property takes `a`'s value, as at the start.
    first.whenEndPropertyChanges { [weak binding] in binding?.changed(.first) }
    second.whenEndPropertyChanges { [weak binding] in binding?.changed(.first) }
    binding.changed(.first)
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
