import Transforms

/// A path from a synthetic property's owner that the property depends on, besides what its
/// function reads: any change along the path invalidates the property. The path may be
/// unreachable at first, and re-wires as paths do.
///
/// ```swift
/// @Synthetic(dependsOn: [.path(\.$nameOrder)], { (person: Person) in … })
/// var fullName: String
/// @Synthetic(dependsOn: [.path("items.*")], { (list: List) in … })
/// var summary: String
/// ```
public struct SyntheticDependency<Owner: AnyObject>: Sendable {
    let observe: @Sendable (Owner, @escaping () -> Void) -> AnyObject

    init(observe: @escaping @Sendable (Owner, @escaping () -> Void) -> AnyObject) {
        self.observe = observe
    }

    func observe(from owner: Owner, invalidate: @escaping () -> Void) -> AnyObject {
        observe(owner, invalidate)
    }

    /// A typed path from the owner.
    public static func path<Value>(_ path: PropertyPath<Owner, Value>) -> Self {
        Self { owner, invalidate in
            let observed = ObservedPath(owner, path)
            return PathDependencyObservation(observed, invalidate: invalidate)
        }
    }

    /// A path of one property of the owner.
    public static func path<Property: ObservableProperty>(_ property: KeyPath<Owner, Property>)
        -> Self
    {
        path(PropertyPath(property))
    }

    /// A string path from the owner (`"items.*"`, `"currentUser.address.zipCode"`).
    ///
    /// A declared string path that names nothing is a ``PathError``, never a stop of the
    /// process: text that does not follow the grammar (see ``PropertyPath/init(_:)-(String)``),
    /// or a component that does not fit an object the path reaches when the property first
    /// observes its declared paths, such as a name the owner has no observable property of (the
    /// error names the component and the type, as ``ObservedPath/init(_:path:fileID:line:)``'s
    /// does). The paths are observed on the property's first use, or when something lists the
    /// owner's observable properties (a string path resolved on the owner, ``Inspector``); the
    /// error is reported through ``PathDiagnostics`` then, and listed by
    /// ``Inspector/syntheticDependencyErrors``. The property still works, and so do its other
    /// dependencies; that one observes nothing.
    ///
    /// ```swift
    /// @Synthetic(dependsOn: [.path("itmes.*")], { (list: List) in … })
    /// var summary: String
    /// list.summary                                // reports: List has no observable property "itmes"
    /// Inspector(list).syntheticDependencyErrors   // ["summary": [.unknownProperty("itmes", …)]]
    /// ```
    ///
    /// A component that does not fit an object the path reaches only later (one that was `nil`
    /// when the path was wired) makes the rest of the path unreachable and is reported through
    /// ``PathDiagnostics`` as it is reached, as for every string path.
    public static func path(_ text: String) -> Self {
        let path: PropertyPath<Owner, Any>
        do {
            path = try PropertyPath(text)
        } catch {
            return Self { _, _ in FailedDependencyObservation(reporting: error) }
        }
        return Self { owner, invalidate in
            let observed = ObservedPath(
                owner, path, site: DeclarationSite(fileID: #fileID, line: #line),
                collectingProblems: true)
            if let problem = observed.wiringProblem {
                observed.stop()
                return FailedDependencyObservation(reporting: problem)
            }
            return PathDependencyObservation(observed, invalidate: invalidate)
        }
    }
}

/// A declared path that names nothing, in place of its observation: it observes nothing, and
/// keeps the error for ``Inspector/syntheticDependencyErrors``.
final class FailedDependencyObservation: Sendable {
    let error: PathError

    /// Reports `error` through ``PathDiagnostics`` (the handler is user code: the property
    /// observes its declared paths holding no lock) and keeps it.
    init(reporting error: PathError) {
        PathDiagnostics.report(error)
        self.error = error
    }
}

/// A declared path's observation: holds the path and invalidates on each of its updates.
private final class PathDependencyObservation<Root: AnyObject, Value>: @unchecked Sendable {
    let path: ObservedPath<Root, Value>
    let connection: ConnectionBase

    init(_ path: ObservedPath<Root, Value>, invalidate: @escaping () -> Void) {
        self.path = path
        connection = path.core.connect(
            receiver: nil, site: DeclarationSite(fileID: #fileID, line: #line),
            handler: .messageAndAuthor { _, _ in invalidate() })
    }

    deinit { connection.end() }
}
