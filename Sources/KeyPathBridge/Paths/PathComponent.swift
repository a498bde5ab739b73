import Transforms

/// One component of a path, with its types erased so that a path of any length is an array: how
/// to observe the property on an object of the component's type, and how to read its value.
@usableFromInline
struct PathComponent: @unchecked Sendable {
    /// The property's name, as a string path spells it (for debug logs).
    let nameBox: ComponentName

    /// The property's name, as a string path spells it, if known: a typed component learns the
    /// name of an `@ObservableVar` (whose `$name` key path carries no name) when it first
    /// attaches to an object.
    var name: String { nameBox.name }

    /// Whether the observation that `attach` starts for a receiver is owned by that receiver, so
    /// that it runs without anyone holding the link (a variable's; not a tracked property's).
    let isOwnedByReceiver: Bool

    /// For a fan-out marker in a path's flat list of components, what it fans out to (see
    /// ``nestingFanOuts(_:)``).
    var fanOut: FanOutMaker? = nil

    /// For a string path's component: the error for a value of the type named that the path
    /// cannot go on from (not an object), met after the component was attached. (A typed
    /// path's types say where it goes on from an object.)
    private(set) var misfit: (@Sendable (_ type: String) -> PathError)? = nil

    /// Observes the property of `object` (for `receiver`, if any), calling `changed` with the new
    /// value, the object in it if `leadsOn` (the path goes on from this property), and the
    /// author of each change. (Each change is handled with the value its message carries, not
    /// the property's value when it is handled, so that every change keeps its own author even
    /// when another change was made meanwhile.)
    /// Throws when the component cannot be resolved on `object` (a string path naming a property
    /// the object does not have): the rest of the path is unreachable.
    /// With a `group` (and a receiver), the receiver files the observation under the object
    /// whose identity that is (a path's root, for `observer.stopObserving(root)`).
    let attach:
        (
            _ object: AnyObject, _ receiver: Receiver?, _ group: ObjectIdentifier?,
            _ site: DeclarationSite, _ leadsOn: Bool, _ changed: @escaping PathLink.Changed
        ) throws(PathError) -> PathLink

    /// For a typed component whose property is a variable or a collection's part, declared
    /// where its value type is known (``TypedHandlers``): `attach` at the end of a path, whose
    /// typed end is `end` and whose observation of this level is tagged `tag`. A change then
    /// reaches the end without the engine's hop when the wiring lets it
    /// (``PathWiring/beginDirectChange(tag:from:)``), else goes to `changed`. Nil: use `attach`.
    private(set) var attachAsEnd:
        (
            (
                _ object: AnyObject, _ receiver: Receiver?, _ site: DeclarationSite,
                _ end: AnyObject, _ tag: PathWiring.Tag, _ changed: @escaping PathLink.Changed
            ) throws(PathError) -> PathLink
        )? = nil

    /// For a typed component (whose observation is owned by its receiver): observes the
    /// property of `object` for `receiver`, filed under `group`, calling `changed` at each
    /// change, without reading the values or holding the property (a property held weakly has
    /// a side table, which slows every retain of it). For a path of one property that never
    /// re-wires (coalesced observation); returns the observation. Nil: use `attach`.
    private(set) var observeChanges:
        (
            (
                _ object: AnyObject, _ receiver: Receiver, _ group: ObjectIdentifier?,
                _ site: DeclarationSite, _ changed: @escaping () -> Void
            ) -> ConnectionBase
        )? = nil

