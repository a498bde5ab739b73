import Transforms

/// An `@ObservableVar` of any value type, for reflection.
protocol AnyObservableVar {
    var anyProperty: any ObservableProperty { get }
}

extension ObservableVar: AnyObservableVar {
    var anyProperty: any ObservableProperty { projectedValue }
}

/// The observable properties of an object, found by reflection: stored properties that are
/// ``ObservableProperty`` objects (`let name = Var(…)`), `@ObservableVar` properties and
/// `@Synthetic` properties (`_name`, named `name`), of the object's class and its superclasses.
enum ObservableProperties {
    /// The stored properties of `object` (its class's, then its superclasses'), by name: a
    /// wrapped property's storage (`_name`) is named `name`.
    static func storedProperties(of object: AnyObject) -> [(name: String, value: Any)] {
        var found: [(name: String, value: Any)] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label else { continue }
                found.append(
                    (label.hasPrefix("_") ? String(label.dropFirst()) : label, child.value))
            }
            mirror = current.superclassMirror
        }
        return found
    }

    /// Every observable property of `object`, by name, in declaration order.
    static func all(of object: AnyObject) -> [(name: String, property: any ObservableProperty)] {
        var found: [(name: String, property: any ObservableProperty)] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label else { continue }
                if let synthetic = child.value as? any AnySyntheticProperty,
                    let property = synthetic as? any ObservableProperty
                {
                    let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                    synthetic.bind(toOwner: object, named: name)
                    found.append((name, property))
                } else if let property = child.value as? any ObservableProperty {
                    found.append((label, property))
                } else if let wrapper = child.value as? AnyObservableVar {
                    let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                    found.append((name, wrapper.anyProperty))
                }
            }
            mirror = current.superclassMirror
        }
        return found
    }

    /// Every observable property and every stored observable collection of `object` (what a
    /// string path can name), in declaration order (superclass properties last), with the
    /// declaration sites of their running observations (a collection's include those of its
    /// parts).
    static func observationSites(of object: AnyObject) -> [(name: String, sites: [DeclarationSite])]
    {
        var found: [(name: String, sites: [DeclarationSite])] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label else { continue }
                if child.value is any AnySyntheticProperty,
                    let property = child.value as? any ObservableProperty
                {
                    let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                    found.append((name, property.observationSites))
                } else if let property = child.value as? any ObservableProperty {
                    found.append((label, property.observationSites))
                } else if let wrapper = child.value as? AnyObservableVar {
                    let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                    found.append((name, wrapper.anyProperty.observationSites))
                } else if let collection = child.value as? any PathCollection {
                    found.append((label, collection.observationSitesOfParts))
                }
            }
            mirror = current.superclassMirror
        }
        return found
    }

    /// What a string path's component is on an object.
    enum Resolved {
        /// One observable property.
        case property(any ObservableProperty)
        /// Every observable property (`*`), by name.
        case everyProperty([(name: String, property: any ObservableProperty)])
        /// A stored property holding an object that is not an observable property (`let items
        /// = ObservableArray…`, `let settings = Settings()`), whose value never changes.
        case constant(AnyObject)
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
            do {
                return .property(try named(name, of: object, in: path))
            } catch {
                guard let constant = storedObject(named: name, of: object) else { throw error }
                return .constant(constant)
            }
        case .indexFollowing, .objectFollowing:
            throw .notACollection(
                token.spelling, type: String(describing: type(of: object)), path: path)
        }
    }

    /// The object that the stored property `name` of `object` holds, if it holds one that is
    /// not an observable property (an observable collection, or any other object): a string
    /// path goes through it as a constant link.
    static func storedObject(named name: String, of object: AnyObject) -> AnyObject? {
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children where child.label == name {
                if case .object(let held) = PathLink.content(of: child.value) { return held }
            }
            mirror = current.superclassMirror
        }
        return nil
    }

    /// The stored property `name` of `object` if it holds an observable collection itself (not
    /// in a variable).
    static func collection(named name: String, of object: AnyObject) -> AnyObject? {
        storedObject(named: name, of: object).flatMap { $0 as? any PathCollection }
    }

    /// The observable property `name` of `object`, or an error naming the property and type.
    static func named(_ name: String, of object: AnyObject, in path: String) throws(PathError)
        -> any ObservableProperty
    {
        guard let property = all(of: object).first(where: { $0.name == name }) else {
            throw unknown(name, of: object, in: path)
        }
        return property.property
    }

    /// The error for a name `object` has no observable property or stored observable
    /// collection of: it lists every name a string path can use there.
    static func unknown(_ name: String, of object: AnyObject, in path: String) -> PathError {
        .unknownProperty(
            name, type: String(describing: type(of: object)), path: path,
            known: observationSites(of: object).map(\.name))
    }
}
