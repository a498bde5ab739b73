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
}