    /// A component for the observable property that `keyPath` leads to. With `handlers` (built
    /// where the path is declared), a variable's changes are handled by code specialized for its
    /// value type.
    @usableFromInline
    init<Object: AnyObject, Property: ObservableProperty>(
        _ keyPath: KeyPath<Object, Property>, handlers: TypedHandlers<Property.Value>? = nil
    ) {
        let name = ComponentName.shared(keyPath)
        let shape = ObjectShape(Property.Value.self)
        // A variable's rule is its value type's, which the path's end type has already.
        let isVariable = Property.self is any VariableType.Type
        nameBox = name
        isOwnedByReceiver = true
        /// Observes the property of `object` with the handler `receive` makes from it.
        func link(
            _ object: AnyObject, _ receiver: Receiver?, _ group: ObjectIdentifier?,
            _ site: DeclarationSite, _ leadsOn: Bool,
            _ receive: (Property) -> (Update<Property.Value>, AnyAuthor) -> Void
        ) -> PathLink {
            // The typed `PropertyPath` only ever passes an `Object` here.
            let property = unsafeDowncast(object, to: Object.self)[keyPath: keyPath]
            name.learn(from: object, property: property)
            var start: (value: Any?, next: AnyObject?) = (nil, nil)
            // The object in the starting value is found under the property's lock only when that
            // is a reinterpretation; dynamic casts wait until after unlocking.
            let connection = property.startObservation(
                receiver: receiver, site: site, groupedUnder: group,
                initial: {
                    start.value = $0
                    if leadsOn, !shape.isDynamic { start.next = shape.object(in: $0) }
                },
                receive: receive(property))
            if leadsOn, shape.isDynamic { start.next = PathLink.object(in: start.value) }
            return PropertyLink(
                property, connection: connection, shape: shape, start: start,
                hasOwnRule: !isVariable)
        }
        /// The handler that passes each change on to `changed` (specialized where `handlers`
        /// were built, for a property the path does not go on from).
        func relay(
            _ leadsOn: Bool, _ changed: @escaping PathLink.Changed
        ) -> (Update<Property.Value>, AnyAuthor) -> Void {
            if !leadsOn, let handlers { return handlers.relay(changed) }
            return { update, author in
                changed(update.new, leadsOn ? shape.object(in: update.new) : nil, author)
            }
        }
        attach = { object, receiver, group, site, leadsOn, changed in
            link(object, receiver, group, site, leadsOn) { _ in relay(leadsOn, changed) }
        }
        observeChanges = { object, receiver, group, site, changed in
            let property = unsafeDowncast(object, to: Object.self)[keyPath: keyPath]
            name.learn(from: object, property: property)
            // The handler ignores the update: it needs no metadata of its type.
            return property.startObservation(
                receiver: receiver, site: site, groupedUnder: group, initial: { _ in }
            ) { _, _ in changed() }
        }
        guard isVariable, let handlers else { return }
        attachAsEnd = { object, receiver, site, end, tag, changed in
            link(object, receiver, nil, site, false) { variable in
                handlers.direct(end, tag, variable, changed)
            }
        }
    }
}

extension PathComponent {
    /// This component, whose changes at the end of a typed path to `Value` reach the end
    /// without the engine's hop when the wiring lets them (``TypedHandlers/directPart``): for
    /// a collection's part (a count, an element, a key's value, a membership), whose value
    /// type is the end type and which has no change rule of its own.
    @usableFromInline
    func endingDirectly<Value>(_ handlers: TypedHandlers<Value>) -> PathComponent {
        var component = self
        let attach = self.attach
        component.attachAsEnd = { object, receiver, site, end, tag, changed throws(PathError) in
            try attach(
                object, receiver, nil, site, false,
                handlers.directPart(end, tag, changed))
        }
        return component
    }
}

/// The handlers of a typed component's changes, built where the path is declared (in inlinable
/// code, so that they are specialized for the property's value type there; a generic closure
/// built inside this module would look up `Update<Value>`'s metadata on every change).
@usableFromInline
struct TypedHandlers<Value> {
    /// Makes the handler of a property the path does not go on from: each change goes to
    /// `changed`.
    @usableFromInline
    let relay:
        (_ changed: @escaping (Any, AnyObject?, AnyAuthor) -> Void) -> (
            Update<Value>, AnyAuthor
        ) -> Void

    /// Makes the handler of the variable at the end of a typed path: each change is published
    /// by the end directly when the wiring lets it (compared by the variable's rule, which is
    /// `Value`'s), else goes to `changed` (through the engine); if `end` is not the typed end
    /// of a path to `Value`, each goes to `changed`. (Not an optional: a closure in an optional
    /// is called through reabstraction thunks.)
    @usableFromInline
    let direct:
        (
            _ end: AnyObject, _ tag: PathWiring.Tag, _ variable: AnyObject,
            _ changed: @escaping (Any, AnyObject?, AnyAuthor) -> Void
        ) -> (Update<Value>, AnyAuthor) -> Void

    /// Makes what a collection part at the end of a typed path to `Value` calls for each
    /// change: each new value (nil: unreachable) is published by the end directly when the
    /// wiring lets it (compared by `Value`'s rule, the end type's; a part has no rule of its
    /// own), else goes to `changed` (through the engine); `changed` itself if `end` is not the
    /// typed end of such a path.
    @usableFromInline
    let directPart:
        (
            _ end: AnyObject, _ tag: PathWiring.Tag,
            _ changed: @escaping (Any?, AnyObject?, AnyAuthor) -> Void
        ) -> (Any?, AnyObject?, AnyAuthor) -> Void

