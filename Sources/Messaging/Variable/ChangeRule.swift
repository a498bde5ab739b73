/// Decides whether setting a variable's value is a change (promise 5):
/// - class references (and optional class references) change when the new one is another
///   object (`!==`, EBN's pointer rule, also for `Equatable` classes, so that key paths re-wire
///   whenever an intermediate object is replaced);
/// - other `Equatable` values change when they are `!=`;
/// - anything else always counts as changed.
///
/// The rule is chosen once per variable from the value's type at run time, so a single generic
/// initializer (and decoding) picks the right rule without overloads.
@usableFromInline
struct ChangeRule<Value>: @unchecked Sendable {
    @usableFromInline let isSame: ((Value, Value) -> Bool)?

    @usableFromInline init() {
        if Self.isObjectReference {
            isSame = { lhs, rhs in
                withUnsafeBytes(of: lhs) { l in
                    withUnsafeBytes(of: rhs) { r in l.load(as: UInt.self) == r.load(as: UInt.self) }
                }
            }
        } else if let equatable = Value.self as? any Equatable.Type {
            isSame = Self.equality(equatable)
        } else {
            isSame = nil
        }
    }

    /// Whether going from `old` to `new` is a change.
    @inlinable @inline(__always)
    func isChange(from old: Value, to new: Value) -> Bool {
        guard let isSame else { return true }
        return !isSame(old, new)
    }

    /// `Value` is a class or an optional class: one pointer, compared by address.
    private static var isObjectReference: Bool {
        guard MemoryLayout<Value>.size == MemoryLayout<UInt>.size else { return false }
        if Value.self is AnyObject.Type { return true }
        if let optional = Value.self as? any _OptionalType.Type {
            return optional._wrappedType is AnyObject.Type
        }
        return false
    }

    private static func equality<E: Equatable>(_: E.Type) -> (Value, Value) -> Bool {
        // `E` is `Value` at run time; only the compiler doesn't know it.
        { lhs, rhs in
            withUnsafePointer(to: lhs) { l in
                withUnsafePointer(to: rhs) { r in
                    UnsafeRawPointer(l).assumingMemoryBound(to: E.self).pointee
                        == UnsafeRawPointer(r).assumingMemoryBound(to: E.self).pointee
                }
            }
        }
    }
}

/// Lets `ChangeRule` see through `Optional` to its wrapped type.
protocol _OptionalType {
    static var _wrappedType: Any.Type { get }
}

extension Optional: _OptionalType {
    static var _wrappedType: Any.Type { Wrapped.self }
}
