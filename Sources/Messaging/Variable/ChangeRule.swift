/// Decides whether setting a variable's value is a change (promise 5):
/// - object references change when the new one is another object (`!==`, EBN's pointer rule,
///   also for `Equatable` classes, so that key paths re-wire whenever an intermediate object is
///   replaced). Object references are classes and class-bound existentials (`AnyObject`,
///   `any P` where `P: AnyObject`), and optionals of these at any depth;
/// - other `Equatable` values change when they are `!=` (so a `Float` NaN replaced by NaN is a
///   change, as `!=` says);
/// - any other value always counts as changed, unless old and new are the same object (an
///   existential holding an object) or both `nil`.
///
/// The rule is chosen once per variable from the value's type at run time, so a single generic
/// initializer (and decoding) picks the right rule without overloads.
@usableFromInline
package struct ChangeRule<Value>: @unchecked Sendable {
    @usableFromInline let isSame: (Value, Value) -> Bool

    /// The rule for any `Value`, classified at run time.
    @usableFromInline package init() {
        if Self.isObjectReference {
            isSame = Self.sameObject
        } else if let equatable = Value.self as? any Equatable.Type {
            isSame = Self.equality(equatable)
        } else {
            isSame = Self.sameObjectOrBothNil
        }
    }

    /// The rule for a `Value` known to be `Equatable` where it is created: the same rule as
    /// `init()`, but `==` is specialized for `Value` in the caller's module (an `Int` compare
    /// instead of a generic one). `SendableMetatype`: the stored comparison captures the
    /// `Equatable` conformance, which must not be isolated to an actor.
    @inlinable
    package init(equatable: Value.Type) where Value: Equatable & SendableMetatype {
        if Self.isObjectReference {
            isSame = Self.sameObject
        } else {
            isSame = Self.isEqual
        }
    }

    @inlinable
    static func isEqual(_ lhs: Value, _ rhs: Value) -> Bool where Value: Equatable {
        lhs == rhs
    }

    /// Whether going from `old` to `new` is a change.
    @inlinable @inline(__always)
    package func isChange(from old: Value, to new: Value) -> Bool {
        !isSame(old, new)
    }

    /// `Value` is an object reference, possibly wrapped in optionals. Its first word is then the
    /// object's address (or, for `nil` at some depth, a value no object has), so comparing first
    /// words is `===` with `nil` handled.
    @usableFromInline
    package static var isObjectReference: Bool {
        var type: Any.Type = Value.self
        while let optional = type as? any _OptionalType.Type { type = optional._wrappedType }
        return type is AnyObject.Type
    }

    @usableFromInline
    static func sameObject(_ lhs: Value, _ rhs: Value) -> Bool {
        withUnsafeBytes(of: lhs) { l in
            withUnsafeBytes(of: rhs) { r in l.load(as: UInt.self) == r.load(as: UInt.self) }
        }
    }

    /// The rule for values whose type says nothing (`Any`, a string path's end value), applied to
    /// what they hold at run time, as the static rules are to typed values: after unwrapping
    /// optionals, both `nil`, the same object, or equal `Equatable` values of the same type are
    /// no change; anything else is.
    package static var comparingHeldValues: ChangeRule {
        ChangeRule(isSame: heldValuesAreSame)
    }

    private init(isSame: @escaping (Value, Value) -> Bool) {
        self.isSame = isSame
    }

    private static func heldValuesAreSame(_ lhs: Value, _ rhs: Value) -> Bool {
        let (left, right) = (unwrapped(lhs), unwrapped(rhs))
        if let left, !(type(of: left) is AnyObject.Type), let right {
            guard let left = left as? any Equatable else { return false }
            return left.isEqual(toAny: right)
        }
        return sameObjectOrBothNil(unwrapped: left, right)
    }

    /// The dynamic rule for values whose type says neither "object" nor "Equatable": the same
    /// object (after unwrapping optionals), or both `nil`, is no change; anything else is.
    private static func sameObjectOrBothNil(_ lhs: Value, _ rhs: Value) -> Bool {
        sameObjectOrBothNil(unwrapped: unwrapped(lhs), unwrapped(rhs))
    }

    /// `sameObjectOrBothNil` on values already unwrapped.
    private static func sameObjectOrBothNil(unwrapped lhs: Any?, _ rhs: Any?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil):
            return true
        case (let left?, let right?):
            guard type(of: left) is AnyObject.Type, type(of: right) is AnyObject.Type else {
                return false
            }
            return (left as AnyObject) === (right as AnyObject)
        default:
            return false
        }
    }

    private static func unwrapped(_ value: Value) -> Any? {
        var current: Any = value
        while let optional = current as? any _OptionalType {
            guard let wrapped = optional._wrappedValue else { return nil }
            current = wrapped
        }
        return current
    }

    private static func equality<E: Equatable>(_: E.Type) -> (Value, Value) -> Bool {
        // `E` is `Value` at run time; only the compiler doesn't know it. (A reinterpretation:
        // this code is not specialized, and typed pointers would look up their generic
        // metadata on every comparison.)
        { lhs, rhs in unsafeBitCast(lhs, to: E.self) == unsafeBitCast(rhs, to: E.self) }
    }
}

/// Lets `ChangeRule` see through `Optional` to its wrapped type.
package protocol _OptionalType {
    static var _wrappedType: Any.Type { get }
    var _wrappedValue: Any? { get }
}

extension Optional: _OptionalType {
    package static var _wrappedType: Any.Type { Wrapped.self }
    package var _wrappedValue: Any? { self.map { $0 } }
}

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    fileprivate func isEqual(toAny other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}