    @inlinable
    init() {
        directPart = { end, tag, changed in
            // `Any` and `Any?` compare what the values hold: the engine's way.
            guard let tracker = end as? PathTracker<Value>, !PathTracker<Value>.comparesHeldValues
            else { return changed }
            let rule = ChangeRule<Value>()
            let wiring = tracker.wiring
            return { value, next, author in
                // A part at the end sends an object only for changes it handles itself; one
                // that becomes unreachable goes through the engine, which ends a path that can
                // never change again.
                guard next == nil, value != nil, wiring.beginDirectChange(tag: tag, from: author)
                else {
                    return changed(value, next, author)
                }
                tracker.publishDirectly(value.map { $0 as! Value }, from: author, rule: rule)
                wiring.endDirectChange()
            }
        }
        let relay:
            (@escaping (Any, AnyObject?, AnyAuthor) -> Void) -> (Update<Value>, AnyAuthor)
                -> Void = { changed in
                    { update, author in changed(update.new, nil, author) }
                }
        self.relay = relay
        direct = { end, tag, variable, changed in
            // A `Var<Any>`'s own rule (every set is a change) is not the end type's (what the
            // values hold): such a path takes the engine's way, as one to `Any?` does.
            guard let tracker = end as? PathTracker<Value>, !PathTracker<Value>.comparesHeldValues
            else { return relay(changed) }
            // `attachAsEnd` passes only a variable of `Value` (a `Variable` is final).
            let rule = unsafeDowncast(variable, to: Variable<Value>.self).changeRule
            let wiring = tracker.wiring
            // Holds the end strongly, as the wiring does: the path's `stop()` ends this
            // observation, which lets go of it.
            return { update, author in
                if wiring.beginDirectChange(tag: tag, from: author) {
                    tracker.publishDirectly(update.new, from: author, rule: rule)
                    wiring.endDirectChange()
                } else {
                    changed(update.new, nil, author)
                }
            }
        }
    }
}

extension PathComponent {
    /// A component of a string path, resolved by ``ObservableProperties/resolve(_:on:in:)`` each
    /// time the component is attached (once per re-wiring, never per message). `*` observes
    /// every observable property of the object, and its value is the
    /// `(property: String, value: Any)` that changed (or the object itself at first).
    init(_ token: PathToken, in path: String) {
        nameBox = ComponentName(token.spelling)
        isOwnedByReceiver = true
        let spelling = token.spelling
        misfit = { type in .notAnObject(spelling, type: type, path: path) }
        attach = { object, receiver, group, site, leadsOn, changed throws(PathError) in
            if let collection = object as? any PathCollection {
                return try collection.attachPart(
                    CollectionPart(token), receiver: receiver, group: group, site: site,
                    leadsOn: leadsOn, changed: changed, path: path)
            }
            switch try ObservableProperties.resolve(token, on: object, in: path) {
            case .constant(let held):
                return ConstantLink(held)
            case .everyProperty(let properties):  // always the last component
                var connections: [ConnectionBase] = []
                for (name, property) in properties {
                    connections.append(
                        Self.observe(
                            property, named: name, receiver: receiver, group: group, site: site,
                            changed: changed))
                }
                return EveryPropertyLink(object, connections: connections)
            case .property(let property):
                return try Self.link(
                    to: property, receiver: receiver, group: group, site: site,
                    leadsOn: leadsOn, changed: changed
                ) { type throws(PathError) in
                    throw .notAnObject(token.spelling, type: type, path: path)
                }
            }
        }
    }

    /// Observes `property`, named `name`, for a string path's `*`: each change is passed on as
    /// the `(property: String, value: Any)` that changed.
    private static func observe<Property: ObservableProperty>(
        _ property: Property, named name: String, receiver: Receiver?, group: ObjectIdentifier?,
        site: DeclarationSite, changed: @escaping PathLink.Changed
    ) -> ConnectionBase {
        property.startObservation(
            receiver: receiver, site: site, groupedUnder: group, initial: { _ in }
        ) { update, author in
            changed((property: name, value: update.new), nil, author)
        }
    }

