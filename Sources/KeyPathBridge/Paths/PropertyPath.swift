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
    @usableFromInline let components: [PathComponent]

    @usableFromInline init(components: [PathComponent]) {
        self.components = components
    }

    /// A path of one property of `Root`.
    @inlinable
    public init<Property: ObservableProperty<Value>>(_ property: KeyPath<Root, Property>) {
        self.init(components: [PathComponent(property, handlers: TypedHandlers())])
    }

    /// This path extended by a property of the object it leads to.
    ///
    /// ```swift
    /// PropertyPath(\Document.$owner).appending(\.$name)
    /// ```
    @inlinable
    public func appending<Property: ObservableProperty>(
        _ property: KeyPath<Value, Property>
    ) -> PropertyPath<Root, Property.Value> where Value: AnyObject {
        PropertyPath<Root, Property.Value>(
            components: components + [PathComponent(property, handlers: TypedHandlers())])
    }

    /// This path extended by a property of the optional object it leads to; where that object is
    /// `nil`, the extended path is unreachable.
    ///
    /// ```swift
    /// PropertyPath(\UserCache.$currentUser).appending(\.$address)   // currentUser: User?
    /// ```
    @inlinable
    public func appending<Object: AnyObject, Property: ObservableProperty>(
        _ property: KeyPath<Object, Property>
    ) -> PropertyPath<Root, Property.Value> where Value == Object? {
        PropertyPath<Root, Property.Value>(
            components: components + [PathComponent(property, handlers: TypedHandlers())])
    }

    /// The number of properties in the path.
    public var count: Int { components.count }
}

extension PropertyPath {
    /// The property names separated by dots, as a string path spells them (for debug logs):
    /// `currentUser.address.zipCode`. See ``PathComponent/name``.
    var names: String { components.map(\.name).joined(separator: ".") }
}

extension PropertyPath {
    /// A path that fans out from `Root` to every observable property whose value is an
    /// `Object` (or a subclass) or an optional one, found by reflection when the path is wired
    /// to a root: the typed form of a string path's `*` at its start. Extend it with
    /// `appending(_:)` to follow a property of each such object.
    ///
    /// ```swift
    /// let residents = PropertyPath<Household, User?>(everyPropertyHolding: User.self)
    /// let names = residents.appending(\.$name)   // owner's and tenant's names
    /// ```
    ///
    /// Each selected property is a *branch* of its own that re-wires on its own. The path sends
    /// an update whenever the end value of a branch changes (compared with that branch's last
    /// end value), from that branch's old end value to its new one; the path's value is the end
    /// value sent last (at first, the first reachable branch's, in declaration order). A branch
    /// whose object lacks the next property is left out quietly, unless no branch has it (then
    /// it is an error, as any unknown name). A path through a fan-out cannot be written (bound
    /// to).
    public init<Object: AnyObject>(everyPropertyHolding type: Object.Type) where Value == Object? {
        self.init(components: [PathComponent(fanningOutTo: PathComponent.branches(holding: type))])
    }

    /// This path extended by a fan-out to every observable property of the object it leads to
    /// whose value is an `Object` (or a subclass) or an optional one: the typed form of a
    /// string path's `*` in the middle (`currentUser.*.zipCode`). See
    /// ``init(everyPropertyHolding:)``.
    ///
    /// ```swift
    /// let zipCodes = PropertyPath(\UserCache.$currentUser)
    ///     .appendingEveryProperty(holding: Address.self)   // address, workAddress, …
    ///     .appending(\.$zipCode)
    /// ```
    public func appendingEveryProperty<Object: AnyObject>(
        holding type: Object.Type
    ) -> PropertyPath<Root, Object?> where Value: AnyObject {
        PropertyPath<Root, Object?>(components: components + [Self.fanOut(holding: type)])
    }

    /// This path extended by a fan-out to every observable property of the optional object it
    /// leads to whose value is an `Object` or an optional one (see the other form).
    public func appendingEveryProperty<Wrapped: AnyObject, Object: AnyObject>(
        holding type: Object.Type
    ) -> PropertyPath<Root, Object?> where Value == Wrapped? {
        PropertyPath<Root, Object?>(components: components + [Self.fanOut(holding: type)])
    }

    private static func fanOut<Object: AnyObject>(holding type: Object.Type) -> PathComponent {
        PathComponent(fanningOutTo: PathComponent.branches(holding: type))
    }
}
