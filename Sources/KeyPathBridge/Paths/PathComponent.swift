import Transforms

/// One component of a path, with its types erased so that a path of any length is an array: how
/// to observe the property on an object of the component's type, and how to read its value.
struct PathComponent: @unchecked Sendable {
    /// Observes the property of `object` (for `receiver`, if any), calling `changed` with the new
    /// value and the author of each change. (Each change is handled with the value its message
    /// carries, not the property's value when it is handled, so that every change keeps its own
    /// author even when another change was made meanwhile.)
    let attach:
        (
            _ object: AnyObject, _ receiver: Receiver?, _ site: DeclarationSite,
            _ changed: @escaping (Any, AnyAuthor) -> Void
        ) -> PathLink

    /// A component for the variable that `keyPath` leads to.
    init<Object: AnyObject, Value>(_ keyPath: KeyPath<Object, Variable<Value>>) {
        attach = { object, receiver, site, changed in
            // The typed `PropertyPath` only ever passes an `Object` here.
            let variable = unsafeDowncast(object, to: Object.self)[keyPath: keyPath]
            let connection = variable.messenger.core.connect(receiver: receiver, site: site) {
                update, author in changed(update.new, author)
            }
            // Weakly: an observed path does not keep the model's variables alive.
            return PathLink(
                connection: connection,
                read: { [weak variable] in variable.map { $0.value as Any } },
                write: { [weak variable] value, author in
                    guard let variable, let value = value as? Value else { return false }
                    variable.set(value, as: author)
                    return true
                })
        }
    }
}

/// A component attached to one object: the running observation of its property, and a reader of
/// the property's current value (nil once the variable is gone).
struct PathLink {
    let connection: ConnectionBase
    let read: () -> Any?
    /// Sets the property (a binding's write); false if the variable is gone.
    let write: (Any, AnyAuthor) -> Bool

    /// The object the property holds, for the next component: `nil` if the property holds
    /// `nil` (the rest of the path is unreachable).
    func nextObject() -> AnyObject? {
        Self.object(in: read())
    }

    /// The object in a property's value, unwrapping optionals at any depth (an `Optional` in an
    /// `Any`); nil at any depth is nil.
    static func object(in value: Any?) -> AnyObject? {
        guard var value else { return nil }
        while let optional = value as? any _OptionalType {
            guard let wrapped = optional._wrappedValue else { return nil }
            value = wrapped
        }
        return value as AnyObject
    }
}
