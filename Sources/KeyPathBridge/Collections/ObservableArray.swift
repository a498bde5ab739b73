import Transforms

/// An observable array: a real Swift collection (random access, mutable, range-replaceable)
/// and an observable object that sends one ``ArrayChange`` per mutation.
///
/// ```swift
/// let todos: ObservableArray = ["Buy milk", "Call Ann"]
/// observer.observe(todos) { change in print(change.edits) }
/// todos.append("Write docs")        // [inserted(["Write docs"], at: 2)]
/// todos.mutate { todos in            // one message for many edits
///     todos.remove(at: 0)
///     todos.sort()
/// }
/// let plain: [String] = todos.elements   // O(1): a copy-on-write snapshot
/// ```
///
/// It is a class, so that it has an identity to observe and to put in a path, and so that it
/// can be a `let` property: every mutating method of `Array` is here as a method you call on a
/// `let` (`append`, `insert`, `remove(at:)`, `removeAll(where:)`, `replaceSubrange`, `sort`,
/// `swapAt`, …), and each sends one message, authored by the array. For an author of your own,
/// or many edits in one message, use ``mutate(as:_:)``.
///
/// A mutation that changes nothing sends nothing: replacing elements with elements that are the
/// same (`==` for `Equatable` elements, `===` for objects) is no change.
///
/// Thread-safe: any method from any thread. Messages are delivered in the order the mutations
/// happened, and each message's indices are relative to the contents just before it. Reading
/// elements one index at a time while another thread mutates the array sees whatever is there
/// then; iterate, or read ``elements``, for one consistent state. `Element`'s `==` is called
/// while the array is locked, so it must not touch the array.
public final class ObservableArray<Element>: Messenger<ArrayChange<Element>> {
    // Guarded by the core's lock, together with the messenger state, so that a mutation and the
    // acceptance of its message are one atomic step.
    @usableFromInline @exclusivity(unchecked) var storage: [Element]
    /// What it reports to Swift's Observation (see ``tracked``).
    @usableFromInline let observation = ObservationReport()
    /// Counts the mutations, so that a batch commits only onto the contents it was made from.
    @usableFromInline @exclusivity(unchecked) var version: UInt64 = 0
    /// The indices that paths follow (`#3`), ascending, and how many links follow each.
    @usableFromInline @exclusivity(unchecked) var followedIndices: [Int] = []
    @exclusivity(unchecked) var followerCounts: [Int] = []
    @usableFromInline let changeRule: ChangeRule<Element>

    /// An empty array.
    public override init() {
        storage = []
        changeRule = ChangeRule()
        super.init()
    }

