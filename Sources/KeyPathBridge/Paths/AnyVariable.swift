import Transforms

/// A ``Variable`` of any value type, for reflection.
protocol AnyVariable: AnyObject {
    /// The current value.
    var anyValue: Any { get }
    /// Observes the variable, calling `changed` with each new value and its author; passes the
    /// value it starts from to `initial`, in the same step (under the variable's lock: `initial`
    /// must not call user code). With a `group`, the receiver files the observation under it.
    func connect(
        receiver: Receiver?, site: DeclarationSite, groupedUnder group: ObjectIdentifier?,
        initial: (Any) -> Void, changed: @escaping (Any, AnyAuthor) -> Void
    ) -> ConnectionBase
    /// Sets the value if it has the variable's type; false otherwise.
    func setAny(_ value: Any, as author: AnyAuthor) -> Bool
    /// The object in the current value, found as `shape` says.
    func object(using shape: ObjectShape) -> AnyObject?
    /// Sends the current value to every observer (old and new equal), on behalf of `author`.
    func sendCurrentValue(from author: AnyAuthor)
    /// The number of running observations (``ObservableObject/observationCount``).
    var observationCount: Int { get }
    /// Their declaration sites (``ObservableObject/observationSites``).
    var observationSites: [DeclarationSite] { get }
    /// Sets the observation-state hook (``ObservableObject/whenObservationStateChanges(_:)``).
    func whenObservationStateChanges(_ handler: @escaping (_ isObserved: Bool) -> Void)
}

extension Variable: AnyVariable {
    var anyValue: Any { value }

    func connect(
        receiver: Receiver?, site: DeclarationSite, groupedUnder group: ObjectIdentifier?,
        initial: (Any) -> Void, changed: @escaping (Any, AnyAuthor) -> Void
    ) -> ConnectionBase {
        connect(receiver: receiver, site: site, groupedUnder: group, initial: { initial($0) }) {
            update, author in changed(update.new, author)
        }
    }

    func setAny(_ value: Any, as author: AnyAuthor) -> Bool {
        guard let value = value as? Value else { return false }
        set(value, as: author)
        return true
    }

    func object(using shape: ObjectShape) -> AnyObject? {
        shape.object(in: value)
    }
}

/// An `@ObservableVar` of any value type, for reflection.
protocol AnyObservableVar {
    var anyVariable: AnyVariable { get }
}

extension ObservableVar: AnyObservableVar {
    var anyVariable: AnyVariable { projectedValue }
}

/// The observable properties of an object, found by reflection: stored `Variable` properties
/// (`let name = Var(…)`) and `@ObservableVar` properties (`_name`, named `name`), of the object's
/// class and its superclasses.
enum ObservableProperties {
    /// Every observable property of `object`, by name, in declaration order.
    static func all(of object: AnyObject) -> [(name: String, variable: AnyVariable)] {
        var found: [(name: String, variable: AnyVariable)] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label else { continue }
                if let variable = child.value as? AnyVariable {
                    found.append((label, variable))
                } else if let wrapper = child.value as? AnyObservableVar {
                    let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                    found.append((name, wrapper.anyVariable))
                }
            }
            mirror = current.superclassMirror
        }
        return found
    }

    /// What a string path's component is on an object.
    enum Resolved {
        /// One observable property.
        case property(AnyVariable)
        /// Every observable property (`*`), by name.
        case everyProperty([(name: String, variable: AnyVariable)])
    }

    /// The one resolver of string paths: what `token` is on `object`, used both to check a path
    /// when it is set up and to wire it whenever it re-wires.
    ///
    /// - Throws: ``PathError/unknownProperty(_:type:path:known:)`` for a name the object has no
    ///   observable property of; ``PathError/notACollection(_:type:path:)`` for an element
    ///   component (`#3`, `3`), since no object here is an observable array.
    static func resolve(_ token: PathToken, on object: AnyObject, in path: String)
        throws(PathError) -> Resolved
    {
        switch token {
        case .everyProperty:
            return .everyProperty(all(of: object))
        case .name(let name):
            return .property(try named(name, of: object, in: path))
        case .indexFollowing, .objectFollowing:
            throw .notACollection(
                token.spelling, type: String(describing: type(of: object)), path: path)
        }
    }

    /// The observable property `name` of `object`, or an error naming the property and type.
    static func named(_ name: String, of object: AnyObject, in path: String) throws(PathError)
        -> AnyVariable
    {
        let properties = all(of: object)
        guard let property = properties.first(where: { $0.name == name }) else {
            throw PathError.unknownProperty(
                name, type: String(describing: type(of: object)), path: path,
                known: properties.map(\.name))
        }
        return property.variable
    }
}
