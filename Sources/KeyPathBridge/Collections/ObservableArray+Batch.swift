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
        /// changed (so that `sort`, `reverse`, `shuffle` and `partition` are one edit each).
        public mutating func withContiguousMutableStorageIfAvailable<Result>(
            _ body: (inout UnsafeMutableBufferPointer<Element>) throws -> Result
        ) rethrows -> Result? {
            let before = elements
            let result = try elements.withContiguousMutableStorageIfAvailable(body)
            let count = elements.count
            var first = 0
            while first < count, isSame(before[first], elements[first]) { first += 1 }
            guard first < count else { return result }
            var last = count - 1
            while last > first, isSame(before[last], elements[last]) { last -= 1 }
            record(
                .replaced(
                    old: Array(before[first...last]), new: Array(elements[first...last]),
                    at: first))
            return result
        }

        /// Reserves room for `capacity` elements (no edit).
        public mutating func reserveCapacity(_ capacity: Int) {
            elements.reserveCapacity(capacity)
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
    /// effects, and edit the array only through its argument. A batch with no edit sends
    /// nothing.
    @discardableResult
    public func mutate<Result>(
        as author: AnyAuthor? = nil, _ body: (inout Batch) throws -> Result
    ) rethrows -> Result {
        let isSame: (Element, Element) -> Bool = { [changeRule] in
            !changeRule.isChange(from: $0, to: $1)
        }
        ArrayBatching.checkNotBatching(self)
        let batching = ArrayBatching.current + [ObjectIdentifier(self)]
        while true {
            let (contents, version) = versionedContents
            var batch = Batch(contents, isSame: isSame)
            let result = try ArrayBatching.$current.withValue(batching) { try body(&batch) }
            if commit(batch.elements, edits: batch.edits, ifAt: version, as: author ?? self) {
                return result
            }
        }
    }
}
