import Transforms

/// An observable dictionary: the dictionary API on a class that sends one ``DictionaryChange``
/// per mutation, with what happened to each key (inserted, updated from an old value, removed).
///
/// ```swift
/// let settings: ObservableDictionary = ["theme": "dark"]
/// observer.observe(settings) { change in print(change.keys) }
/// settings["font"] = "Menlo"        // ["font": .inserted("Menlo")]
/// settings["theme"] = "dark"        // the same value: nothing
/// settings.mutate { settings in     // one message for many edits
///     settings["theme"] = "light"
///     settings.removeValue(forKey: "font")
/// }
/// let plain: [String: String] = settings.elements   // O(1): a copy-on-write snapshot
/// ```
///
/// A class, so that it has an identity to observe and to put in a path (`settings.theme`, typed
/// `appendingValue(forKey:)`, observable even while the key is absent), and so that it can be a
/// `let` property. A value set to one that is the same (`==` for `Equatable` values, `===` for
/// objects) is no change and sends nothing. It iterates over a snapshot of its entries, is
/// `ExpressibleByDictionaryLiteral`, `Codable` as the plain dictionary, and `Equatable` and
/// `Hashable` (by contents) where its values are.
///
/// Thread-safe: any method from any thread; messages arrive in the order the mutations
/// happened. `Value`'s `==` is called while the dictionary is locked, so it must not touch the
/// dictionary.
public final class ObservableDictionary<Key: Hashable, Value>: Messenger<
    DictionaryChange<Key, Value>
