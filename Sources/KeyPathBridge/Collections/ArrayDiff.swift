/// The change set between two arrays of `Hashable` elements, in expected O(n log n) time
/// (Heckel's linking of elements that occur once in each, spread to equal neighbours, then the
/// longest run of linked elements that kept their order): removals first (from the end), then
/// insertions (from the start), and the linked elements that moved as moves. Inlinable, so that
/// it is specialized for the element type where `replaceAll(with:)` is called (generic code
/// would look up metadata for every element).
@usableFromInline
struct ArrayDiff<Element: Hashable> {
    /// What the symbol table knows of one element: how often it occurs in each array, and
    /// where in the old one.
    @usableFromInline
    struct Entry {
        @usableFromInline var oldCount = 0
        @usableFromInline var newCount = 0
        @usableFromInline var oldIndex = 0

        @inlinable init() {}

        /// The element occurs (once more) at `index` in the old array.
        @inlinable
        mutating func occurs(atOld index: Int) {
            oldCount += 1
            oldIndex = index
        }
    }

    @usableFromInline let edits: [ArrayEdit<Element>]
    @usableFromInline let moves: [ArrayBatchUpdates.Move]

    /// The change set from `old` to `new`; elements that are equal but not the same by `rule`
    /// (other objects that are `==`) are not linked: they are removed and inserted.
    @inlinable
    init(from old: [Element], to new: [Element], rule: ChangeRule<Element>) {
        let link = Self.links(from: old, to: new, rule: rule)
        // Linked old indices in the order of the new array; those in the longest increasing
        // subsequence stay, the other linked ones move.
        var linked: [(new: Int, old: Int)] = []
        for (newIndex, oldIndex) in link.enumerated() {
            if let oldIndex { linked.append((newIndex, oldIndex)) }
        }
        let staying = Self.longestIncreasing(linked.map(\.old))
        var keptOld = [Bool](repeating: false, count: old.count)
        var keptNew = [Bool](repeating: false, count: new.count)
        var moves: [ArrayBatchUpdates.Move] = []
        for (position, pair) in linked.enumerated() {
            if staying[position] {
                keptOld[pair.old] = true
                keptNew[pair.new] = true
            } else {
                moves.append(ArrayBatchUpdates.Move(from: pair.old, to: pair.new))
            }
        }
        var edits: [ArrayEdit<Element>] = []
        // Removals from the end, so that each index is still the old one; one per run.
        var index = old.count - 1
        while index >= 0 {
            guard !keptOld[index] else {
                index -= 1
                continue
            }
            var start = index
            while start > 0, !keptOld[start - 1] { start -= 1 }
            edits.append(.removed(Array(old[start...index]), at: start))
            index = start - 1
        }
        // Insertions from the start: the kept elements are in their new order already.
        index = 0
        while index < new.count {
            guard !keptNew[index] else {
                index += 1
                continue
            }
            var end = index + 1
            while end < new.count, !keptNew[end] { end += 1 }
            edits.append(.inserted(Array(new[index..<end]), at: index))
            index = end
        }
        self.edits = edits
        self.moves = moves
    }

    /// For each new index, the old index of the same element it is linked to, if any.
    @inlinable
    static func links(from old: [Element], to new: [Element], rule: ChangeRule<Element>)
        -> [Int?]
    {
        // Hash equality is `==`; only for objects does the rule say more (`===`).
        let checksIdentity = ChangeRule<Element>.isObjectReference
        var table: [Element: Entry] = [:]
        table.reserveCapacity(new.count)
        for (index, element) in old.enumerated() {
            table[element, default: Entry()].occurs(atOld: index)
        }
        for element in new { table[element, default: Entry()].newCount += 1 }
        var newLinks = [Int?](repeating: nil, count: new.count)
        var oldLinked = [Bool](repeating: false, count: old.count)
        for (index, element) in new.enumerated() {
            guard let entry = table[element], entry.oldCount == 1, entry.newCount == 1,
                !checksIdentity || !rule.isChange(from: old[entry.oldIndex], to: element)
            else { continue }
            newLinks[index] = entry.oldIndex
            oldLinked[entry.oldIndex] = true
        }
        // Spread links to equal neighbours, forwards then backwards.
        for index in new.indices.dropLast() {
            guard let oldIndex = newLinks[index], oldIndex + 1 < old.count,
                newLinks[index + 1] == nil, !oldLinked[oldIndex + 1],
                old[oldIndex + 1] == new[index + 1],
                !checksIdentity || !rule.isChange(from: old[oldIndex + 1], to: new[index + 1])
            else { continue }
            newLinks[index + 1] = oldIndex + 1
            oldLinked[oldIndex + 1] = true
        }
        for index in new.indices.dropFirst().reversed() {
            guard let oldIndex = newLinks[index], oldIndex > 0, newLinks[index - 1] == nil,
                !oldLinked[oldIndex - 1], old[oldIndex - 1] == new[index - 1],
                !checksIdentity || !rule.isChange(from: old[oldIndex - 1], to: new[index - 1])
            else { continue }
            newLinks[index - 1] = oldIndex - 1
            oldLinked[oldIndex - 1] = true
        }
        return newLinks
    }

    /// Which positions of `values` are in a longest strictly increasing subsequence (patience
    /// sorting, O(n log n)).
    @inlinable
    static func longestIncreasing(_ values: [Int]) -> [Bool] {
        var tails: [Int] = []  // positions of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var result = [Bool](repeating: false, count: values.count)
        var position = tails.last ?? -1
        while position >= 0 {
            result[position] = true
            position = previous[position]
        }
        return result
    }
}

extension ObservableArray where Element: Hashable {
    /// Replaces all contents with `newElements`, sending a small change set: the elements that
    /// stay are not touched, and elements that moved are moves in
    /// ``ArrayChange/batchUpdates`` (removed and inserted in the edits). Expected O(n log n)
    /// time (Heckel's algorithm); nothing is sent if the contents are equal.
    ///
    /// ```swift
    /// todos.replaceAll(with: fetched)   // a view animates the difference
    /// ```
    @inlinable
    public func replaceAll<New: Sequence<Element>>(
        with newElements: New, as author: AnyAuthor? = nil
    ) {
        let new = Array(newElements)
        CollectionBatching.checkNotBatching(self)
        while true {
            let (old, version) = versionedContents
            // The same elements by the array's rule (`===` for objects, not their `==`).
            if old.count == new.count, isSame(old, new) { return }
            let diff = ArrayDiff(from: old, to: new, rule: changeRule)
            if commit(new, edits: diff.edits, moves: diff.moves, ifAt: version, as: author ?? self)
            {
                return
            }
        }
    }
}
