import Transforms

/// An object with synthetic properties, given ways to invalidate them by name and all at once
/// (EBN's `invalidatePropertyValue:` and `invalidateAllSyntheticProperties`). The conformance
/// needs nothing.
///
/// ```swift
/// final class Contact: SyntheticPropertyOwner {
///     @Synthetic({ (contact: Contact) in … }) var fullName: String
/// }
/// contact.invalidateAllSyntheticProperties()
/// ```
public protocol SyntheticPropertyOwner: AnyObject {}

extension SyntheticPropertyOwner {
    /// Invalidates the synthetic property `name` (see ``Synthetic/invalidate()``). Harmless if
    /// the object has no synthetic property of that name (as in EBN): the result says whether
    /// it had one.
    @discardableResult
    public func invalidateSyntheticProperty(named name: String) -> Bool {
        guard let property = SyntheticProperties.all(of: self).first(where: { $0.name == name })
        else { return false }
        property.property.invalidate()
        return true
    }

    /// Invalidates every synthetic property of the object, its superclasses' included.
    ///
    /// All are marked before any observer runs, so none sees some invalidated and others not.
    public func invalidateAllSyntheticProperties() {
        for (_, property) in SyntheticProperties.all(of: self) { property.markInvalid() }
        DependencyTracking.propagateQueuedWork()
    }
}

/// A synthetic property without its types, for reflection.
protocol AnySyntheticProperty: AnyObject {
    /// Learns its owner (`object`, if it is of the owner type) and name.
    func bind(toOwner object: AnyObject, named name: String)
    func invalidate()
    /// Invalidates it and what depends on it, and queues the observed ones, running nothing.
    func markInvalid()
    var isValid: Bool { get }
    /// Reads the value, so that it is valid.
    func makeValid()
    /// The errors of its declared string paths that name nothing, once it observes them.
    var declaredDependencyErrors: [PathError] { get }
}

extension Synthetic: AnySyntheticProperty {
    func bind(toOwner object: AnyObject, named name: String) {
        if let owner = object as? Owner { bind(to: owner, named: name) }
    }

    func makeValid() { _ = value }
}

/// The synthetic properties of an object, found by reflection.
enum SyntheticProperties {
    /// Every synthetic property of `object` (its class's first, then its superclasses'), by
    /// name, each bound to `object`.
    static func all(of object: AnyObject) -> [(name: String, property: any AnySyntheticProperty)] {
        ObservableProperties.storedProperties(of: object).compactMap { name, value in
            guard let property = value as? any AnySyntheticProperty else { return nil }
            property.bind(toOwner: object, named: name)
            return (name, property)
        }
    }
}