    /// Attaches a component to `property`, found by reflection (a string path's, or a
    /// fan-out's branch). Where the path goes on from it and it holds a value that is not an
    /// object when the observation starts, `misfit` is called with the value's type: it throws
    /// (a string path's misfit), or returns and the rest of the path is unreachable (a branch).
    static func link<Property: ObservableProperty>(
        to property: Property, receiver: Receiver?, group: ObjectIdentifier?,
        site: DeclarationSite, leadsOn: Bool, changed: @escaping PathLink.Changed,
        misfit: (_ type: String) throws(PathError) -> Void
    ) throws(PathError) -> PathLink {
        let shape = ObjectShape(Property.Value.self)
        var start: (value: Any?, next: AnyObject?) = (nil, nil)
        // The object in the starting value is found after unlocking (the cast may call into
        // the value's type).
        let connection = property.startObservation(
            receiver: receiver, site: site, groupedUnder: group, initial: { start.value = $0 }
        ) { update, author in
            changed(update.new, leadsOn ? shape.object(in: update.new) : nil, author)
        }
        if leadsOn {
            switch PathLink.content(of: start.value) {
            case .object(let object): start.next = object
            case .none: break
            case .value(let type):
                do throws(PathError) {
                    try misfit(type)
                } catch {
                    connection.end()
                    throw error
                }
            }
        }
        return PropertyLink(
            property, connection: connection, shape: shape, start: start,
            // A variable's rule is its value type's, which comparing what values hold follows
            // (and, for a `Var<Any>`, improves on: equal held values are no change).
            hasOwnRule: !(Property.self is any VariableType.Type))
    }
}

/// The name of a path component, looked for by reflection the first time a typed component
/// whose key path does not name it attaches to an object (never again after that).
final class ComponentName: @unchecked Sendable {
    private let lock = Lock()
    @exclusivity(unchecked) private var known: String?
    @exclusivity(unchecked) private var looked = false
    private let placeholder: String

    init(_ name: String) {
        known = name
        placeholder = name
    }

    /// The name in the key path's description (`\User.name` → `name`), if it names a stored
    /// property; a `$name` projection is a computed property, described without its name.
    init<Object, Value>(_ keyPath: KeyPath<Object, Value>) {
        let text = String(describing: keyPath)
        let prefix = "\\\(Object.self)."
        if text.hasPrefix(prefix), !text.contains("<") {
            known = String(text.dropFirst(prefix.count))
        }
        placeholder = "<\(Value.self)>"
    }

    var name: String { lock.withLock { known } ?? placeholder }

    /// The name of the component for `keyPath`, shared by every path built with the same key
    /// path object: the key path is described, and the name searched for by reflection, once,
    /// not once per path (which cost most of starting a path). The cache knows key paths by
    /// identity and holds them weakly, so it keeps no subscript argument alive and runs no
    /// `hash(into:)` of one; a key path literal without arguments is one object for the whole
    /// process. It is emptied when it grows past 1,024 key paths.
    static func shared<Object, Value>(_ keyPath: KeyPath<Object, Value>) -> ComponentName {
        let key = ObjectIdentifier(keyPath)
        let cached = SharedNames.lock.withLock { SharedNames.names[key] }
        if let cached, cached.keyPath === keyPath { return cached.name }
        let made = ComponentName(keyPath)
        let dropped = SharedNames.lock.withLock { () -> [ObjectIdentifier: SharedNames.Entry] in
            if let raced = SharedNames.names[key], raced.keyPath === keyPath { return [:] }
            var dropped: [ObjectIdentifier: SharedNames.Entry] = [:]
            if SharedNames.names.count >= 1_024 { swap(&dropped, &SharedNames.names) }
            SharedNames.names[key] = SharedNames.Entry(keyPath: keyPath, name: made)
            return dropped
        }
        _ = dropped  // released after unlocking
        return made
    }

    /// Finds the name of `property` among the observable properties of `object`, once (unless
    /// the property knows its name).
    func learn<Property: ObservableProperty>(from object: AnyObject, property: Property) {
        learn {
            if let name = property.debugName { return .found(name) }
            let found = ObservableProperties.all(of: object).first { $0.property === property }
            return found.map { .found($0.name) } ?? .none
        }
    }

    /// What a search for a name found.
    enum Search {
        /// The name.
        case found(String)
        /// There is none to find: keep the placeholder.
        case none
        /// Nothing to recognize the property by yet: search again at the next attach.
        case later
    }

    /// Calls `find` to learn the name if it is not known and no search settled it yet (the
    /// first attach looks; if it finds nothing, the placeholder stays).
    func learn(_ find: () -> Search) {
        let mustLook = lock.withLock { known == nil && !looked }
        guard mustLook else { return }
        let search = find()
        lock.withLock {
            switch search {
            case .found(let name): known = name
            case .none: looked = true
            case .later: break
            }
        }
    }
}

/// The component names shared per key path (see ``ComponentName/shared(_:)``).
private enum SharedNames {
    struct Entry {
        weak var keyPath: AnyKeyPath?
        let name: ComponentName
    }

    static let lock = Lock()
    nonisolated(unsafe) static var names: [ObjectIdentifier: Entry] = [:]
}
