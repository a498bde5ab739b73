import Transforms

/// An observable property that a key path can go through: an observable object that holds a
/// value and sends an ``Update`` whenever the value changes. `Var` is one; the observable
/// collections' parts and synthetic properties (``Synthetic``) are others.
///
/// Paths (typed and string), bindings, coalesced observations and ``Inspector`` know only this
/// protocol:
///
/// ```swift
/// final class Thermometer: ObservableProperty {
///     let messenger = Messenger<Update<Double>>()
///     private(set) var value = 20.0          // (not thread-safe, for brevity)
///     func isChange(from old: Double, to new: Double) -> Bool { abs(new - old) >= 0.5 }
///     func record(_ reading: Double) {
///         guard isChange(from: value, to: reading) else { return }
///         let old = value
///         value = reading
///         send(Update(old, reading))
///     }
/// }
/// final class Room { let thermometer = Thermometer() }
/// observer.observe(house, \.$livingRoom, \.thermometer) { celsius in }
/// ```
///
/// What a property provides:
/// - its current ``value`` (and so ``ObservableCache/latestMessage``: an update from the value
///   to itself);
/// - its change rule, ``isChange(from:to:)``: it sends an update only for a change;
/// - its observation count and 0↔1 hook, as every ``ObservableObject`` has them
///   (``ObservableObject/observationCount``, ``ObservableObject/whenObservationStateChanges(_:)``);
/// - a name for debug logs, ``debugName``, if it knows one (paths find names by reflection
///   otherwise);
/// - setting, with an author, if it is a ``SettableProperty``.
///
/// An observation of a property starts from its value read in the same step as the
/// observation starts when the property keeps its value under its messenger's lock (Herald's
/// own do); for another property the value is read right after the start, and a change in
/// between arrives as a message.
public protocol ObservableProperty<Value>: ObservableCache where Message == Update<Value> {
    /// The type of the property's value.
    associatedtype Value

    /// The current value.
    var value: Value { get }

    /// Whether going from `old` to `new` is a change, which the property sends. (A `Var`'s
    /// rule: `!=` for `Equatable` values, `!==` for objects, always for other values.) A path
    /// that ends at the property compares its end values by this rule too, when it re-wires to
    /// another property; it may call it while a Herald lock is held, so it must not touch
    /// Herald objects.
    func isChange(from old: Value, to new: Value) -> Bool

    /// The property's name for debug logs, if it knows it; nil by default.
    var debugName: String? { get }
}

extension ObservableProperty {
    /// An update from the current value to itself.
    public var latestMessage: Update<Value> {
        let current = value
        return Update(current, current)
    }

    /// Nil: a path finds the name by reflection on the object that holds the property.
    public var debugName: String? { nil }
}

/// An ``ObservableProperty`` that can be set on behalf of an author: the author of the update it
/// sends. Bindings write through it.
///
/// ```swift
/// sharedText.set("my edit", as: self)   // observers see `self` as the author
/// ```
public protocol SettableProperty<Value>: ObservableProperty {
    /// Sets the value on behalf of `author`; sends an update if it is a change.
    func set(_ value: Value, as author: AnyAuthor)
}

extension Variable: SettableProperty {}

/// Marks `Variable`, whose change rule is its value type's (recognized without knowing `Value`).
protocol VariableType {}
extension Variable: VariableType {}

extension ObservableProperty {
    /// Starts an observation of the property's updates (owned by `receiver`, if any, and filed
    /// under `group`, if any) and passes the value it starts from to `initial`: read in the same
    /// step as the start when the property keeps its value under its messenger's lock (then
    /// `initial` runs under that lock and must not call user code), else right after it.
    func startObservation(
        receiver: Receiver?, site: DeclarationSite, groupedUnder group: ObjectIdentifier?,
        initial: (Value) -> Void, receive: @escaping (Update<Value>, AnyAuthor) -> Void
    ) -> ConnectionBase {
        // A variable, the common case, without looking up conformances.
        if let variable = self as? Variable<Value> {
            return variable.connect(
                receiver: receiver, site: site, groupedUnder: group, initial: initial,
                receive: receive)
        }
        return startObservationReadingLatest(
            receiver: receiver, site: site, groupedUnder: group, initial: initial,
            receive: receive)
    }

    /// `startObservation` for a property that is not a variable. Apart, so that the variable's
    /// way does not set up this one's generic locals (metadata looked up on every call).
    @inline(never)
    private func startObservationReadingLatest(
        receiver: Receiver?, site: DeclarationSite, groupedUnder group: ObjectIdentifier?,
        initial: (Value) -> Void, receive: @escaping (Update<Value>, AnyAuthor) -> Void
    ) -> ConnectionBase {
        let (connection, latest) = connectReadingLatest(
            receiver: receiver, site: site, groupedUnder: group, receive: receive)
        initial(latest?.new ?? value)
        return connection
    }

    /// Sends the current value to every observer (old and new equal), on behalf of `author`:
    /// read and sent in one step where the property keeps its value under its lock.
    func sendCurrentValue(from author: AnyAuthor) {
        if let locked = self as? any LockedLatestMessage {
            messenger.core.send(from: author) { locked.latestUpdateWhileLocked(of: Value.self) }
        } else {
            send(latestMessage, from: author)
        }
    }

    /// Sets the property if it is settable and `value` has its type; false otherwise.
    func setIfSettable(_ value: Any, as author: AnyAuthor) -> Bool {
        guard let settable = self as? any SettableProperty<Value>, let value = value as? Value
        else { return false }
        settable.set(value, as: author)
        return true
    }
}

extension LockedLatestMessage {
    /// The latest message as an update of `Value`, if it is one, read while the lock is held.
    fileprivate func latestUpdateWhileLocked<Value>(of: Value.Type) -> Update<Value>? {
        latestMessageWhileLocked as? Update<Value>
    }
}
