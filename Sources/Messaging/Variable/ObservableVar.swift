/// A property wrapper that makes a stored property observable through its projected ``Variable``.
///
/// ```swift
/// final class Model {
///     @ObservableVar var title = "Untitled"
/// }
///
/// observer.observe(model.$title) { update in print(update.new) }
/// model.title = "Draft"
/// // Prints "Draft"
/// ```
///
/// The wrapped value reads and writes the variable's ``Variable/value``; `$name` is the variable
/// itself, for observing or for setting with an author (`model.$title.set("x", as: self)`). A
/// copy of a struct holding an `@ObservableVar` shares the variable.
@propertyWrapper
public struct ObservableVar<Value> {
    /// The variable behind the property.
    public let projectedValue: Variable<Value>
    /// The variable again, as a trivial value: a read loads it without retaining the variable.
    @usableFromInline let unretained: Unmanaged<Variable<Value>>

    /// The variable's current value.
    @inlinable
    public var wrappedValue: Value {
        // The variable is not retained for the read, which saves two atomic operations: the
        // caller holds the owner, the owner holds the wrapper, whose variable is a constant,
        // and a read runs no user code that could replace the wrapper.
        get { unretained._withUnsafeGuaranteedRef { $0.value } }
        nonmutating set { projectedValue.value = newValue }
    }

    /// Wraps a new variable holding `wrappedValue`.
    public init(wrappedValue: Value) {
        projectedValue = Variable(wrappedValue)
        unretained = Unmanaged.passUnretained(projectedValue)
    }

    /// Wraps a new variable holding `wrappedValue` (with the change check specialized for an
    /// `Equatable` value).
    @inlinable
    public init(wrappedValue: Value) where Value: Equatable & SendableMetatype {
        projectedValue = Variable(wrappedValue)
        unretained = Unmanaged.passUnretained(projectedValue)
    }
}

extension ObservableVar: Sendable where Value: Sendable {}

extension ObservableVar: Encodable where Value: Encodable {
    /// Encodes the plain value.
    public func encode(to encoder: any Encoder) throws {
        try projectedValue.encode(to: encoder)
    }
}

extension ObservableVar: Decodable where Value: Decodable {
    /// Decodes the plain value (or SwiftObserver's keyed form, as ``Variable`` does).
    public init(from decoder: any Decoder) throws {
        projectedValue = try Variable(from: decoder)
        unretained = Unmanaged.passUnretained(projectedValue)
    }
}
