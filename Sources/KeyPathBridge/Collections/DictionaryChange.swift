/// What happened to one key of an ``ObservableDictionary``.
public enum KeyChange<Value> {
    /// The key was added, with this value.
    case inserted(Value)
    /// The key's value changed from `old` to `new`.
    case updated(old: Value, new: Value)
    /// The key was removed; it had this value.
    case removed(Value)

    /// The value before the change; nil if the key was absent.
    public var oldValue: Value? {
        switch self {
        case .inserted: nil
        case .updated(let old, _), .removed(let old): old
        }
    }

    /// The value after the change; nil if the key is absent now.
    public var newValue: Value? {
        switch self {
        case .removed: nil
        case .inserted(let new), .updated(_, let new): new
        }
    }

    /// The change from `old` to `new` (nil: absent), or nil if both are absent.
    @inlinable
    init?(from old: Value?, to new: Value?) {
        switch (old, new) {
        case (nil, nil): return nil
        case (nil, let new?): self = .inserted(new)
        case (let old?, nil): self = .removed(old)
        case (let old?, let new?): self = .updated(old: old, new: new)
        }
    }
}

extension KeyChange: Equatable where Value: Equatable {}
extension KeyChange: Hashable where Value: Hashable {}
extension KeyChange: Sendable where Value: Sendable {}

/// The message of an ``ObservableDictionary``: what one mutation, or one batch of mutations, did
/// to each key it changed.
///
/// ```swift
/// observer.observe(settings) { change in
///     for (key, keyChange) in change.keys {
///         print(key, keyChange.oldValue ?? "-", "→", keyChange.newValue ?? "-")
///     }
/// }
/// ```
public struct DictionaryChange<Key: Hashable, Value> {
    /// Each key the change touched, with what happened to it (a key set to a value that is the
    /// same, by `==` or `===`, is not here).
    public let keys: [Key: KeyChange<Value>]
    /// The number of entries before the change.
    public let oldCount: Int
    /// The dictionary's version after the change (its mutations are counted), for the
    /// observations of single keys to drop a change made before they started.
    @usableFromInline var version: UInt64 = 0
    /// The messengers of the observed keys the change touched (see
    /// ObservableDictionary+Paths.swift), found as the dictionary mutates, for its dispatcher
    /// to pass the change on to; and that dictionary's mark (an object of its own, not its
    /// address, which another dictionary may have once it is gone). (Messengers are
    /// thread-safe objects: `nonisolated(unsafe)` only because they are held as `AnyObject`,
    /// so that the dispatcher needs no generic metadata to reach them.)
    @usableFromInline nonisolated(unsafe) var watchers: [AnyObject] = []
    @usableFromInline var origin: ChangeOrigin?

    /// The number of entries after the change.
    public let newCount: Int

    @inlinable
    init(keys: [Key: KeyChange<Value>], oldCount: Int, version: UInt64 = 0) {
        self.keys = keys
        self.oldCount = oldCount
        self.version = version
        newCount = keys.values.reduce(oldCount) { count, change in
            switch change {
            case .inserted: count + 1
            case .removed: count - 1
            case .updated: count
            }
        }
    }

    /// Applies the change to `contents` (the contents before it).
    public func apply(to contents: inout [Key: Value]) {
        for (key, change) in keys { contents[key] = change.newValue }
    }
}

extension DictionaryChange: Equatable where Value: Equatable {
    /// Two changes are equal when their keys and old counts are.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.keys == rhs.keys && lhs.oldCount == rhs.oldCount
    }
}
extension DictionaryChange: Sendable where Key: Sendable, Value: Sendable {}

extension DictionaryChange: CountedChange {
    static func none(count: Int) -> Self { DictionaryChange(keys: [:], oldCount: count) }
}

/// The mark of the collection a change came from (compared by identity).
@usableFromInline
final class ChangeOrigin: Sendable {
    @usableFromInline init() {}
}
