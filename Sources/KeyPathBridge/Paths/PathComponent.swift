import Transforms

/// One component of a path, with its types erased so that a path of any length is an array: how
/// to observe the property on an object of the component's type, and how to read its value.
struct PathComponent: @unchecked Sendable {
    /// Observes the property of `object` (for `receiver`, if any), calling `changed` with the
    /// author of each change.
    let attach:
        (
            _ object: AnyObject, _ receiver: Receiver?, _ site: DeclarationSite,
            _ changed: @escaping (AnyAuthor) -> Void
        ) -> PathLink

    /// A component for the variable that `keyPath` leads to.
    init<Object: AnyObject, Value>(_ keyPath: KeyPath<Object, Variable<Value>>) {
        attach = { object, receiver, site, changed in
            // The typed `PropertyPath` only ever passes an `Object` here.
            let variable = unsafeDowncast(object, to: Object.self)[keyPath: keyPath]
            let connection = variable.messenger.core.connect(receiver: receiver, site: site) {
                _, author in changed(author)
            }
            // Weakly: an observed path does not keep the model's variables alive.
            return PathLink(connection: connection) { [weak variable] in
                variable.map { $0.value as Any }
            }
        }
    }
}

/// A component attached to one object: the running observation of its property, and a reader of
/// the property's current value (nil once the variable is gone).
struct PathLink {
    let connection: ConnectionBase
    let read: () -> Any?

    /// The object the property holds, for the next component: `nil` if the property holds
    /// `nil` (the rest of the path is unreachable).
    func nextObject() -> AnyObject? {
        guard var value = read() else { return nil }
        // Unwrap optionals at any depth (an `Optional` in an `Any`); nil at any level is nil.
        while let optional = value as? any _OptionalType {
            guard let wrapped = optional._wrappedValue else { return nil }
            value = wrapped
        }
        return value as AnyObject
    }
}
