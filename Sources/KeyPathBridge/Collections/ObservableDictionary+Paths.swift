import Transforms

// An `ObservableDictionary`'s parts as path components (EBN's rules): a key (`words.steampunk`,
// which may be absent), `count`, any mutation (`*` last) and every value (`*` in the middle).

extension ObservableDictionary: CountedCollection {
    var countWhileLocked: Int { storage.count }

    static func counts(of change: DictionaryChange<Key, Value>) -> (old: Int, new: Int) {
        (change.oldCount, change.newCount)
    }

    func attachPart(
        _ part: CollectionPart, receiver: Receiver?, group: ObjectIdentifier?,
        site: DeclarationSite, leadsOn: Bool, changed: @escaping PathLink.Changed, path: String
    ) throws(PathError) -> PathLink {
        switch part {
        case .count:
            try checkGoesOn(leadsOn, from: "count", valueType: "Int", path: path)
            return countLink(receiver: receiver, group: group, site: site, changed: changed)
        case .key(let name):
            let key = try key(name, as: Key.self, on: Self.self, path: path)
            try checkGoesOn(leadsOn, from: name, value: self[key], path: path)
            return keyLink(
                key, receiver: receiver, group: group, site: site, leadsOn: leadsOn,
                changed: changed)
        case .objectFollowing(let index):  // a key that is a number
            let key = try key(String(index), as: Key.self, on: Self.self, path: path)
            try checkGoesOn(leadsOn, from: String(index), value: self[key], path: path)
            return keyLink(
                key, receiver: receiver, group: group, site: site, leadsOn: leadsOn,
                changed: changed)
        case .anyMutation:
            return mutationLink(receiver: receiver, group: group, site: site, changed: changed)
        case .indexFollowing(let index):
            throw .unknownProperty(
                "#\(index)", type: String(describing: Self.self), path: path,
                known: ["count", "*", "a key"])
        }
    }

    /// The link of one key: its value, or unreachable while the key is absent. It fires when
    /// the key is added, when its value changes, and when it is removed (only if it was there).
    ///
    /// A key's observations are on a messenger of their own (a ``KeyWatcher``), which one
    /// observation of the dictionary (the dispatcher) feeds with the changes of that key only:
    /// a mutation reaches the observers of the keys it changed, not every key's. The watcher is
    /// dropped with its last observation, so an absent key's observation that stops leaves
    /// nothing behind.
    func keyLink(
        _ key: Key, receiver: Receiver?, group: ObjectIdentifier?, site: DeclarationSite,
        leadsOn: Bool, changed: @escaping PathLink.Changed
    ) -> PathLink {
        let shape = ObjectShape(Value.self)
        let watcher = watch(key, site: site)
        let started = StartedVersion()
        let connection = watcher.core.connect(
            receiver: receiver, site: site, groupedUnder: group,
            handler: .messageAndAuthor { change, author in
                // A change the starting value already has (delivered late) is dropped.
                guard started.isAfterStart(change.version), let keyChange = change.keys[key]
                else { return }
                let new = keyChange.newValue
                changed(new, leadsOn ? new.flatMap { shape.object(in: $0) } : nil, author)
            })
        // Read after the observation exists, with the version it is the value of: every later
        // change reaches the watcher (the dispatcher runs while the key is watched).
        let start = core.lock.withLock { () -> Value? in
            started.start(at: version)
            return storage[key]
        }
        return CollectionPartLink(
            self, connection: connection,
            start: (start, leadsOn ? start.flatMap { shape.object(in: $0) } : nil),
            current: { [weak self] in
                let value = self?[key]
                return (value, value.flatMap { shape.object(in: $0) })
            },
            write: { [weak self] value, author in
                guard let self, let value = value as? Value else { return false }
                setValue(value, forKey: key, as: author)
                return true
            },
            ended: { [weak self, weak watcher] in
                guard let watcher else { return }
                self?.unwatch(key, watcher)
            })
    }

    /// The watcher of `key`, made if needed, with one more observation; the dispatcher runs
    /// from now on.
    private func watch(_ key: Key, site: DeclarationSite) -> KeyWatcher {
        let watcher = core.lock.withLock { () -> KeyWatcher in
            let watcher = keyWatchers[key] ?? KeyWatcher()
            keyWatchers[key] = watcher
            watcher.observations += 1
            return watcher
        }
        startDispatcherIfNeeded()
        return watcher
    }

