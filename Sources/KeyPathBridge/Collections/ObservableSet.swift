import Transforms

/// The message of an ``ObservableSet``: the members one mutation, or one batch, inserted and
/// removed (each a real change: a member already there is not inserted again).
public struct SetChange<Element: Hashable> {
    /// The members that were not there before and are now.
    public let inserted: Set<Element>
    /// The members that were there before and are not now.
    public let removed: Set<Element>
    /// The number of members before the change.
    public let oldCount: Int

    /// The number of members after the change.
    public let newCount: Int

    init(inserted: Set<Element>, removed: Set<Element>, oldCount: Int) {
        self.inserted = inserted
        self.removed = removed
        self.oldCount = oldCount
        newCount = oldCount + inserted.count - removed.count
    }

    /// Applies the change to `contents` (the contents before it).
    public func apply(to contents: inout Set<Element>) {
        contents.subtract(removed)
        contents.formUnion(inserted)
    }
}

extension SetChange: Equatable {}
extension SetChange: Sendable where Element: Sendable {}

extension SetChange: CountedChange {
    static func none(count: Int) -> Self { SetChange(inserted: [], removed: [], oldCount: count) }
}

/// An observable set: `SetAlgebra` on a class that sends one ``SetChange`` per mutation, with the
/// members it really inserted and removed.
///
/// ```swift
/// let tags: ObservableSet = ["swift"]
/// observer.observe(tags) { change in print(change.inserted, change.removed) }
/// tags.insert("linux")         // inserted: ["linux"]
/// tags.insert("swift")         // already there: nothing
/// tags.formUnion(["a", "b"])   // one message
/// let plain: Set<String> = tags.elements   // O(1): a copy-on-write snapshot
/// ```
///
/// A class, to have an identity to observe and to put in a path (`tags.swift`: whether a member
/// is there; `count`; `*`), and to be a `let` property. A set made from another
/// (`union(_:)`, …) is a new set, without the other's observations. It iterates over a snapshot,
/// is `Codable` as a plain array and `Hashable` by contents.
///
/// Thread-safe: any method from any thread; messages arrive in the order the mutations
/// happened. `Element`'s `==` and `hash(into:)` run while the set is locked, so they must not
/// touch the set.
public final class ObservableSet<Element: Hashable>: Messenger<SetChange<Element>> {
    // Guarded by the core's lock, with the messenger state.
    @exclusivity(unchecked) var storage: Set<Element>
    /// What the set reports to Swift's Observation (see ``tracked``).
    let observation = ObservationReport()
    @exclusivity(unchecked) private var version: UInt64 = 0

    /// An empty set.
    public override init() {
        storage = []
        super.init()
    }

    /// A set of `elements`.
    public init<Elements: Sequence<Element>>(_ elements: Elements) {
        storage = Set(elements)
        super.init()
    }

    /// The contents, read so that Swift's Observation sees the read: inside
    /// `withObservationTracking` (and so in a SwiftUI view's body), the tracking's `onChange`
    /// runs after the next mutation that changes something.
    ///
    /// ```swift
    /// let selected = model.selection.tracked
    /// ```
    ///
    /// Only reads through `tracked` are reported (see Docs/Apps.md, "SwiftUI and Observation").
    public var tracked: Set<Element> {
        // Reported first: a change after the contents are read then finds the handle made.
        observation.reportRead()
        return elements
    }

    /// The contents as a plain set, in O(1) (a copy-on-write snapshot).
    public var elements: Set<Element> {
        DependencyTracking.recordRead(of: core)
        return core.lock.withLock { storage }
    }

    /// The number of members now.
    public var count: Int {
        DependencyTracking.recordRead(of: core)
        return core.lock.withLock { storage.count }
    }

    /// Whether the set is empty now.
    public var isEmpty: Bool { count == 0 }

    /// Whether `member` is in the set now.
    public func contains(_ member: Element) -> Bool {
        DependencyTracking.recordRead(of: core)
        return core.lock.withLock { storage.contains(member) }
    }

    /// Edits the set in one step that sends one message, authored by `author` (by default, the
    /// set): the members inserted and removed between the contents before and after `body`.
    ///
    /// ```swift
    /// tags.mutate(as: editor) { tags in
    ///     tags.remove("draft")
    ///     tags.insert("published")
    /// }
    /// ```
    ///
    /// As for ``ObservableArray/mutate(as:_:)``: `body` runs without any lock held, on a copy
    /// (so a batch costs O(n)); if another mutation happens meanwhile, it runs again on the new
    /// contents (keep it free of other side effects, and edit its argument, not the set).
    @discardableResult
    public func mutate<Result>(
        as author: AnyAuthor? = nil, _ body: (inout Set<Element>) throws -> Result
    ) rethrows -> Result {
        CollectionBatching.checkNotBatching(self)
        while true {
            let (contents, startVersion) = core.lock.withLock { (storage, version) }
            var batch = contents
            let result = try CollectionBatching.running(self) { try body(&batch) }
            var committed = false
            core.send(from: author ?? self, reportingTo: observation) { () -> SetChange<Element>? in
                guard version == startVersion else { return nil }
                committed = true
                return commit(batch)
            }
            if committed { return result }
        }
    }

    /// Under the lock: makes `new` the contents; the change, or nil if there is none. A member
    /// replaced by an equal object that is another object (`update(with:)`) is removed and
    /// inserted: paths follow the object that is a member.
    private func commit(_ new: Set<Element>) -> SetChange<Element>? {
        var inserted = new.subtracting(storage)
        var removed = storage.subtracting(new)
        if Self.membersAreObjects {
            for member in new where !inserted.contains(member) {
                guard let index = storage.firstIndex(of: member) else { continue }
                let old = storage[index]
                if (old as AnyObject) !== (member as AnyObject) {
                    removed.insert(old)
                    inserted.insert(member)
                }
            }
        }
        let oldCount = storage.count
        // Kept even without a change: an equal value that replaced one (`update(with:)`).
        storage = new
        version &+= 1
        guard !inserted.isEmpty || !removed.isEmpty else { return nil }
        return SetChange(inserted: inserted, removed: removed, oldCount: oldCount)
    }

