/// The message a ``Variable`` sends: its value before and after a change.
///
/// ```swift
/// observer.observe(number) { update in
///     print("\(update.old) → \(update.new)")
/// }
/// ```
///
/// When a variable is asked to ``ObservableCache/send()`` without a change, `old` and `new` are
/// both the current value.
public struct Update<Value> {
    /// The value before the change.
    public let old: Value
    /// The value after the change.
    public let new: Value

    /// Creates an update from `old` to `new`.
    public init(_ old: Value, _ new: Value) {
        self.old = old
        self.new = new
    }
}

extension Update where Value: ExpressibleByNilLiteral {
    /// An update from `nil` to `nil`: SwiftObserver's empty update of an optional value.
    ///
    /// ```swift
    /// let none = Update<Int?>()   // old and new are both nil
    /// ```
    public init() {
        self.init(nil, nil)
    }
}

extension Update: Equatable where Value: Equatable {
    /// Whether the value changed: `old != new`.
    ///
    /// ```swift
    /// observer.observe(number).filter(\.isChange) { update in }
    /// ```
    public var isChange: Bool { old != new }
}
extension Update: Hashable where Value: Hashable {}
extension Update: Sendable where Value: Sendable {}

extension Update: CustomStringConvertible {
    /// `"old → new"`.
    public var description: String { "\(old) → \(new)" }
}