>
{
    // Guarded by the core's lock, with the messenger state: a mutation and the acceptance of
    // its message are one atomic step.
    @usableFromInline @exclusivity(unchecked) var storage: [Key: Value]
    /// What it reports to Swift's Observation (see ``tracked``).
    @usableFromInline let observation = ObservationReport()
    /// Counts the mutations, so that a batch commits only onto the contents it was made from.
    @usableFromInline @exclusivity(unchecked) var version: UInt64 = 0
    /// The keys that paths observe, each with the messenger its observations are on (see
    /// ObservableDictionary+Paths.swift).
    @usableFromInline @exclusivity(unchecked) var keyWatchers: [Key: KeyWatcher] = [:]
    /// The one observation of the dictionary that passes each key's changes on to that key's
    /// watcher, while any key is watched.
    @exclusivity(unchecked) var dispatcher: ConnectionBase?
    /// Owns the dispatcher's observation, to start it again when it is ended from the
    /// dictionary's side (made with the first dispatcher).
    @exclusivity(unchecked) var dispatchReceiver: Receiver?
    /// Whether the dispatcher is being started (its observation ending meanwhile is a refusal).
    @exclusivity(unchecked) var isStartingDispatcher = false
    /// The mark of this dictionary's changes, for its dispatcher to pass on only its own.
    @usableFromInline let changeOrigin = ChangeOrigin()
    /// The version of the last change the dispatcher passed on (touched only by it: the
    /// dictionary's deliveries are serial).
    @exclusivity(unchecked) var dispatchedVersion: UInt64 = 0
    @usableFromInline let changeRule: ChangeRule<Value>

    /// An empty dictionary.
    public override init() {
        storage = [:]
        changeRule = ChangeRule()
        super.init()
    }

    /// A dictionary of `elements`.
    public init(_ elements: [Key: Value]) {
        storage = elements
        changeRule = ChangeRule()
        super.init()
    }

    deinit {
        // The observations of single keys end with the dictionary, as its own do.
        for watcher in keyWatchers.values { watcher.core.disconnectAll() }
    }

    /// The contents, read so that Swift's Observation sees the read: inside
    /// `withObservationTracking` (and so in a SwiftUI view's body), the tracking's `onChange`
    /// runs after the next mutation that changes something.
    ///
    /// ```swift
    /// ForEach(model.items.tracked, id: \.self) { Text($0) }
    /// ```
    ///
    /// Only reads through `tracked` are reported (see Docs/Apps.md, "SwiftUI and Observation").
    public var tracked: [Key: Value] {
        // Reported first: a change after the contents are read then finds the handle made.
        observation.reportRead()
        return elements
    }

    /// The contents as a plain dictionary, in O(1) (a copy-on-write snapshot).
    public var elements: [Key: Value] {
        DependencyTracking.recordRead(of: core)
        return core.lock.withLock { storage }
    }

    /// The number of entries now.
    public var count: Int {
        DependencyTracking.recordRead(of: core)
        return core.lock.withLock { storage.count }
    }

    /// Whether the dictionary is empty now.
    public var isEmpty: Bool { count == 0 }

    /// The keys now (a snapshot).
    public var keys: Dictionary<Key, Value>.Keys { elements.keys }

    /// The values now (a snapshot).
    public var values: Dictionary<Key, Value>.Values { elements.values }

    /// The value for `key`, or nil; setting nil removes the key. Setting sends a change (none
    /// if the value is the same).
    @inlinable
    public subscript(key: Key) -> Value? {
        get {
            DependencyTracking.recordRead(of: core)
            return core.lock.withLock { storage[key] }
        }
        set { setValue(newValue, forKey: key, as: self) }
    }

    /// The value for `key`, or `defaultValue` if it is absent.
    public subscript(key: Key, default defaultValue: @autoclosure () -> Value) -> Value {
        self[key] ?? defaultValue()
    }

    /// Sets the value for `key` and returns the old one, or nil if the key was absent.
    @inlinable @discardableResult
    public func updateValue(_ value: Value, forKey key: Key) -> Value? {
        setValue(value, forKey: key, as: self)
    }

    /// Removes `key` and returns its value, or nil if it was absent (then nothing is sent).
    @inlinable @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        setValue(nil, forKey: key, as: self)
    }

    /// Sets the value for `key` (nil: removed) on behalf of `author` and sends the change
    /// (none if the value is the same); returns the old value. Inlinable, as the methods that
    /// call it: the common mutations are specialized in the caller.
    @inlinable @discardableResult
    func setValue(_ new: Value?, forKey key: Key, as author: AnyAuthor) -> Value? {
        CollectionBatching.checkNotBatching(self)
        var old: Value?
        core.send(from: author, reportingTo: observation) { () -> DictionaryChange<Key, Value>? in
            old = storage[key]
            guard let change = change(from: old, to: new) else { return nil }
            let oldCount = storage.count
            storage[key] = new
            version &+= 1
            var sent = DictionaryChange(keys: [key: change], oldCount: oldCount, version: version)
            if !keyWatchers.isEmpty, let watcher = keyWatchers[key] {
                sent.watchers = [watcher.core]
                sent.origin = changeOrigin
            }
            return sent
        }
        return old
    }

    /// Removes every entry: one message.
    public func removeAll() {
        mutate { $0.removeAll() }
    }

    /// Merges `other` in, with `combine` deciding between an existing value and a new one: one
    /// message.
    public func merge(
        _ other: [Key: Value], uniquingKeysWith combine: (Value, Value) throws -> Value
    ) rethrows {
        try mutate { try $0.merge(other, uniquingKeysWith: combine) }
    }

    /// The change of a key from `old` to `new` (nil: absent), unless they are the same by the
    /// value type's rule.
    @inlinable
    func change(from old: Value?, to new: Value?) -> KeyChange<Value>? {
        if let old, let new, !changeRule.isChange(from: old, to: new) { return nil }
        return KeyChange(from: old, to: new)
    }

    /// The contents of a dictionary being edited in ``ObservableDictionary/mutate(as:_:)``: it
    /// records which keys it touched, so that the batch sends one message with what happened to
    /// each.
    public struct Batch {
        /// The contents as they are now in the batch.
        public private(set) var elements: [Key: Value]
        private(set) var touched: Set<Key> = []

        init(_ elements: [Key: Value]) {
            self.elements = elements
        }

        /// The number of entries now in the batch.
        public var count: Int { elements.count }

        /// The value for `key`, or nil; setting nil removes the key.
        public subscript(key: Key) -> Value? {
            get { elements[key] }
            set {
                touched.insert(key)
                elements[key] = newValue
            }
        }

        /// The value for `key`, or `defaultValue` if it is absent; setting it sets the key.
        public subscript(
            key: Key, default defaultValue: @autoclosure () -> Value
        ) -> Value {
            get { elements[key] ?? defaultValue() }
            set { self[key] = newValue }
        }

        /// Removes the entries that satisfy `shouldBeRemoved`.
        public mutating func removeAll(
            where shouldBeRemoved: ((key: Key, value: Value)) throws -> Bool
        ) rethrows {
            for entry in elements where try shouldBeRemoved(entry) {
                self[entry.key] = nil
            }
        }

        /// Sets the value for `key` and returns the old one.
        @discardableResult
        public mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
            touched.insert(key)
            return elements.updateValue(value, forKey: key)
        }

        /// Removes `key` and returns its value, or nil if it was absent.
        @discardableResult
        public mutating func removeValue(forKey key: Key) -> Value? {
            touched.insert(key)
            return elements.removeValue(forKey: key)
        }

        /// Removes every entry.
        public mutating func removeAll() {
            touched.formUnion(elements.keys)
            elements.removeAll()
        }

        /// Merges `other` in, with `combine` deciding between an existing value and a new one.
        public mutating func merge(
            _ other: [Key: Value], uniquingKeysWith combine: (Value, Value) throws -> Value
        ) rethrows {
            try elements.merge(other, uniquingKeysWith: combine)
            touched.formUnion(other.keys)
        }
    }

    /// Edits the dictionary in one step that sends one message, authored by `author` (by
    /// default, the dictionary).
    ///
    /// ```swift
    /// settings.mutate(as: editor) { settings in
    ///     settings["theme"] = "light"
    ///     settings["font"] = nil
    /// }
    /// ```
    ///
    /// As for ``ObservableArray/mutate(as:_:)``: `body` runs without any lock held, on a copy of
    /// the contents; if another mutation happens meanwhile, it runs again on the new contents
    /// (keep it free of other side effects, and edit its argument, not the dictionary). A key
    /// that ends as it began sends nothing.
    @discardableResult
    public func mutate<Result>(
        as author: AnyAuthor? = nil, _ body: (inout Batch) throws -> Result
    ) rethrows -> Result {
        CollectionBatching.checkNotBatching(self)
        while true {
            let (contents, startVersion) = core.lock.withLock { (storage, version) }
            var batch = Batch(contents)
            let result = try CollectionBatching.running(self) { try body(&batch) }
            var committed = false
            core.send(from: author ?? self, reportingTo: observation) {
                () -> DictionaryChange<Key, Value>? in
                guard version == startVersion else { return nil }
                committed = true
                var keys: [Key: KeyChange<Value>] = [:]
                for key in batch.touched {
                    if let change = change(from: storage[key], to: batch.elements[key]) {
                        keys[key] = change
                    }
                }
                guard !keys.isEmpty else { return nil }
                let oldCount = storage.count
                storage = batch.elements
                version &+= 1
                var sent = DictionaryChange(keys: keys, oldCount: oldCount, version: version)
                sent.watchers = keys.keys.compactMap { keyWatchers[$0]?.core }
                sent.origin = changeOrigin
                return sent
            }
            if committed { return result }
        }
    }
}

