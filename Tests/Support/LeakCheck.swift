import Testing

/// Tracks an object weakly so a test can assert that it was freed.
public final class WeakBox<Object: AnyObject> {
    /// The tracked object, nil once freed.
    public weak var object: Object?
    /// Tracks `object`.
    public init(_ object: Object) { self.object = object }
    /// Whether the object was freed.
    public var isFreed: Bool { object == nil }
}

/// Runs a closure in its deinit: for tests of what a release may run, and where.
public final class OnDeinit: @unchecked Sendable {
    private let body: () -> Void
    /// An object that runs `body` when it is freed.
    public init(_ body: @escaping () -> Void) { self.body = body }
    deinit { body() }
}

/// An object whose only purpose is to be captured by a handler and to report its death.
public final class Canary {
    /// Creates a canary.
    public init() {}
}
