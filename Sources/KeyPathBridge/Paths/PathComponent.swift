import Transforms

/// One component of a path, with its types erased so that a path of any length is an array: how
/// to observe the property on an object of the component's type, and how to read its value.
struct PathComponent: @unchecked Sendable {
    /// The property's name, as a string path spells it (for debug logs).
    let nameBox: ComponentName

    /// The property's name, as a string path spells it, if known: a typed component learns the
    /// name of an `@ObservableVar` (whose `$name` key path carries no name) when it first
    /// attaches to an object.
    var name: String { nameBox.name }

    /// Observes the property of `object` (for `receiver`, if any), calling `changed` with the new
    /// value, the object in it if `leadsOn` (the path goes on from this property), and the
    /// author of each change. (Each change is handled with the value its message carries, not
    /// the property's value when it is handled, so that every change keeps its own author even
    /// when another change was made meanwhile.)
    /// Nil when the component cannot be resolved on `object` (a string path naming a property the
    /// object does not have; reported as a diagnostic): the rest of the path is unreachable.
    let attach:
        (
            _ object: AnyObject, _ receiver: Receiver?, _ site: DeclarationSite, _ leadsOn: Bool,
            _ changed: @escaping PathLink.Changed
        ) -> PathLink?

    /// A component for the variable that `keyPath` leads to.
    init<Object: AnyObject, Value>(_ keyPath: KeyPath<Object, Variable<Value>>) {
        let name = ComponentName(keyPath)
        let shape = ObjectShape(Value.self)
        nameBox = name
        attach = { object, receiver, site, leadsOn, changed in
            // The typed `PropertyPath` only ever passes an `Object` here.
            let variable = unsafeDowncast(object, to: Object.self)[keyPath: keyPath]
            name.learn(from: object, variable: variable)
            let connection = variable.core.connect(receiver: receiver, site: site) {
                update, author in
                changed(update.new, leadsOn ? shape.object(in: update.new) : nil, author)
            }
            // Weak: an observed path does not keep the model's variables alive.
            return PathLink(
                end: connection.end,
                read: { [weak variable] in variable?.value },
                next: { [weak variable] in variable.flatMap { shape.object(in: $0.value) } },
                write: { [weak variable] value, author in
                    variable?.setAny(value, as: author) ?? false
                })
        }
    }
}

/// How to find the object in a property's value, decided once per component from the value's
/// type: a class reference (or an optional one) is reinterpreted as `AnyObject` without a
/// dynamic cast; any other type goes through ``PathLink/object(in:)``.
struct ObjectShape: Sendable {
    private enum Kind {
        case object, optionalObject, dynamic
    }
    private let kind: Kind

    init<Value>(_ type: Value.Type) {
        // One pointer: a class reference, an `Optional` of one, or `AnyObject` (a class-bound
        // existential with witness tables is bigger and takes the dynamic way).
        let isOnePointer = MemoryLayout<Value>.size == MemoryLayout<AnyObject>.size
        if isOnePointer, type is AnyObject.Type {
            kind = .object
        } else if isOnePointer, let optional = type as? any _OptionalType.Type,
            optional._wrappedType is AnyObject.Type
        {
            kind = .optionalObject
        } else {
            kind = .dynamic
        }
    }

    /// The object in `value`, or nil if it holds none.
    func object<Value>(in value: Value) -> AnyObject? {
        switch kind {
        case .object: unsafeBitCast(value, to: AnyObject.self)
        case .optionalObject: unsafeBitCast(value, to: AnyObject?.self)
        case .dynamic: PathLink.object(in: value)
        }
    }
}