extension ObservableDictionary: Sequence {
    /// Iterates over the entries as they are when iteration starts.
    public func makeIterator() -> Dictionary<Key, Value>.Iterator {
        elements.makeIterator()
    }
}

extension ObservableDictionary: ExpressibleByDictionaryLiteral {
    /// A dictionary of the literal's entries (the last value of a repeated key wins).
    public convenience init(dictionaryLiteral entries: (Key, Value)...) {
        self.init(Dictionary(entries, uniquingKeysWith: { _, last in last }))
    }
}

extension ObservableDictionary: Equatable where Value: Equatable {
    /// Two dictionaries are equal when their contents are.
    public static func == (lhs: ObservableDictionary, rhs: ObservableDictionary) -> Bool {
        lhs === rhs || lhs.elements == rhs.elements
    }
}

extension ObservableDictionary: Hashable where Value: Hashable {
    /// Hashes the contents.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(elements)
    }
}

extension ObservableDictionary: Encodable where Key: Encodable, Value: Encodable {
    /// Encodes the contents as a plain dictionary.
    public func encode(to encoder: any Encoder) throws {
        // Through a single-value container, as the plain collection in a property is: an
        // encoder's key strategies treat it the same way.
        var container = encoder.singleValueContainer()
        try container.encode(elements)
    }
}

extension ObservableDictionary: Decodable where Key: Decodable, Value: Decodable {
    /// Decodes a plain dictionary.
    public convenience init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode([Key: Value].self))
    }
}

extension ObservableDictionary: CustomStringConvertible {
    /// The contents' description.
    public var description: String { elements.description }
}

// The contents and the messenger state are protected by the core's lock.
extension ObservableDictionary: @unchecked Sendable where Key: Sendable, Value: Sendable {}
