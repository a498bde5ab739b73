/// One edit of an array's contents, at an index relative to the contents just before it (after
/// the edits before it in the same change).
public enum ArrayEdit<Element> {
    /// `elements` were inserted at `index`.
    case inserted(_ elements: [Element], at: Int)
    /// `elements`, which were at `index`, were removed.
    case removed(_ elements: [Element], at: Int)
    /// The elements `old`, which were at `index`, were replaced by `new` (the counts may differ).
    case replaced(old: [Element], new: [Element], at: Int)

    /// Where the edit happened.
    @inlinable
    public var index: Int {
        switch self {
        case .inserted(_, let index), .removed(_, let index), .replaced(_, _, let index): index
        }
    }

    /// The elements the edit took out.
    @inlinable
    public var oldElements: [Element] {
        switch self {
        case .inserted: []
        case .removed(let elements, _), .replaced(let elements, _, _): elements
        }
    }

    /// The elements the edit put in.
    @inlinable
    public var newElements: [Element] {
        switch self {
        case .removed: []
        case .inserted(let elements, _), .replaced(_, let elements, _): elements
        }
    }

    /// The edit of `old` at `index` into `new`: an insertion, a removal or a replacement.
    @inlinable
    init(replacing old: [Element], with new: [Element], at index: Int) {
        if old.isEmpty {
            self = .inserted(new, at: index)
        } else if new.isEmpty {
            self = .removed(old, at: index)
        } else {
            self = .replaced(old: old, new: new, at: index)
        }
    }
}

extension ArrayEdit: Equatable where Element: Equatable {}
extension ArrayEdit: Hashable where Element: Hashable {}
extension ArrayEdit: Sendable where Element: Sendable {}

/// The message of an ``ObservableArray``: what one mutation, or one batch of mutations, did.
///
/// ```swift
/// observer.observe(todos) { change in
///     for edit in change.edits { … }          // in order: each relative to the one before
///     let updates = change.batchUpdates        // for a table or collection view
///     tableView.performBatchUpdates(deleting: updates.deletions, inserting: updates.insertions)
/// }
/// ```
///
/// Applying ``edits`` in order to the contents before the change gives the contents after it
/// (``apply(to:)``).
public struct ArrayChange<Element> {
    /// The edits, in the order they happened.
    public let edits: [ArrayEdit<Element>]
    /// The number of elements before the change.
    public let oldCount: Int
    /// Pairs of a removed and an inserted element that are one element moving, in old and new
    /// indices, for ``batchUpdates`` (found by `replaceAll(with:)`).
    @usableFromInline let knownMoves: [ArrayBatchUpdates.Move]
    /// The indices that paths follow (`#3`) that hold another element after the change, with
    /// the element there now. Worked out by the array as it mutates, for the paths' links.
    @usableFromInline var followed = FollowedIndexChanges()

    /// The number of elements after the change.
    public let newCount: Int

    @inlinable
    init(edits: [ArrayEdit<Element>], oldCount: Int, moves: [ArrayBatchUpdates.Move] = []) {
        self.edits = edits
        self.oldCount = oldCount
        knownMoves = moves
        newCount = edits.reduce(oldCount) { $0 - $1.oldElements.count + $1.newElements.count }
    }

    /// Applies the edits, in order, to `contents` (the contents before the change).
    public func apply(to contents: inout [Element]) {
        for edit in edits {
            let index = edit.index
            contents.replaceSubrange(
                index..<(index + edit.oldElements.count), with: edit.newElements)
        }
    }

    /// The edits in the form table and collection views take for one batch of updates:
    /// deletions in old indices, insertions in new indices, reloads in old indices (elements
    /// replaced in place), and moves. Computed when read.
    public var batchUpdates: ArrayBatchUpdates {
        ArrayBatchUpdates(edits: edits, oldCount: oldCount, moves: knownMoves)
    }
}

extension ArrayChange: Equatable where Element: Equatable {
    /// Two changes are equal when their edits and old counts are.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.edits == rhs.edits && lhs.oldCount == rhs.oldCount
    }
}

extension ArrayChange: Sendable where Element: Sendable {}

extension ArrayChange: CountedChange {
    static func none(count: Int) -> Self { ArrayChange(edits: [], oldCount: count) }
}

/// An array change for a table or collection view's batch updates (UIKit's
/// `performBatchUpdates`, AppKit's and SwiftUI's diffable forms): deletions are indices in the
/// old contents, insertions indices in the new contents, reloads indices in the old contents of
/// elements replaced in place, each sorted ascending.
public struct ArrayBatchUpdates: Equatable, Sendable {
    /// An element that moved, from its old index to its new one.
    public struct Move: Equatable, Hashable, Sendable {
        /// The index in the old contents.
        public var from: Int
        /// The index in the new contents.
        public var to: Int