extension PathComponent {
    /// A component named in a string path: the observable property `name`, resolved by
    /// reflection each time the component is attached (once per re-wiring, never per message);
    /// `*` observes every observable property of the object, and its value is the
    /// `(property: String, value: Any)` that changed (or the object itself at first).
    init(named name: String, in path: String) {
        nameBox = ComponentName(name)
        attach = { object, receiver, site, leadsOn, changed in
            if name == "*" {  // always the last component
                let properties = ObservableProperties.all(of: object)
                let connections = properties.map { property in
                    property.variable.connect(receiver: receiver, site: site) { value, author in
                        changed((property: property.name, value: value), nil, author)
                    }
                }
                return PathLink(
                    end: { for connection in connections { connection.end() } },
                    read: { [weak object] in object },
                    next: { nil },
                    write: { _, _ in false })
            }
            let variable: AnyVariable
            do throws(PathError) {
                variable = try ObservableProperties.named(name, of: object, in: path)
            } catch {
                PathDiagnostics.report(error)
                return nil
            }
            return PathLink(
                observing: variable, receiver: receiver, site: site, leadsOn: leadsOn,
                changed: changed)
        }
    }
}

/// The name of a path component, learnt by reflection the first time a typed component whose
/// key path does not name it attaches to an object (never again after that).
final class ComponentName: @unchecked Sendable {
    private let lock = Lock()
    @exclusivity(unchecked) private var known: String?
    private let placeholder: String

    init(_ name: String) {
        known = name
        placeholder = name
    }

    /// The name in the key path's description (`\User.name` → `name`), if it names a stored
    /// property; a `$name` projection is a computed property, described without its name.
    init<Object, Value>(_ keyPath: KeyPath<Object, Value>) {
        let text = String(describing: keyPath)
        let prefix = "\\\(Object.self)."
        if text.hasPrefix(prefix), !text.contains("<") {
            known = String(text.dropFirst(prefix.count))
        }
        placeholder = "<\(Value.self)>"
    }

    var name: String { lock.withLock { known } ?? placeholder }

    /// Finds the name of `variable` among the observable properties of `object`, once.
    func learn(from object: AnyObject, variable: AnyObject) {
        learn { ObservableProperties.all(of: object).first { $0.variable === variable }?.name }
    }

    /// Calls `find` to learn the name if it is not known yet.
    func learn(_ find: () -> String?) {
        guard lock.withLock({ known == nil }) else { return }
        if let name = find() { lock.withLock { known = name } }
    }
}

/// A component attached to one object: the running observation of its property, and readers
/// of the property's current value and of the object in it (nil once the variable is gone).
struct PathLink {
    /// What a link calls for each change: the new value, the object in it (if the path goes on
    /// from the property, else nil), and the change's author.
    typealias Changed = (_ value: Any, _ next: AnyObject?, _ author: AnyAuthor) -> Void

    /// Ends the link's observations.
    let end: () -> Void
    let read: () -> Any?
    /// The object the property holds, for the next component: `nil` if it holds `nil` (the rest
    /// of the path is unreachable).
    let next: () -> AnyObject?
    /// Sets the property (a binding's write); false if the variable is gone.
    let write: (Any, AnyAuthor) -> Bool

    init(
        end: @escaping () -> Void, read: @escaping () -> Any?,
        next: @escaping () -> AnyObject?, write: @escaping (Any, AnyAuthor) -> Bool
    ) {
        self.end = end
        self.read = read
        self.next = next
        self.write = write
    }

    /// A link that observes a variable found by reflection. It refers to the variable weakly: an
    /// observed path does not keep the model's variables alive.
    init(
        observing variable: AnyVariable, receiver: Receiver?, site: DeclarationSite,
        leadsOn: Bool, changed: @escaping Changed
    ) {
        let connection = variable.connect(receiver: receiver, site: site) { value, author in
            changed(value, leadsOn ? Self.object(in: value) : nil, author)
        }
        self.init(
            end: connection.end,
            read: { [weak variable] in variable?.anyValue },
            next: { [weak variable] in Self.object(in: variable?.anyValue) },
            write: { [weak variable] value, author in variable?.setAny(value, as: author) ?? false }
        )
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
