import Transforms

/// A part of an observable collection that a path can observe.
@usableFromInline
enum CollectionPart {
    /// The number of elements (`count`): changes only when the count does.
    case count
    /// The element at an index, whichever it is (`#3`); unreachable past the end.
    case indexFollowing(Int)
    /// The element at an index when the observation starts, followed as it moves (`3`).
    case objectFollowing(Int)
    /// Any mutation (`*` as the last component): every change message.
    case anyMutation
    /// A dictionary key, or a name that is none of the above.
    case key(String)

    /// The part a string path's component names on a collection.
    init(_ token: PathToken) {
        switch token {
        case .name("count"): self = .count
        case .name(let key): self = .key(key)
        case .indexFollowing(let index): self = .indexFollowing(index)
        case .objectFollowing(let index): self = .objectFollowing(index)
        case .everyProperty: self = .anyMutation
        }
    }
}

/// An observable collection whose parts a path can go through.
protocol PathCollection: AnyObject {
    /// Observes `part` (for `receiver`, filed under `group`): the path's link to it. `changed`
    /// gets each new value of the part (nil: unreachable) and, if `leadsOn`, the object in it.
    ///
    /// - Throws: ``PathError`` when the part does not fit this collection (the error names
    ///   `path`).
    func attachPart(
        _ part: CollectionPart, receiver: Receiver?, group: ObjectIdentifier?,
        site: DeclarationSite, leadsOn: Bool, changed: @escaping PathLink.Changed, path: String
    ) throws(PathError) -> PathLink

    /// Fans out to every element that is an object: one branch per element, following `rest`
    /// from it; elements that join later join, and those that leave, leave.
    func attachEachElement(
        following rest: [PathComponent], receiver: Receiver?, site: DeclarationSite,
        changed: @escaping PathLink.Changed
    ) -> PathLink

    /// The declaration sites of the running observations of the collection and of its parts
    /// (for ``Inspector``).
    var observationSitesOfParts: [DeclarationSite] { get }
}

extension PathCollection where Self: ObservableObject {
    /// Every part is observed through the collection's own messenger.
    var observationSitesOfParts: [DeclarationSite] { observationSites }
}

/// The key (or member) of type `Key` that a string path's component names on a collection of
/// type `collection`: the text itself for `String` keys, else the key type's reading of it
/// (`LosslessStringConvertible`, such as `Int`).
///
/// - Throws: ``PathError/unknownProperty(_:type:path:known:)`` for text that is no such key.
func key<Key>(
    _ name: String, as _: Key.Type, on collection: Any.Type, path: String
) throws(PathError) -> Key {
    if let key = name as? Key { return key }
    // `Character.init(_:)` stops the program on text that is not one character.
    if Key.self == Character.self {
        if name.count == 1, let key = Character(name) as? Key { return key }
    } else if let type = Key.self as? any LosslessStringConvertible.Type,
        let key = type.init(name) as? Key
    {
        return key
    }
    throw .unknownProperty(
        name, type: String(describing: collection), path: path, known: ["count", "*"])
}

/// Throws if a path goes on (`leadsOn`) from a part whose values are never objects (a count,
/// a membership) or from a value that is not an object now (`value`).
func checkGoesOn(
    _ leadsOn: Bool, from part: String, valueType: String? = nil, value: Any? = nil,
    path: String
) throws(PathError) {
    guard leadsOn else { return }
    if let valueType { throw .notAnObject(part, type: valueType, path: path) }
    if case .value(let type) = PathLink.content(of: value) {
        throw .notAnObject(part, type: type, path: path)
    }
}

/// A collection change (whose counts before and after it the collection reads:
/// ``CountedCollection/counts(of:)``).
protocol CountedChange {
    /// A change that changes nothing, from `count` elements (the value of an any-mutation
    /// part before the first change).
    static func none(count: Int) -> Self
}

/// An observable collection whose messages are ``CountedChange``s: the parts every collection
/// has (`count`, any mutation) are written once, here.
protocol CountedCollection: ObservableObject, PathCollection where Message: CountedChange {
    /// The number of elements, read while the messenger's lock is held.
    var countWhileLocked: Int { get }
    /// The number of elements now.
    var count: Int { get }
    /// The counts before and after `change`. (A requirement of the collection, not of the
    /// change: code generic over the collection reads them without looking up the change
    /// type's conformance on every message.)
    static func counts(of change: Message) -> (old: Int, new: Int)
}

extension CountedCollection {
    /// Observes the collection's changes and reads the count it starts from, in one step.
    func connectReadingCount(
        receiver: Receiver?, group: ObjectIdentifier?, site: DeclarationSite,
        receive: @escaping (Message, AnyAuthor) -> Void
    ) -> (ConnectionBase, Int) {
        var count = 0
        let connection = messenger.core.connect(
            receiver: receiver, site: site, groupedUnder: group,
            atStart: { count = countWhileLocked }, handler: .messageAndAuthor(receive))
        return (connection, count)
    }

    /// The link of `count`: an update only when the count changes.
    func countLink(
        receiver: Receiver?, group: ObjectIdentifier?, site: DeclarationSite,
        changed: @escaping PathLink.Changed
    ) -> PathLink {
        let (connection, start) = connectReadingCount(
            receiver: receiver, group: group, site: site
        ) { change, author in
            let (oldCount, newCount) = Self.counts(of: change)
            guard newCount != oldCount else { return }
            changed(newCount, nil, author)
        }
        return CollectionPartLink(
            self, connection: connection, start: (start, nil),
            current: { [weak self] in (self?.count, nil) })
    }

