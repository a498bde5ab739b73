import Testing

/// Tracks an object weakly so a test can assert that it was freed.
final class WeakBox<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
    var isFreed: Bool { object == nil }
}

/// An object whose only purpose is to be captured by a handler and to report its death.
final class Canary {}
