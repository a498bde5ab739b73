import Transforms

// Constant links: a path goes through a plain `let` property that holds an object (EBN observes
// through read-only properties). The link reads the object once, when the path wires to the
// object that holds it, and never changes; the objects after it are observed as usual.

extension PropertyPath {
    /// A path through a `let` property of `Root` that holds an object: the path goes on from
    /// that object and never re-wires at this link.
    ///
    /// ```swift
    /// final class Player { let settings = Settings() }
    /// final class Settings { @ObservableVar var volume = 5 }
    /// observer.observe(player, PropertyPath(constant: \Player.settings).appending(\.$volume)) {
    ///     volume in
    /// }
    /// ```
    ///
    /// The property is read once, when the path wires to the object that holds it, so it must
    /// not change: a `let`, or a get-only property that always returns the same object (a
    /// property that changes needs to be observable, `@ObservableVar`, to be followed). Like
    /// every object along a path, the object is held weakly. The string form names such a
    /// property as any other (`"settings.volume"`).
    public init(constant keyPath: KeyPath<Root, Value>) where Value: AnyObject {
        self.init(components: [PathComponent(constant: keyPath)])
    }

    /// This path extended by a `let` property of the object it leads to that holds an object
    /// (see ``init(constant:)``).
    ///
    /// ```swift
    /// PropertyPath(\Game.$player).appending(constant: \.settings).appending(\.$volume)
    /// ```
    public func appending<Next: AnyObject>(
        constant keyPath: KeyPath<Value, Next>
    ) -> PropertyPath<Root, Next> where Value: AnyObject {
        PropertyPath<Root, Next>(components: components + [PathComponent(constant: keyPath)])
    }

    /// This path extended by a `let` property of the optional object it leads to; where that
    /// object is nil, the rest of the path is unreachable (see ``init(constant:)``).
    public func appending<Object: AnyObject, Next: AnyObject>(
        constant keyPath: KeyPath<Object, Next>
    ) -> PropertyPath<Root, Next> where Value == Object? {
        PropertyPath<Root, Next>(components: components + [PathComponent(constant: keyPath)])
    }
}

extension PathComponent {
    /// The component of a `let` property holding an object (an observable collection, or any
    /// other): its key path leads to the object itself.
    init<Object: AnyObject, Target: AnyObject>(constant keyPath: KeyPath<Object, Target>) {
        nameBox = ComponentName.shared(keyPath)
        isOwnedByReceiver = true
        attach = { object, _, _, _, _, _ in
            ConstantLink(unsafeDowncast(object, to: Object.self)[keyPath: keyPath])
        }
    }
}

/// The link of a component whose value never changes: a `let` property holding an object (an
/// observable collection, or any other). It observes nothing (the object's own properties or
/// parts are observed by the links after it).
final class ConstantLink: PathLink {
    private weak var object: AnyObject?

    init(_ object: AnyObject?) {
        self.object = object
    }

    override func read() -> Any? { object }
    override func next() -> AnyObject? { object }
    override var isAlive: Bool { object != nil }
    /// It never changes: a path of nothing but constant links (and parts gone for good) can
    /// neither change nor hear of its root's death.
    override var observesNothing: Bool { true }
}
