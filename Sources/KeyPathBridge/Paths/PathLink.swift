import Transforms

/// A path component attached to one object: the running observation of its property, and
/// readers of the property's current value and of the object in it. The path holds its links;
/// a link refers to the model weakly, so a path keeps nothing of the model alive.
class PathLink {
    /// What a link calls for each change: the new value (nil: the part it observes is
    /// unreachable now, such as an index past the end of an array), the object in it (if the
    /// path goes on from the property, else nil), and the change's author. (A value of a generic
    /// type is always `.some`, even when that type is an optional holding nil.)
    typealias Changed = (_ value: Any?, _ next: AnyObject?, _ author: AnyAuthor) -> Void

    /// The property's value when the link's observation started (every later change arrives as
    /// a message), and the object in it (when the path goes on from the property), taken once
    /// by the wiring right after attaching: a link does not keep them (a path holds the model
    /// weakly). A link to a variable reads both in the same step as it starts; by default they
    /// are read now.
    func takeStart() -> (value: Any?, next: AnyObject?) { (read(), next()) }

    /// Ends the link's observations.
    func end() {}

    /// The property's value; nil once the model is gone.
    func read() -> Any? { nil }

    /// The object the property holds, for the next component: `nil` if it holds `nil` (the rest
    /// of the path is unreachable) or the model is gone.
    func next() -> AnyObject? { nil }

    /// Sets the property (a binding's write); false if it cannot be set or the model is gone.
    func write(_ value: Any, as author: AnyAuthor) -> Bool { false }

    /// Whether the link's observations still run (none was ended from the observed side).
    var isObserving: Bool { true }

    /// Whether what the link observes is still there (its property, or for `*` its object).
    var isAlive: Bool { true }

    /// The identity of what the link observes (its property), if it is still there.
    var identity: ObjectIdentifier? { nil }

    /// Whether this is a fan-out's link (``FanOutLink``), whose branches send their changes.
    var isFanOut: Bool { false }

    /// A problem met as the link was attached that did not stop it (a fan-out's branch did not
    /// fit), for the wiring to throw or report.
    var wiringProblem: PathError? { nil }

    /// Whether the link observes nothing at all (a fan-out whose branches all ended, or that
    /// has none; a collection's part gone for good).
    var observesNothing: Bool { false }

    /// The object `value` is, where this link's value is the object it observes (a trailing
    /// `*`'s, before any property changed): the path's end then holds it weakly. Nil for every
    /// other link and value.
    func observedObject(in value: Any?) -> AnyObject? { nil }

    /// Whether the property has a change rule of its own that decides at the end of a path.
    var hasOwnRule: Bool { false }

    /// The end property's own change rule for two reachable end values, or nil to use the end
    /// type's. (May be user code, called under the path's output lock.)
    func isChange(from old: Any, to new: Any) -> Bool? { nil }

    /// The object in a property's value, unwrapping optionals at any depth (an `Optional` in an
    /// `Any`); nil at any depth, or a value that is not an object, is nil.
    static func object(in value: Any?) -> AnyObject? {
        guard case .object(let object) = content(of: value) else { return nil }
        return object
    }

    /// What a property's value holds, after unwrapping optionals at any depth.
    enum Content {
        /// Nil (at some depth).
        case none
        /// An object.
        case object(AnyObject)
        /// A value that is not an object, of the type named.
        case value(type: String)
    }

    /// What `value` holds, after unwrapping optionals at any depth.
    static func content(of value: Any?) -> Content {
        guard var value else { return .none }
        while let optional = value as? any _OptionalType {
            guard let wrapped = optional._wrappedValue else { return .none }
            value = wrapped
        }
        guard type(of: value) is AnyObject.Type else {
            return .value(type: String(describing: type(of: value)))
        }
        return .object(value as AnyObject)
    }
}

