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
        /// = ObservableArray…`, `let settings = Settings()`), whose value never changes (nil:
        /// an optional holding none).
        case constant(AnyObject?)
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

    /// What the stored property `name` of `object` holds, if it is of a class type or an
    /// optional of one and not an observable property (an observable collection, or any other
    /// object): a string path goes through it as a constant link (`.some(nil)`: an optional
    /// holding nil, which makes the rest unreachable).
    static func storedObject(named name: String, of object: AnyObject) -> AnyObject?? {
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children where child.label == name {
                if let held = constant(in: child.value) { return held }
            }
            mirror = current.superclassMirror
        }
        return nil
    }

    /// The object a stored property's value holds, if the value is of a class type or an
    /// optional of one (`.some(nil)` for nil), and the property is not an observable one.
    private static func constant(in value: Any) -> AnyObject?? {
        guard !(value is any ObservableProperty), !(value is AnyObservableVar) else { return nil }
        switch PathLink.content(of: value) {
        case .object(let held): return .some(held)
        case .value: return nil
        case .none:
            let type = Swift.type(of: value) as? any _OptionalType.Type
            return type?._wrappedType is AnyObject.Type ? .some(nil) : nil
        }
    }

    /// Every name a string path can use on `object`: its observable properties, stored
    /// observable collections and other stored properties holding objects (constant links), in
    /// declaration order (superclass properties last).
    static func pathNames(of object: AnyObject) -> [String] {
        var names: [String] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label else { continue }
                if child.value is any AnySyntheticProperty || child.value is AnyObservableVar {
                    names.append(label.hasPrefix("_") ? String(label.dropFirst()) : label)
                } else if child.value is any ObservableProperty || constant(in: child.value) != nil
                {
                    names.append(label)
                }
            }
            mirror = current.superclassMirror
        }
        return names
    }

    /// The stored property `name` of `object` if it holds an observable collection itself (not
    /// in a variable).
    static func collection(named name: String, of object: AnyObject) -> AnyObject? {
        guard case .some(.some(let held)) = storedObject(named: name, of: object),
            held is any PathCollection
        else { return nil }
        return held
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

    /// The error for a name a string path cannot use on `object`: it lists every name it can
    /// (``pathNames(of:)``).
    static func unknown(_ name: String, of object: AnyObject, in path: String) -> PathError {
        .unknownProperty(
            name, type: String(describing: type(of: object)), path: path,
            known: pathNames(of: object))
    }

    /// The error for a name the Inspector does not report on `object`: it lists the names it
    /// reports (observable properties and stored observable collections).
    static func unknownToInspector(_ name: String, of object: AnyObject) -> PathError {
        .unknownProperty(
            name, type: String(describing: type(of: object)), path: name,
            known: observationSites(of: object).map(\.name))
    }
}
