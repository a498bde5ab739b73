import RuntimeShims

/// A reference that does not keep a native Swift object alive and gives it back only while it
/// lives: a `weak` reference without the side table.
///
/// The first `weak` reference to an object gives it a side table, and from then on every retain
/// and release of the object, anywhere, takes the runtime's slow path (several times the
/// instructions). Objects that hot paths retain all the time (synthetic properties, their
/// owners) are referred to with this instead. It holds the object's *unowned* count, which
/// keeps the object's memory (not the object) until this reference goes, and takes a strong
/// reference with the runtime's `swift_tryRetain`, which fails once the object has begun to
/// deinitialize, from any thread.
///
/// Only for native Swift objects: on Apple platforms, an `NSObject`'s counts live elsewhere
/// (use `weak` for objects that may be one).
@usableFromInline
package struct NativeWeak<Object: AnyObject>: ~Copyable, @unchecked Sendable {
    /// Holds the unowned count. Never read: reading an unowned reference to an object that has
    /// begun to deinitialize traps.
    @usableFromInline unowned var keeper: Object?
    @usableFromInline let address: UnsafeMutableRawPointer?

    /// A reference to `object`.
    @inlinable
    package init(_ object: Object) {
        keeper = object
        address = Unmanaged.passUnretained(object).toOpaque()
    }

    /// A reference to nothing.
    @inlinable
    package init() {
        keeper = nil
        address = nil
    }

    /// The object, retained, if there is one and it has not begun to deinitialize.
    @inlinable @inline(__always)
    package var object: Object? {
        retained().map { $0.takeRetainedValue() }
    }

    /// The object retained once (for the caller to release), if there is one and it has not
    /// begun to deinitialize.
    @inlinable @inline(__always)
    package func retained() -> Unmanaged<Object>? {
        guard let address, let retained = swift_tryRetain(address) else { return nil }
        return Unmanaged<Object>.fromOpaque(retained)
    }

    /// Whether there is an object and it has not begun to deinitialize. Retains nothing, so it
    /// never releases a last reference either (which would run the object's deinit here, maybe
    /// under a lock that the deinit takes).
    @inlinable
    package var isLive: Bool {
        guard let address else { return false }
        return !swift_isDeallocating(address)
    }
}
