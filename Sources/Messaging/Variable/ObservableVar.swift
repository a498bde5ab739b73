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

    /// The variable's current value.
    public var wrappedValue: Value {
        get { projectedValue.value }
        nonmutating set { projectedValue.value = newValue }
    }

    /// Wraps a new variable holding `wrappedValue`.
    public init(wrappedValue: Value) {
        projectedValue = Variable(wrappedValue)
    }

    /// Wraps a new variable holding `wrappedValue` (with the change check specialized for an
    /// `Equatable` value).
    @inlinable
    public init(wrappedValue: Value) where Value: Equatable & SendableMetatype {
        projectedValue = Variable(wrappedValue)
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
    }
}
