import Transforms

extension Inspector {
    /// The names of the object's synthetic properties whose cached value is valid (EBN's
    /// `debug_validProperties`), in declaration order (superclass properties last).
    ///
    /// ```swift
    /// Inspector(contact).validSyntheticProperties     // ["fullName"]
    /// Inspector(contact).invalidSyntheticProperties   // ["address"]
    /// ```
    public var validSyntheticProperties: [String] {
        SyntheticProperties.all(of: object).filter { $0.property.isValid }.map(\.name)
    }

    /// The names of the object's synthetic properties whose value must be computed before it is
    /// read (EBN's `debug_invalidProperties`).
    public var invalidSyntheticProperties: [String] {
        SyntheticProperties.all(of: object).filter { !$0.property.isValid }.map(\.name)
    }

    /// Computes every synthetic property of the object that is invalid, so that all are valid
    /// and their cached values can be looked at (EBN's `debug_forceAllPropertiesValid`).
    public func forceAllSyntheticPropertiesValid() {
        for (_, property) in SyntheticProperties.all(of: object) { property.makeValid() }
    }

    /// The object's synthetic properties whose declared string dependencies name nothing, by
    /// name, each with the ``PathError`` of every such dependency in declaration order (see
    /// ``SyntheticDependency/path(_:)-(String)``): text that does not follow the grammar, or a
    /// component that does not fit an object the path reached when it was wired. Properties
    /// whose declared paths are all fine are not listed.
    ///
    /// ```swift
    /// final class List {
    ///     let items = ObservableArray<Item>()
    ///     @Synthetic(dependsOn: [.path("itmes.*")], { (list: List) in … }) var summary: String
    /// }
    /// Inspector(list).syntheticDependencyErrors
    /// // ["summary": [.unknownProperty("itmes", type: "List", path: "itmes.*", known: […])]]
    /// ```
    ///
    /// Asking wires the declared paths of every property not used yet (reporting their errors
    /// through ``PathDiagnostics``, as its first use would). A component that does not fit an
    /// object reached only after the path was wired is reported through ``PathDiagnostics``
    /// alone, when it is reached. Properties made at run time (`Synthetic(owner:name:…)`) are
    /// not stored in the object, and not listed.
    public var syntheticDependencyErrors: [String: [PathError]] {
        var errors: [String: [PathError]] = [:]
        for (name, property) in SyntheticProperties.all(of: object) {
            let found = property.declaredDependencyErrors
            if !found.isEmpty { errors[name] = found }
        }
        return errors
    }
}