        /// A move from `from` (old contents) to `to` (new contents).
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    /// Indices in the old contents of the elements removed.
    public var deletions: [Int]
    /// Indices in the new contents of the elements inserted.
    public var insertions: [Int]
    /// Indices in the old contents of the elements replaced in place.
    public var reloads: [Int]
    /// Elements that moved (neither deleted nor inserted).
    public var moves: [Move]

    /// Updates from their parts.
    public init(deletions: [Int], insertions: [Int], reloads: [Int], moves: [Move]) {
        self.deletions = deletions
        self.insertions = insertions
        self.reloads = reloads
        self.moves = moves
    }

    /// What each position of the contents holds while the edits are applied: a run of old
    /// elements kept, of old elements replaced in place, or of new elements.
    private enum Run {
        case kept(Range<Int>)
        case reloaded(Range<Int>)
        case inserted(count: Int)

        var count: Int {
            switch self {
            case .kept(let range), .reloaded(let range): range.count
            case .inserted(let count): count
            }
        }

        /// The first `count` positions and the rest.
        func split(at count: Int) -> (Run, Run) {
            switch self {
            case .kept(let range):
                (
                    .kept(range.lowerBound..<(range.lowerBound + count)),
                    .kept((range.lowerBound + count)..<range.upperBound)
                )
            case .reloaded(let range):
                (
                    .reloaded(range.lowerBound..<(range.lowerBound + count)),
                    .reloaded((range.lowerBound + count)..<range.upperBound)
                )
            case .inserted(let total):
                (.inserted(count: count), .inserted(count: total - count))
            }
        }
    }

    /// The batch updates for `edits` applied to `oldCount` elements, with `moves` (pairs of a
    /// deletion and an insertion that are one element) taken out of deletions and insertions.
    /// O(e²) for e edits, independent of the number of elements.
    init<Element>(edits: [ArrayEdit<Element>], oldCount: Int, moves: [Move]) {
        var runs: [Run] = oldCount > 0 ? [.kept(0..<oldCount)] : []
        var deleted: [Int] = []
        for edit in edits {
            let removedCount = edit.oldElements.count
            let insertedCount = edit.newElements.count
            // Split the runs at the edit's start and end.
            var before: [Run] = []
            var affected: [Run] = []
            var after: [Run] = []
            var position = 0
            for run in runs {
                var run = run
                if position < edit.index, position + run.count > edit.index {
                    let (head, tail) = run.split(at: edit.index - position)
                    before.append(head)
                    position += head.count
                    run = tail
                }
                let end = edit.index + removedCount
                if position >= edit.index, position < end, position + run.count > end {
                    let (head, tail) = run.split(at: end - position)
                    affected.append(head)
                    position += head.count
                    run = tail
                }
                if position < edit.index {
                    before.append(run)
                } else if position < end {
                    affected.append(run)
                } else {
                    after.append(run)
                }
                position += run.count
            }
            // In a replacement, the positions that stay (up to the smaller count) are reloads of
            // old elements; the rest are deletions or insertions.
            var replacing = min(removedCount, insertedCount)
            var middle: [Run] = []
            for run in affected {
                if replacing > 0 {
                    let taken = min(replacing, run.count)
                    let (head, tail) = run.split(at: taken)
                    replacing -= taken
                    switch head {
                    case .kept(let range), .reloaded(let range): middle.append(.reloaded(range))
                    case .inserted: middle.append(head)
                    }
                    if tail.count > 0, case .kept(let range) = tail {
                        deleted.append(contentsOf: range)
                    } else if tail.count > 0, case .reloaded(let range) = tail {
                        deleted.append(contentsOf: range)
                    }
                } else if case .kept(let range) = run {
                    deleted.append(contentsOf: range)
                } else if case .reloaded(let range) = run {
                    deleted.append(contentsOf: range)
                }
            }
            if insertedCount > removedCount {
                middle.append(.inserted(count: insertedCount - removedCount))
            }
            runs = (before + middle + after).filter { $0.count > 0 }
        }
        var insertions: [Int] = []
        var reloads: [Int] = []
        var position = 0
        for run in runs {
            switch run {
            case .kept: break
            case .reloaded(let range): reloads.append(contentsOf: range)
            case .inserted(let count): insertions.append(contentsOf: position..<(position + count))
            }
            position += run.count
        }
        let movedFrom = Set(moves.map(\.from))
        let movedTo = Set(moves.map(\.to))
        self.init(
            deletions: deleted.filter { !movedFrom.contains($0) }.sorted(),
            insertions: insertions.filter { !movedTo.contains($0) },
            reloads: reloads.sorted(),
            moves: moves)
    }
}