    /// Starts the dispatcher if a key is watched and it does not run: at the first watcher,
    /// and again when the dictionary stopped being observed (`stopBeingObserved()` ends the
    /// dispatcher's observation too; the keys' observations, on their own messengers, go on,
    /// and they see the changes made from then on, as a path that observes a property again
    /// does).
    ///
    /// A dictionary that refuses observers (its observation-state handler stops them, so the
    /// dispatcher ends while it starts) is not observed again and again: its keys see nothing
    /// until another key observation starts.
    fileprivate func startDispatcherIfNeeded() {
        let receiver = core.lock.withLock { () -> Receiver? in
            guard !keyWatchers.isEmpty, dispatcher?.isActive != true, !isStartingDispatcher
            else { return nil }
            isStartingDispatcher = true
            if let receiver = dispatchReceiver { return receiver }
            let restart = WeakDispatching(self)
            let made = Receiver { restart.collection?.startDispatcherIfNeeded() }
            dispatchReceiver = made
            return made
        }
        guard let receiver else { return }
        let made = core.connect(receiver: receiver, site: Self.dispatcherSite) {
            [weak self] change, author in
            self?.dispatch(change, from: author)
        }
        let extra = core.lock.withLock { () -> ConnectionBase? in
            isStartingDispatcher = false
            guard dispatcher?.isActive != true, !keyWatchers.isEmpty else { return made }
            dispatcher = made
            return nil
        }
        extra?.end()
    }

    /// One observation of `key` ended: the watcher goes with its last, and the dispatcher with
    /// the last watcher.
    private func unwatch(_ key: Key, _ watcher: KeyWatcher) {
        let ended = core.lock.withLock { () -> ConnectionBase? in
            watcher.observations -= 1
            guard watcher.observations == 0, keyWatchers[key] === watcher else { return nil }
            keyWatchers[key] = nil
            guard keyWatchers.isEmpty else { return nil }
            defer { dispatcher = nil }
            return dispatcher
        }
        ended?.end()
    }

    /// The sites of the dictionary's observations, without its dispatcher (Herald's own), and
    /// of its keys' observations.
    var observationSitesOfParts: [DeclarationSite] {
        let watchers = core.lock.withLock { Array(keyWatchers.values) }
        return observationSites.filter { $0 != Self.dispatcherSite }
            + watchers.flatMap(\.core.observationSites)
    }

    /// The declaration site of the dispatcher's observation.
    private static var dispatcherSite: DeclarationSite {
        DeclarationSite(fileID: #fileID, line: 0)
    }

    /// Passes a change on to the watchers of the keys it changed, found as the dictionary
    /// mutated (one change at a time, in order: the dictionary's deliveries are serial). A
    /// watcher made since then belongs to observations that started after the change; one
    /// dropped since then has no observers left.
    /// Only this dictionary's own changes, each once: a change sent through the messenger's
    /// public `send` (another dictionary's, or an old one again) reaches no key.
    private func dispatch(_ change: DictionaryChange<Key, Value>, from author: AnyAuthor) {
        guard change.origin === changeOrigin, change.version > dispatchedVersion else { return }
        dispatchedVersion = change.version
        for watcher in change.watchers {
            unsafeDowncast(watcher, to: MessengerCore<DictionaryChange<Key, Value>>.self)
                .send(change, from: author)
        }
    }

    func attachEachElement(
        following rest: [PathComponent], receiver: Receiver?, site: DeclarationSite,
        changed: @escaping PathLink.Changed
    ) -> PathLink {
        EachElementLink<Value>(self, following: rest, site: site, changed: changed) { onChange in
            var contents: [Value] = []
            let connection = core.connect(
                receiver: receiver, site: site, atStart: { contents = Array(storage.values) },
                handler: .messageAndAuthor { change, author in
                    let keys = change.keys.values
                    // Closures, not key paths: a generic key path is looked up per call.
                    onChange(
                        keys.compactMap { $0.newValue }, keys.compactMap { $0.oldValue }, author)
                })
            return (connection, contents)
        }
    }
}

/// A collection whose dispatcher (the one observation that feeds its parts' messengers) can
/// be started again.
private protocol Dispatching: AnyObject {
    func startDispatcherIfNeeded()
}

extension ObservableDictionary: Dispatching {}

/// A collection held weakly, for its dispatcher's receiver to start it again (not generic: a
/// `Sendable` closure captures it).
private final class WeakDispatching: @unchecked Sendable {
    weak var collection: (any Dispatching)?

