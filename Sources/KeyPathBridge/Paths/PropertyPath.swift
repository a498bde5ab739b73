import Transforms

/// A compile-time checked chain of observable properties from a root object to a value, the
/// Swift analogue of a KVO key path such as `currentUser.address.zipCode`.
///
/// ```swift
/// let zipCode = PropertyPath(\UserCache.$currentUser).appending(\.$address).appending(\.$zipCode)
/// // PropertyPath<UserCache, String>
/// ```
///
/// Each component is an ``ObservableProperty``: a ``Variable`` (or an `@ObservableVar` through
/// its `$name`), or any other observable property. Every component but the last holds an object, or an optional object; when an
/// intermediate property holds `nil`, the rest of the path is *unreachable*. Observe a path with
/// ``ObservedPath`` or `observer.observe(root, \.$a, \.$b) { value in }`.
public struct PropertyPath<Root: AnyObject, Value>: Sendable {
    let components: [PathComponent]

    init(components: [PathComponent]) {
        self.components = components
    }

    /// A path of one property of `Root`.
    public init<Property: ObservableProperty<Value>>(_ property: KeyPath<Root, Property>) {
        self.init(components: [PathComponent(property)])
    }

    /// This path extended by a property of the object it leads to.
    ///
    /// ```swift
    /// PropertyPath(\Document.$owner).appending(\.$name)
    /// ```
    public func appending<Property: ObservableProperty>(
        _ property: KeyPath<Value, Property>
    ) -> PropertyPath<Root, Property.Value> where Value: AnyObject {
        PropertyPath<Root, Property.Value>(components: components + [PathComponent(property)])
    }

    /// This path extended by a property of the optional object it leads to; where that object is
    /// `nil`, the extended path is unreachable.
    ///
    /// ```swift
    /// PropertyPath(\UserCache.$currentUser).appending(\.$address)   // currentUser: User?
    /// ```
    public func appending<Object: AnyObject, Property: ObservableProperty>(
        _ property: KeyPath<Object, Property>
    ) -> PropertyPath<Root, Property.Value> where Value == Object? {
        PropertyPath<Root, Property.Value>(components: components + [PathComponent(property)])
    }

    /// The number of properties in the path.
    public var count: Int { components.count }
}

extension PropertyPath {
    /// The property names separated by dots, as a string path spells them (for debug logs):
    /// `currentUser.address.zipCode`. See ``PathComponent/name``.
    var names: String { components.map(\.name).joined(separator: ".") }
}