    /// The link of `*` as the last component: every change message is an update (the value
    /// is the change; at first, a change that changes nothing).
    func mutationLink(
        receiver: Receiver?, group: ObjectIdentifier?, site: DeclarationSite,
        changed: @escaping PathLink.Changed
    ) -> PathLink {
        let (connection, start) = connectReadingCount(
            receiver: receiver, group: group, site: site
        ) { change, author in
            changed((), BranchChange(value: change), author)
        }
        return CollectionPartLink(
            self, connection: connection, start: (Message.none(count: start), nil),
            current: { [weak self] in (self.map { Message.none(count: $0.count) }, nil) })
    }
}

/// The link to one part of a collection. It holds the collection weakly.
final class CollectionPartLink: PathLink {
    private weak var collection: AnyObject?
    private let connection: ConnectionBase
    /// Until the wiring takes it (touched only by the attaching thread).
    @exclusivity(unchecked) private var started: (value: Any?, next: AnyObject?)?
    private let current: () -> (value: Any?, next: AnyObject?)
    private let writer: ((Any, AnyAuthor) -> Bool)?
    private let ended: () -> Void
    private let lock = Lock()
    /// Whether the part is gone for good (an object-following element that left): the link
    /// then observes nothing, and that is not an observation that ended.
    @exclusivity(unchecked) private var isFinished = false
    @exclusivity(unchecked) private var isEnded = false
    /// Whether the part is lost when its observation is ended from the collection's side (an
    /// object-following element, whose position only the observation knew).
    private let isLostWhenUnobserved: Bool

    init(
        _ collection: AnyObject, connection: ConnectionBase,
        start: (value: Any?, next: AnyObject?),
        current: @escaping () -> (value: Any?, next: AnyObject?),
        write: ((Any, AnyAuthor) -> Bool)? = nil, ended: @escaping () -> Void = {},
        lostWhenUnobserved: Bool = false
    ) {
        self.collection = collection
        self.connection = connection
        started = start
        self.current = current
        writer = write
        self.ended = ended
        isLostWhenUnobserved = lostWhenUnobserved
    }

    override func takeStart() -> (value: Any?, next: AnyObject?) {
        defer { started = nil }
        return started ?? current()
    }
    override func read() -> Any? { current().value }
    override func next() -> AnyObject? { current().next }
    override var isObserving: Bool { lock.withLock { isFinished } || connection.isActive }
    /// A part gone for good (an object-following element that left) can never change again.
    override var observesNothing: Bool { lock.withLock { isFinished } }
    /// The collection: a path that observes the same part of it again ends at the same
    /// property (it tells no binding). Not for a part that only its observation could follow
    /// (an object-following element): attached again, it is another one.
    override var identity: ObjectIdentifier? {
        isLostWhenUnobserved ? nil : collection.map(ObjectIdentifier.init)
    }
    override var isAlive: Bool {
        guard collection != nil else { return false }
        // Ended from the collection's side (it stopped being observed): a part that only the
        // observation could follow is gone; observed again, it would be another one.
        return !isLostWhenUnobserved || connection.isActive || lock.withLock { isFinished }
    }

    override func end() {
        connection.end()
        // Once, however often the link is ended (its `ended` may count observations).
        let first = lock.withLock { () -> Bool in
            defer { isEnded = true }
            return !isEnded
        }
        if first { ended() }
    }

    override func write(_ value: Any, as author: AnyAuthor) -> Bool {
        writer?(value, author) ?? false
    }

    /// The part is gone for good: end the observation, which is not one that ended from the
    /// observed side.
    func finish() {
        lock.withLock { isFinished = true }
        end()
    }
}

extension PathComponent {
    /// A component that observes one part of the collection it is attached to.
    @usableFromInline
    init(part: CollectionPart, named name: String) {
        nameBox = ComponentName(name)
        isOwnedByReceiver = true
        attach = { object, receiver, group, site, leadsOn, changed throws(PathError) in
            guard let collection = object as? any PathCollection else {
                throw .notACollection(
                    name, type: String(describing: type(of: object)), path: name)
            }
            return try collection.attachPart(
                part, receiver: receiver, group: group, site: site, leadsOn: leadsOn,
                changed: changed, path: name)
        }
    }

    /// The component of a string path's `*` in the middle: on a collection, every element
    /// (``PathCollection/attachEachElement(following:receiver:site:changed:)``); on any other
    /// object, every observable property.
    init(fanningOutAnything rest: [PathComponent]) {
        nameBox = ComponentName("*")
        isOwnedByReceiver = true
        let everyProperty = PathComponent(fanOut: PathComponent.everyPropertyBranches, rest: rest)
        attach = { object, receiver, group, site, leadsOn, changed throws(PathError) in
            if let collection = object as? any PathCollection {
                return collection.attachEachElement(
                    following: rest, receiver: receiver, site: site, changed: changed)
            }
            return try everyProperty.attach(object, receiver, group, site, leadsOn, changed)
        }
    }

    /// The fan-out over the elements of the collection it is attached to.
    init(eachElementFollowing rest: [PathComponent]) {
        nameBox = ComponentName("*")
        isOwnedByReceiver = true
        attach = { object, receiver, _, site, _, changed throws(PathError) in
            guard let collection = object as? any PathCollection else {
                throw .notACollection("*", type: String(describing: type(of: object)), path: "*")
            }
            return collection.attachEachElement(
                following: rest, receiver: receiver, site: site, changed: changed)
        }
    }
}
