#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The runtime's `swift_tryRetain`: retains a native object unless it has begun to deinitialize
/// (what loading a `weak` reference does inside), returning it, or nil. A C function of the
/// runtime's stable interface on every platform, looked up once (Swift code may not name the
/// runtime's symbols).
@usableFromInline
let swiftTryRetain: @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? = {
    #if canImport(Darwin)
        // RTLD_DEFAULT
        let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: -2), "swift_tryRetain")
    #else
        // RTLD_DEFAULT
        let symbol = dlsym(nil, "swift_tryRetain")
    #endif
    guard let symbol else { fatalError("Herald: the Swift runtime has no swift_tryRetain") }
    return unsafeBitCast(
        symbol, to: (@convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?).self)
}()

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
        guard let address, let retained = swiftTryRetain(address) else { return nil }
        return Unmanaged<Object>.fromOpaque(retained)
    }
}
