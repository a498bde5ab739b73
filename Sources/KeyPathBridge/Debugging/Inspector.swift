import Transforms

/// A look inside an object's observable properties, for debugging: which are observed, by how
/// many observations and from where; a hook per property for when it becomes observed or
/// unobserved; triggering a property's observers by hand; and breaking (or logging) whenever a
/// path from the object changes.
///
/// ```swift
/// print(Inspector(cache).report)
/// // UserCache (0x0000600001234560): 1 observable property
/// //   currentUser: 2 observations
/// //     App/ProfileViewModel.swift:31
/// //     App/Sidebar.swift:12
/// Inspector(cache).breakOnChange(PropertyPath(\.$currentUser).appending(\.$name))
/// ```
///
/// The observable properties are those a string path can name: `Var` properties and
/// `@ObservableVar` properties, found by reflection (of the object's class and its superclasses).
/// Observations of a path count on every property along it that they currently observe.
/// Meant for debugging and tests: it reflects over the object each time you ask.
public struct Inspector<Object: AnyObject> {
    /// The inspected object.
    public let object: Object

    /// Inspects `object`.
    public init(_ object: Object) {
        self.object = object
    }

    /// Every observable property of the object, and every observable collection it holds in a
    /// `let` property, in declaration order (superclass properties last), with its running
    /// observations (a collection's include those of its parts: `count`, elements, keys).
    public var properties: [PropertyReport] {
        ObservableProperties.observationSites(of: object).map {
            PropertyReport(name: $0.name, observationSites: $0.sites)
        }
    }

    /// A readable dump of the object's observers: every observable property with the number of
    /// its observations and each one's declaration site (`#fileID:#line`), and the observations
    /// of the object itself if it is an ``ObservableObject``.
    public var report: String {
        let properties = properties
        let address = Unmanaged.passUnretained(object).toOpaque()
        let noun = properties.count == 1 ? "property" : "properties"
        var lines = ["\(type(of: object)) (\(address)): \(properties.count) observable \(noun)"]
        if let observable = object as? any ObservableObject {
            // A collection's own count includes its parts' observations, without Herald's.
            let sites =
                (object as? any PathCollection)?.observationSitesOfParts
                ?? observable.observationSites
            lines += Self.describe("self", sites: sites)
        }
        for property in properties {
            lines += Self.describe(property.name, sites: property.observationSites)
        }
        return lines.joined(separator: "\n")
    }

    private static func describe(_ name: String, sites: [DeclarationSite]) -> [String] {
        switch sites.count {
        case 0: return ["  \(name): not observed"]
        case 1: return ["  \(name): 1 observation", "    \(sites[0])"]
        default: return ["  \(name): \(sites.count) observations"] + sites.map { "    \($0)" }
        }
    }

    /// The number of running observations of the observable property `name` (or of the
    /// observable collection, with its parts, that the `let` property `name` holds).
    ///
    /// - Throws: ``PathError/unknownProperty(_:type:path:known:)`` if the object has no
    ///   observable property or collection of that name.
    public func observationCount(of name: String) throws(PathError) -> Int {
        guard let property = properties.first(where: { $0.name == name }) else {
            throw ObservableProperties.unknownToInspector(name, of: object)
        }
        return property.observationCount
    }

    /// Calls `handler` whenever the observable property `name` becomes observed (its first
    /// observation starts) or unobserved (its last one ends), replacing any previous handler of
    /// that property.
    ///
    /// ```swift
    /// try Inspector(user).whenObservationStateChanges(of: "avatar") { isObserved in
    ///     print(isObserved ? "someone shows the avatar" : "nobody shows the avatar")
    /// }
    /// ```
    ///
    /// It is the property's own hook (``ObservableObject/whenObservationStateChanges(_:)``, as
    /// `user.$avatar.whenObservationStateChanges { }` sets it), found by name; the same rules
    /// apply. For a stored observable collection (`let items: ObservableArray<Todo>`) it is the
    /// collection's hook, whose observations include those of its parts (`items.count`, an
    /// element, a key).
    ///
    /// - Throws: ``PathError/unknownProperty(_:type:path:known:)`` for an unknown name.
    public func whenObservationStateChanges(
        of name: String, _ handler: @escaping (_ isObserved: Bool) -> Void
    ) throws(PathError) {
        try observable(name).whenObservationStateChanges(handler)
    }

    /// Sends the current value of the observable property `name` to its observers, as if it had
    /// changed (old and new are the current value). Paths through the property deliver their
    /// end value too, even though it did not change. The author is ``triggerAuthor``.
    ///
    /// - Throws: ``PathError/unknownProperty(_:type:path:known:)`` for an unknown name;
    ///   ``PathError/notTriggerable(_:type:)`` for a stored observable collection, which has no
    ///   value to send (its observers get its edits).
    public func trigger(_ name: String) throws(PathError) {
        guard case .property(let property) = try observable(name) else {
            throw .notTriggerable(name, type: String(describing: type(of: object)))
        }
        property.sendCurrentValue(from: ManualTrigger.author)
    }

    /// Sends the current value of `property` to its observers, as if it had changed; see
    /// ``trigger(_:)-(String)``.
    ///
    /// ```swift
    /// Inspector(user).trigger(\.$name)
    /// ```
    public func trigger<Property: ObservableProperty>(_ property: KeyPath<Object, Property>) {
        object[keyPath: property].sendCurrentValue(from: ManualTrigger.author)
    }

    /// The author of the updates that ``trigger(_:)-(String)`` sends.
    public static var triggerAuthor: AnyAuthor { ManualTrigger.author }

    /// What `name` is on the object: an observable property, or a stored observable collection
    /// (whose observations include its parts').
    private func observable(_ name: String) throws(PathError) -> Observable {
        do {
            return .property(try ObservableProperties.named(name, of: object, in: name))
        } catch {
            guard let collection = ObservableProperties.collection(named: name, of: object),
                let observable = collection as? any ObservableObject
            else { throw ObservableProperties.unknownToInspector(name, of: object) }
            return .collection(observable)
        }
    }

    /// An observable property or a stored observable collection, by name.
    private enum Observable {
        case property(any ObservableProperty)
        case collection(any ObservableObject)

        func whenObservationStateChanges(_ handler: @escaping (_ isObserved: Bool) -> Void) {
            switch self {
            case .property(let property): property.whenObservationStateChanges(handler)
            case .collection(let collection): collection.whenObservationStateChanges(handler)
            }
        }
    }
}

/// The author of manually triggered updates.
final class ManualTrigger: Sendable {
    static let author = ManualTrigger()
}

/// One observable property of an inspected object and its running observations.
public struct PropertyReport: Sendable, Equatable, CustomStringConvertible {
    /// The property's name (without `$` or `_`).
    public let name: String
    /// The declaration sites of the running observations of the property, in the order they
    /// started.
    public let observationSites: [DeclarationSite]

    /// The number of running observations of the property.
    public var observationCount: Int { observationSites.count }

    /// Whether at least one observation of the property is running.
    public var isObserved: Bool { !observationSites.isEmpty }

    /// The name and the number of observations: `currentUser: 2 observations`.
    public var description: String {
        "\(name): \(observationCount) observation\(observationCount == 1 ? "" : "s")"
    }
}