    /// An array of `elements`.
    public init<Elements: Sequence<Element>>(_ elements: Elements) {
        storage = Array(elements)
        changeRule = ChangeRule()
        super.init()
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
    public var tracked: [Element] {
        // Reported first: a change after the contents are read then finds the handle made.
        observation.reportRead()
        return elements
    }

    /// The contents as a plain array, in O(1) (a copy-on-write snapshot).
    public var elements: [Element] {
        DependencyTracking.recordRead(of: core)
        return core.lock.withLock { storage }
    }

    /// Replaces `range` by `new` and sends the change, authored by `author`; nothing when the
    /// range is empty and `new` too, or when `new` has the same elements. Returns the elements
    /// taken out.
    ///
    /// - Precondition: `range` lies within the array.
    @inlinable @discardableResult
    func replace(_ range: Range<Int>, with new: [Element], as author: AnyAuthor) -> [Element] {
        replace(as: author) { _ in (range, new) }
    }

    /// Replaces the range that `edit` computes from the count, in the same step as reading the
    /// count (an append goes at the end even while other threads append), and sends the change;
    /// returns the elements taken out.
    @inlinable @discardableResult
    func replace(
        as author: AnyAuthor, _ edit: (_ count: Int) -> (range: Range<Int>, new: [Element])
    ) -> [Element] {
        CollectionBatching.checkNotBatching(self)
        var removed: [Element] = []
        core.send(from: author, reportingTo: observation) { () -> ArrayChange<Element>? in
            let (range, new) = edit(storage.count)
            precondition(
                range.lowerBound >= 0 && range.upperBound <= storage.count,
                "ObservableArray: range \(range) out of bounds for \(storage.count) elements")
            guard !range.isEmpty || !new.isEmpty else { return nil }
            let old = Array(storage[range])
            removed = old
            if old.count == new.count, isSame(old, new) { return nil }
            let oldCount = storage.count
            storage.replaceSubrange(range, with: new)
            version &+= 1
            var change = ArrayChange(
                edits: [ArrayEdit(replacing: old, with: new, at: range.lowerBound)],
                oldCount: oldCount)
            if !followedIndices.isEmpty {
                recordFollowedChanges(replacing: range, old: old, oldCount: oldCount, in: &change)
            }
            return change
        }
        return removed
    }

    /// Whether `old` and `new` hold the same elements, by the element type's change rule.
    @inlinable
    func isSame(_ old: [Element], _ new: [Element]) -> Bool {
        zip(old, new).allSatisfy { !changeRule.isChange(from: $0, to: $1) }
    }

    /// Applies `change`, made from the contents at `version`, if the array is still at that
    /// version; false if another mutation came first.
    @usableFromInline
    func commit(
        _ contents: [Element], edits: [ArrayEdit<Element>], moves: [ArrayBatchUpdates.Move] = [],
        ifAt version: UInt64, as author: AnyAuthor
    ) -> Bool {
        var committed = false
        core.send(from: author, reportingTo: observation) { () -> ArrayChange<Element>? in
            guard self.version == version else { return nil }
            committed = true
            guard !edits.isEmpty else { return nil }
            let oldCount = storage.count
            let followed = elementsAtFollowedIndices()
            storage = contents
            self.version &+= 1
            var change = ArrayChange(edits: edits, oldCount: oldCount, moves: moves)
            recordFollowedChanges(from: followed, in: &change)
            return change
        }
        return committed
    }

    /// Under the lock: the followed indices and the element at each (nil past the end), before
    /// a batch's mutation; nil when no index is followed.
    func elementsAtFollowedIndices() -> [Element?]? {
        guard !followedIndices.isEmpty else { return nil }
        return followedIndices.map { $0 < storage.count ? storage[$0] : nil }
    }

    /// Under the lock, after a batch's mutation: records in `change` the followed indices that
    /// hold another element now, given the elements there before (in the order of
    /// ``followedIndices``).
    func recordFollowedChanges(from before: [Element?]?, in change: inout ArrayChange<Element>) {
        guard let before else { return }
        for (index, old) in zip(followedIndices, before) {
            recordFollowed(index, old: old, in: &change)
        }
    }

    /// Under the lock, after `range`, which held `old` in `oldCount` elements, was replaced:
    /// records in `change` the followed indices that hold another element now. Only indices
    /// from the range on can; after the range, only if the count changed. Each index's old
    /// element is found in `old` or, shifted, in the new contents.
    @inlinable
    func recordFollowedChanges(
        replacing range: Range<Int>, old: [Element], oldCount: Int,
        in change: inout ArrayChange<Element>
    ) {
        let shift = storage.count - oldCount
        let oldEnd = range.lowerBound + old.count
        for index in followedIndices[followedIndices.firstPosition(notBelow: range.lowerBound)...] {
            // Past both ends: unreachable before and after, and so is every later index.
            if index >= oldCount && index >= storage.count { break }
            // After the range, an unchanged count leaves every element where it was.
            if shift == 0 && index >= oldEnd { break }
            let before: Element? =
                index >= oldCount
                ? nil : index < oldEnd ? old[index - range.lowerBound] : storage[index + shift]
            recordFollowed(index, old: before, in: &change)
        }
    }

    /// Records `index` in `change` if the element there now differs from `old` (reachability
    /// first, then the element type's rule).
    @inlinable
    func recordFollowed(_ index: Int, old: Element?, in change: inout ArrayChange<Element>) {
        let new = index < storage.count ? storage[index] : nil
        switch (old, new) {
        case (nil, nil): return
        case (let old?, let new?) where !changeRule.isChange(from: old, to: new): return
        default: change.followed.append(index, new.map { $0 as Any })
        }
    }

    /// The contents and their version, read together.
    @usableFromInline
    var versionedContents: (contents: [Element], version: UInt64) {
        core.lock.withLock { (storage, version) }
    }
}

/// The collections whose `mutate(as:_:)` body runs on this thread: a body that mutated its
/// collection directly would make the batch run again forever.
@usableFromInline
enum CollectionBatching {
    @TaskLocal static var current: [ObjectIdentifier] = []

    /// Stops a direct mutation of `collection` inside its own batch, with a clear message.
    @usableFromInline
    static func checkNotBatching(_ collection: AnyObject) {
        let current = current
        guard !current.isEmpty else { return }
        precondition(
            !current.contains(ObjectIdentifier(collection)),
            "\(type(of: collection)): mutated directly inside its own mutate { } body; edit the "
                + "batch passed to the body instead")
    }

    /// Runs a batch's `body` for `collection` on this thread.
    static func running<Result>(
        _ collection: AnyObject, _ body: () throws -> Result
    ) rethrows -> Result {
        try $current.withValue(current + [ObjectIdentifier(collection)], operation: body)
    }
}

// The contents and the messenger state are protected by the core's lock; sharing the array
// shares its elements, so it is `Sendable` when they are.
extension ObservableArray: @unchecked Sendable where Element: Sendable {}
