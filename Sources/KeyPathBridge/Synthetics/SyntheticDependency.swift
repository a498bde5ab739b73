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

    /// A string path from the owner (`"items.*"`, `"currentUser.address.zipCode"`). A component
    /// that does not fit an object the path reaches is reported through ``PathDiagnostics``
    /// when the path is wired; text that does not follow the grammar (see
    /// ``PropertyPath/init(_:)-(String)``) stops the process with the ``PathError``, since it is a
    /// mistake in the declaration.
    public static func path(_ text: String) -> Self {
        let path: PropertyPath<Owner, Any>
        do {
            path = try PropertyPath(text)
        } catch {
            fatalError("Herald: a synthetic property's dependency: \(error)")
        }
        return .path(path)
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