    /// Whether members are objects, which an equal object can replace.
    private static var membersAreObjects: Bool { Element.self is AnyObject.Type }

    /// Inserts and removes members in one step and one message (O(k) for k members); the
    /// members that left are those that were there (not the equal ones passed).
    @discardableResult
    private func edit(inserting: [Element] = [], removing: [Element] = []) -> SetChange<Element>? {
        CollectionBatching.checkNotBatching(self)
        var sent: SetChange<Element>?
        core.send(from: self, reportingTo: observation) { () -> SetChange<Element>? in
            var inserted: Set<Element> = []
            var removed: Set<Element> = []
            for member in removing {
                if let left = storage.remove(member) { removed.insert(left) }
            }
            for member in inserting where storage.insert(member).inserted {
                if removed.remove(member) == nil { inserted.insert(member) }
            }
            guard !inserted.isEmpty || !removed.isEmpty else { return nil }
            let oldCount = storage.count - inserted.count + removed.count
            version &+= 1
            sent = SetChange(inserted: inserted, removed: removed, oldCount: oldCount)
            return sent
        }
        return sent
    }
}

extension ObservableSet: SetAlgebra {
    /// Inserts `member` if it is not there: a message only then.
    @discardableResult
    public func insert(_ member: Element) -> (inserted: Bool, memberAfterInsert: Element) {
        guard edit(inserting: [member]) != nil else {
            let existing =
                core.lock.withLock { storage.firstIndex(of: member).map { storage[$0] } } ?? member
            return (false, existing)
        }
        return (true, member)
    }

    /// Removes `member` and returns the member that was there (equal to it), or nil if there
    /// was none (then nothing is sent).
    @discardableResult
    public func remove(_ member: Element) -> Element? {
        edit(removing: [member])?.removed.first
    }

    /// Inserts `member`, replacing an equal one; returns the one replaced, if any. Replacing a
    /// member by an equal object that is another object sends its removal and insertion; an
    /// equal value is no change (nothing is sent).
    @discardableResult
    public func update(with member: Element) -> Element? {
        mutate { $0.update(with: member) }
    }

    /// Inserts the members of `other`: one message.
    public func formUnion(_ other: ObservableSet) {
        let members = Array(other.elements)
        _ = edit(inserting: members)
    }

    /// Keeps only the members also in `other`: one message.
    public func formIntersection(_ other: ObservableSet) {
        let kept = other.elements
        mutate { $0.formIntersection(kept) }
    }

    /// Keeps the members in exactly one of the two sets: one message.
    public func formSymmetricDifference(_ other: ObservableSet) {
        let members = other.elements
        mutate { $0.formSymmetricDifference(members) }
    }

    /// Removes the members of `other`: one message.
    public func subtract(_ other: ObservableSet) {
        _ = edit(removing: Array(other.elements))
    }

    /// A new set with the members of both (without observations).
    public func union(_ other: ObservableSet) -> ObservableSet {
        ObservableSet(elements.union(other.elements))
    }

    /// A new set with the members in both.
    public func intersection(_ other: ObservableSet) -> ObservableSet {
        ObservableSet(elements.intersection(other.elements))
    }

    /// A new set with the members in exactly one of the two.
    public func symmetricDifference(_ other: ObservableSet) -> ObservableSet {
        ObservableSet(elements.symmetricDifference(other.elements))
    }

    /// Two sets are equal when their contents are.
    public static func == (lhs: ObservableSet, rhs: ObservableSet) -> Bool {
        lhs === rhs || lhs.elements == rhs.elements
    }

    /// A set of the literal's members.
    public convenience init(arrayLiteral elements: Element...) {
        self.init(elements)
    }
}

extension ObservableSet {
    /// Inserts the members of `other`: one message.
    public func formUnion<Other: Sequence<Element>>(_ other: Other) {
        _ = edit(inserting: Array(other))
    }

    /// Removes the members of `other`: one message.
    public func subtract<Other: Sequence<Element>>(_ other: Other) {
        _ = edit(removing: Array(other))
    }

    /// Removes every member: one message.
    public func removeAll() {
        mutate { $0.removeAll() }
    }

    /// Removes the members that satisfy `shouldBeRemoved`: one message.
    public func removeAll(where shouldBeRemoved: (Element) throws -> Bool) rethrows {
        try mutate { set in set = try set.filter { try !shouldBeRemoved($0) } }
    }
}

extension ObservableSet: Sequence {
    /// Iterates over the members as they are when iteration starts.
    public func makeIterator() -> Set<Element>.Iterator {
        elements.makeIterator()
    }
}

extension ObservableSet: Hashable {
    /// Hashes the contents.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(elements)
    }
}

extension ObservableSet: Encodable where Element: Encodable {
    /// Encodes the members as a plain array.
    public func encode(to encoder: any Encoder) throws {
        // Through a single-value container, as the plain collection in a property is: an
        // encoder's key strategies treat it the same way.
        var container = encoder.singleValueContainer()
        try container.encode(elements)
    }
}

extension ObservableSet: Decodable where Element: Decodable {
    /// Decodes a plain array.
    public convenience init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(Set<Element>.self))
    }
}

extension ObservableSet: CustomStringConvertible {
    /// The contents' description.
    public var description: String { elements.description }
}

// The contents and the messenger state are protected by the core's lock.
extension ObservableSet: @unchecked Sendable where Element: Sendable {}