/// A link to one observable property: of a typed component, or found by reflection.
final class PropertyLink<Property: ObservableProperty>: PathLink {
    private weak var property: Property?
    private let connection: ConnectionBase
    private let shape: ObjectShape
    /// Until the wiring takes it (touched only by the attaching thread).
    @exclusivity(unchecked) private var started: (value: Any?, next: AnyObject?)?
    /// Whether the property's own change rule decides at the end of a path: not for a `Var` of
    /// a typed path, whose rule the end type's is.
    private let ownRule: Bool

    init(
        _ property: Property, connection: ConnectionBase, shape: ObjectShape,
        start: (value: Any?, next: AnyObject?), hasOwnRule: Bool
    ) {
        self.property = property
        self.connection = connection
        self.shape = shape
        started = start
        ownRule = hasOwnRule
    }

    override var hasOwnRule: Bool { ownRule }

    override var isObserving: Bool { connection.isActive }
    override var isAlive: Bool { property != nil }
    override var identity: ObjectIdentifier? { property.map(ObjectIdentifier.init) }

    override func isChange(from old: Any, to new: Any) -> Bool? {
        guard ownRule, let property, let old = old as? Property.Value,
            let new = new as? Property.Value
        else { return nil }
        return property.isChange(from: old, to: new)
    }

    override func takeStart() -> (value: Any?, next: AnyObject?) {
        defer { started = nil }
        return started ?? (read(), next())
    }
    override func end() { connection.end() }
    override func read() -> Any? { property?.value }
    override func next() -> AnyObject? { property.flatMap { shape.object(in: $0.value) } }

    override func write(_ value: Any, as author: AnyAuthor) -> Bool {
        property?.setIfSettable(value, as: author) ?? false
    }
}

/// The link of a string path's `*`: every observable property of one object. Its value is the
/// object; it is always the last component.
final class EveryPropertyLink: PathLink {
    private weak var object: AnyObject?
    private let connections: [ConnectionBase]

    init(_ object: AnyObject, connections: [ConnectionBase]) {
        self.object = object
        self.connections = connections
    }

    override func end() {
        for connection in connections { connection.end() }
    }

    override func read() -> Any? { object }
    override var isObserving: Bool { connections.allSatisfy(\.isActive) }
    override var isAlive: Bool { object != nil }

    /// The object this link observes, if `value` is it (rather than a change of one of its
    /// properties): a path's end keeps it weakly, as a path holds every object it goes through.
    override func observedObject(in value: Any?) -> AnyObject? {
        guard let object, let held = PathLink.object(in: value), held === object else { return nil }
        return object
    }
}

/// How to find the object in a property's value, decided once per component from the value's
/// type: a class reference (or an optional one) is reinterpreted as `AnyObject` without a
/// dynamic cast; any other type goes through ``PathLink/object(in:)``.
struct ObjectShape: Sendable {
    private enum Kind {
        case object, optionalObject, dynamic
    }
    private let kind: Kind

    /// Finds objects with dynamic casts, for values of any type.
    static let dynamic = ObjectShape(kind: .dynamic)

    private init(kind: Kind) {
        self.kind = kind
    }

    init<Value>(_ type: Value.Type) {
        // One pointer: a class reference, an `Optional` of one, or `AnyObject` (a class-bound
        // existential with witness tables is bigger and takes the dynamic way).
        let isOnePointer = MemoryLayout<Value>.size == MemoryLayout<AnyObject>.size
        if isOnePointer, type is AnyObject.Type {
            kind = .object
        } else if isOnePointer, let optional = type as? any _OptionalType.Type,
            optional._wrappedType is AnyObject.Type
        {
            kind = .optionalObject
        } else {
            kind = .dynamic
        }
    }

    /// Whether finding the object takes dynamic casts (not a reinterpretation).
    var isDynamic: Bool { kind == .dynamic }

    /// The object in `value`, or nil if it holds none.
    func object<Value>(in value: Value) -> AnyObject? {
        switch kind {
        case .object: unsafeBitCast(value, to: AnyObject.self)
        case .optionalObject: unsafeBitCast(value, to: AnyObject?.self)
        case .dynamic: PathLink.object(in: value)
        }
    }
}
