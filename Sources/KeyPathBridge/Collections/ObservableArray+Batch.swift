extension ObservableArray {
    /// The contents of an array being edited in ``ObservableArray/mutate(as:_:)``: a plain
    /// mutable, range-replaceable collection that records its edits, so that the whole batch
    /// sends one message.
    ///
    /// Every mutating method of the standard library works on it. Sorting, reversing, shuffling
    /// and partitioning are recorded as one replacement of the range that changed.
    public struct Batch: RandomAccessCollection, MutableCollection, RangeReplaceableCollection {
        /// The contents as they are now in the batch.
        public private(set) var elements: [Element]
        private(set) var edits: [ArrayEdit<Element>] = []
        private let isSame: (Element, Element) -> Bool

        init(_ elements: [Element], isSame: @escaping (Element, Element) -> Bool) {
            self.elements = elements
            self.isSame = isSame
        }

        /// An empty batch (for `RangeReplaceableCollection`; a batch comes from
        /// ``ObservableArray/mutate(as:_:)``).
        public init() {
            self.init([], isSame: { _, _ in false })
        }

        /// The first index: 0.
        public var startIndex: Int { 0 }
        /// The index after the last element.
        public var endIndex: Int { elements.count }

        /// The element at `position`; setting it records a replacement.
        public subscript(position: Int) -> Element {
            get { elements[position] }
            set { replaceSubrange(position..<(position + 1), with: CollectionOfOne(newValue)) }
        }

        /// The elements in `bounds`; setting them records one replacement.
        public subscript(bounds: Range<Int>) -> ArraySlice<Element> {
            get { elements[bounds] }
            set { replaceSubrange(bounds, with: newValue) }
        }

        /// Replaces the elements in `subrange` with `newElements`, and records the edit.
        public mutating func replaceSubrange<New: Collection<Element>>(
            _ subrange: Range<Int>, with newElements: New
        ) {
            let new = Array(newElements)
            let old = Array(elements[subrange])
            guard !old.isEmpty || !new.isEmpty else { return }
            if old.count == new.count, zip(old, new).allSatisfy(isSame) { return }
            elements.replaceSubrange(subrange, with: new)
            record(ArrayEdit(replacing: old, with: new, at: subrange.lowerBound))
        }

        /// Runs `body` on the contents, then records one replacement of the range that
        /// changed (so that `sort`, `reverse`, `shuffle` and `partition` are one edit each),
        /// also when `body` throws after moving elements.
        public mutating func withContiguousMutableStorageIfAvailable<Result>(
            _ body: (inout UnsafeMutableBufferPointer<Element>) throws -> Result
        ) rethrows -> Result? {
            let before = elements
            defer { recordChanges(since: before) }
            return try elements.withContiguousMutableStorageIfAvailable(body)
        }

        /// Records one replacement of the range where the contents differ from `before` (of the
        /// same count).
        private mutating func recordChanges(since before: [Element]) {
            let count = elements.count
            var first = 0
            while first < count, isSame(before[first], elements[first]) { first += 1 }
            guard first < count else { return }
            var last = count - 1
            while last > first, isSame(before[last], elements[last]) { last -= 1 }
            record(
                .replaced(
                    old: Array(before[first...last]), new: Array(elements[first...last]),
                    at: first))
        }

        /// Removes every element: one removal (the standard library's default would replace
        /// the batch, and lose its edits).
        public mutating func removeAll(keepingCapacity keepCapacity: Bool = false) {
            replaceSubrange(0..<count, with: EmptyCollection())
            if !keepCapacity { elements = [] }
        }

        /// Removes the elements that satisfy `shouldBeRemoved`: one removal per run of adjacent
        /// removed elements (not the standard library's swaps), in O(n). If
        /// `shouldBeRemoved` throws, nothing is removed.
        public mutating func removeAll(where shouldBeRemoved: (Element) throws -> Bool) rethrows {
            var kept: [Element] = []
            var removals: [ArrayEdit<Element>] = []
            var removedSoFar = 0
            var index = 0
            while index < elements.count {
                guard try shouldBeRemoved(elements[index]) else {
                    kept.append(elements[index])
                    index += 1
                    continue
                }
                var end = index + 1
                while end < elements.count, try shouldBeRemoved(elements[end]) { end += 1 }
                removals.append(.removed(Array(elements[index..<end]), at: index - removedSoFar))
                removedSoFar += end - index
                index = end
            }
            guard !removals.isEmpty else { return }
            elements = kept
            for removal in removals { record(removal) }
        }

        /// Exchanges two elements: one replacement of the range between them.
        public mutating func swapAt(_ i: Int, _ j: Int) {
            guard i != j else { return }
            let (low, high) = (Swift.min(i, j), Swift.max(i, j))
            var moved = Array(elements[low...high])
            moved.swapAt(i - low, j - low)
            replaceSubrange(low..<(high + 1), with: moved)
        }

        /// Reverses the elements: one replacement.
        public mutating func reverse() {
            _ = withContiguousMutableStorageIfAvailable { $0.reverse() }
        }

        /// Shuffles the elements with `generator`: one replacement.
        public mutating func shuffle<Generator: RandomNumberGenerator>(
            using generator: inout Generator
        ) {
            _ = withContiguousMutableStorageIfAvailable { $0.shuffle(using: &generator) }
        }

        /// Shuffles the elements: one replacement.
        public mutating func shuffle() {
            var generator = SystemRandomNumberGenerator()
            shuffle(using: &generator)
        }

        /// Reorders the elements so that those that satisfy `belongsInSecondPartition` come
        /// last; returns the index of the first of them. One replacement.
        public mutating func partition(
            by belongsInSecondPartition: (Element) throws -> Bool
        ) rethrows -> Int {
            let before = elements
            defer { recordChanges(since: before) }
            return try elements.partition(by: belongsInSecondPartition)
        }

        /// Reserves room for `capacity` elements (no edit).
        public mutating func reserveCapacity(_ capacity: Int) {
            elements.reserveCapacity(capacity)
        }

        /// Whether the batch has edits that cancel out: the contents are the same as `start`,
        /// element by element (`==`, or `===` for objects), so that the batch changes nothing.
        /// O(n), and only for a batch with edits.
        func endsAsItBegan(from start: [Element]) -> Bool {
            guard !edits.isEmpty, elements.count == start.count else { return false }
            return zip(start, elements).allSatisfy(isSame)
        }

        /// Records an edit, merged with the last one where they are one contiguous insertion or
        /// removal.
        private mutating func record(_ edit: ArrayEdit<Element>) {
            switch (edits.last, edit) {
            case (.inserted(let first, let index)?, .inserted(let more, let at))
            where at == index + first.count:
                edits[edits.count - 1] = .inserted(first + more, at: index)
            case (.removed(let first, let index)?, .removed(let more, let at)) where at == index:
                edits[edits.count - 1] = .removed(first + more, at: index)
            default:
                edits.append(edit)
            }
        }
    }

    /// Edits the array in one step that sends one message, authored by `author` (by default,
    /// the array): `body` edits a ``Batch`` of the contents, with the whole mutating API of the
    /// standard library, and the batch's edits become the message's ``ArrayChange/edits``.
    ///
    /// ```swift
    /// todos.mutate(as: editor) { todos in
    ///     todos.removeAll { $0.isDone }
    ///     todos.insert(Todo("New"), at: 0)
    /// }
    /// ```
    ///
    /// `body` runs without any lock held, on a copy of the contents (copied once per batch). If
    /// another mutation of the array happens meanwhile (on another thread), the batch is not
    /// applied and `body` runs again on the new contents, so keep it free of other side
    /// effects, and edit the array only through its argument. A batch with no edit, or whose
    /// edits cancel out (the contents end as they began), sends nothing.
    @discardableResult
    public func mutate<Result>(
        as author: AnyAuthor? = nil, _ body: (inout Batch) throws -> Result
    ) rethrows -> Result {
        let isSame: (Element, Element) -> Bool = { [changeRule] in
            !changeRule.isChange(from: $0, to: $1)
        }
        CollectionBatching.checkNotBatching(self)
        while true {
            let (contents, version) = versionedContents
            var batch = Batch(contents, isSame: isSame)
            let result = try CollectionBatching.running(self) { try body(&batch) }
            let edits = batch.endsAsItBegan(from: contents) ? [] : batch.edits
            if commit(batch.elements, edits: edits, ifAt: version, as: author ?? self) {
                return result
            }
        }
    }
}
