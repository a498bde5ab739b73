import Messaging

/// How a synthetic property refers to its owner: without keeping it alive, like `weak`, but
/// without giving it a side table where that is possible (see ``NativeWeak``): with one, every
/// retain and release of the owner, anywhere in the program, takes the runtime's slow path.
/// On Apple platforms the owner may be an `NSObject`, whose counts live elsewhere, so it is
/// `weak` there.
@usableFromInline
struct OwnerReference<Owner: AnyObject>: ~Copyable {
    #if canImport(ObjectiveC)
        @usableFromInline weak var held: Owner?
    #else
        @usableFromInline var held = NativeWeak<Owner>()
    #endif

    @usableFromInline init() {}

    /// The owner, retained, if it was set and is alive.
    @inlinable
    var object: Owner? {
        #if canImport(ObjectiveC)
            held
        #else
            held.object
        #endif
    }

    /// Whether the owner was set and is alive. Off Apple platforms this retains nothing, so it
    /// never releases a last reference either (asked under the property's lock).
    var isLive: Bool {
        #if canImport(ObjectiveC)
            held != nil
        #else
            held.isLive
        #endif
    }

    /// Refers to `owner` from now on.
    @usableFromInline
    mutating func set(_ owner: Owner) {
        #if canImport(ObjectiveC)
            held = owner
        #else
            held = NativeWeak(owner)
        #endif
    }
}