    init(_ collection: any Dispatching) {
        self.collection = collection
    }
}

extension ObservableDictionary {
    /// The messenger of one observed key's observations (guarded by the dictionary's lock).
    @usableFromInline
    final class KeyWatcher: @unchecked Sendable {
        @usableFromInline let core = MessengerCore<DictionaryChange<Key, Value>>()
        @exclusivity(unchecked) var observations = 0
    }
}

/// The version of the dictionary a key's observation started from: the changes it receives
/// that are not later are already in its starting value.
final class StartedVersion: @unchecked Sendable {
    private let lock = Lock()
    @exclusivity(unchecked) private var version: UInt64?

    /// Records the version the observation started from (under the dictionary's lock).
    func start(at version: UInt64) {
        lock.withLock { self.version = version }
    }

    /// Whether a change that made `version` came after the start (before the start is read,
    /// any change delivered is one the start will have).
    func isAfterStart(_ version: UInt64) -> Bool {
        lock.withLock { self.version.map { version > $0 } ?? false }
    }
}

extension PathComponent {
    /// The component of one key of the dictionary it is attached to (typed paths).
    @usableFromInline
    init<Key: Hashable, Value>(key: Key, of _: ObservableDictionary<Key, Value>.Type) {
        nameBox = ComponentName("\(key)")
        isOwnedByReceiver = true
        attach = { object, receiver, group, site, leadsOn, changed in
            // The typed `PropertyPath` only ever passes such a dictionary here.
            unsafeDowncast(object, to: ObservableDictionary<Key, Value>.self).keyLink(
                key, receiver: receiver, group: group, site: site, leadsOn: leadsOn,
                changed: changed)
        }
    }
}

// Typed paths into observable dictionaries.
extension PropertyPath {
    /// A path to a dictionary that a `let` property of `Root` holds.
    public init<Key, Element>(_ dictionary: KeyPath<Root, ObservableDictionary<Key, Element>>)
    where Value == ObservableDictionary<Key, Element> {
        self.init(components: [PathComponent(constant: dictionary)])
    }

    /// This path extended by the value for `key` (EBN's `words.steampunk`), unreachable while
    /// the key is absent: it changes when the key is added, when its value changes, and when
    /// it is removed. A binding can write it (adding the key).
    ///
    /// ```swift
    /// observer.observe(model, PropertyPath(\Model.settings).appendingValue(forKey: "theme")) {
    ///     theme in
    /// }
    /// ```
    @inlinable
    public func appendingValue<Key, Element>(forKey key: Key) -> PropertyPath<Root, Element>
    where Value == ObservableDictionary<Key, Element> {
        PropertyPath<Root, Element>(
            components: components + [
                PathComponent(key: key, of: ObservableDictionary<Key, Element>.self)
                    .endingDirectly(TypedHandlers<Element>())
            ])
    }

    /// This path extended by the dictionary's count: an update only when the count changes.
    @inlinable
    public func appendingCount<Key, Element>() -> PropertyPath<Root, Int>
    where Value == ObservableDictionary<Key, Element> {
        PropertyPath<Root, Int>(
            components: components + [
                PathComponent(part: .count, named: "count").endingDirectly(TypedHandlers<Int>())
            ])
    }

    /// This path extended by any mutation of the dictionary: every change message is an
    /// update whose value is the change (at first, a change without keys).
    public func appendingChanges<Key, Element>() -> PropertyPath<
        Root, DictionaryChange<Key, Element>
    >
    where Value == ObservableDictionary<Key, Element> {
        PropertyPath<Root, DictionaryChange<Key, Element>>(
            components: components + [PathComponent(part: .anyMutation, named: "*")])
    }

    /// This path extended by a fan-out over the dictionary's values (follow it with a property
    /// of the values); the rules are those of ``appendingEachElement()``.
    public func appendingEachValue<Key, Element: AnyObject>() -> PropertyPath<Root, Element>
    where Value == ObservableDictionary<Key, Element> {
        PropertyPath<Root, Element>(
            components: components + [
                PathComponent(fanningOut: { PathComponent(eachElementFollowing: $0) })
            ])
    }
}
