// `ObservableArray` as a standard collection. The mutating methods are the class's own (not the
// protocols' `mutating` defaults), so that they work on a `let` array and each sends one message.

extension ObservableArray: RandomAccessCollection, MutableCollection, RangeReplaceableCollection {
    /// The first index: 0.
    public var startIndex: Int { 0 }
    /// The index after the last element.
    public var endIndex: Int { count }
    /// The number of elements now.
    @inlinable
    public var count: Int {
        DependencyTracking.recordRead(of: core)
        return core.lock.withLock { storage.count }
    }
    /// Whether the array is empty now.
    public var isEmpty: Bool { count == 0 }

    /// Iterates over the contents as they are when iteration starts.
    public func makeIterator() -> IndexingIterator<[Element]> {
        elements.makeIterator()
    }

    /// The element at `position`; setting it sends a replacement (nothing if it is the same).
    @inlinable
    public subscript(position: Int) -> Element {
        get {
            DependencyTracking.recordRead(of: core)
            return core.lock.withLock { storage[position] }
        }
        set { replace(position..<(position + 1), with: [newValue], as: self) }
    }

    /// The elements in `bounds` (a snapshot); setting them sends one replacement.
    public subscript(bounds: Range<Int>) -> ArraySlice<Element> {
        get {
            DependencyTracking.recordRead(of: core)
            return core.lock.withLock { storage[bounds] }
        }
        set { replace(bounds, with: Array(newValue), as: self) }
    }

    /// Replaces the elements in `subrange` with `newElements`: one message.
    public func replaceSubrange<New: Collection<Element>>(
        _ subrange: Range<Int>, with newElements: New
    ) {
        replace(subrange, with: Array(newElements), as: self)
    }

    /// Reserves room for `capacity` elements (no message).
    public func reserveCapacity(_ capacity: Int) {
        core.lock.withLock { storage.reserveCapacity(capacity) }
    }

    /// Adds `element` at the end.
    @inlinable
    public func append(_ element: Element) {
        replace(as: self) { end in (end..<end, [element]) }
    }

    /// Adds `newElements` at the end: one message.
    public func append<New: Sequence<Element>>(contentsOf newElements: New) {
        let new = Array(newElements)  // the sequence's code runs before locking
        replace(as: self) { end in (end..<end, new) }
    }

    /// Inserts `element` at `index`.
    @inlinable
    public func insert(_ element: Element, at index: Int) {
        replace(index..<index, with: [element], as: self)
    }

    /// Inserts `newElements` at `index`: one message.
    public func insert<New: Collection<Element>>(contentsOf newElements: New, at index: Int) {
        replace(index..<index, with: Array(newElements), as: self)
    }

    /// Removes and returns the element at `index`.
    @discardableResult
    @inlinable
    public func remove(at index: Int) -> Element {
        replace(index..<(index + 1), with: [], as: self)[0]
    }

    /// Removes the elements in `bounds`: one message.
    public func removeSubrange(_ bounds: Range<Int>) {
        replace(bounds, with: [], as: self)
    }

    /// Removes and returns the first element.
    ///
    /// - Precondition: the array is not empty.
    @discardableResult
    public func removeFirst() -> Element {
        replace(0..<1, with: [], as: self)[0]
    }

    /// Removes the first `k` elements: one message.
    public func removeFirst(_ k: Int) {
        replace(0..<k, with: [], as: self)
    }

    /// Removes and returns the last element.
    ///
    /// - Precondition: the array is not empty.
    @discardableResult
    public func removeLast() -> Element {
        guard let last = popLast() else {
            preconditionFailure("ObservableArray: removeLast() on an empty array")
        }
        return last
    }

    /// Removes the last `k` elements: one message.
    public func removeLast(_ k: Int) {
        replace(as: self) { end in
            precondition(k >= 0 && k <= end, "ObservableArray: cannot remove \(k) of \(end)")
            return ((end - k)..<end, [])
        }
    }

    /// Removes and returns the last element, or nil if the array is empty.
    @discardableResult
    public func popLast() -> Element? {
        replace(as: self) { end in (Swift.max(end - 1, 0)..<end, []) }.first
    }

    /// Removes every element: one message (nothing if it was empty).
    public func removeAll(keepingCapacity keepCapacity: Bool = false) {
        replace(as: self) { end in (0..<end, []) }
    }

    /// Removes the elements that satisfy `shouldBeRemoved`: one message. (A batch: see
    /// ``mutate(as:_:)``.)
    public func removeAll(where shouldBeRemoved: (Element) throws -> Bool) rethrows {
        try mutate { try $0.removeAll(where: shouldBeRemoved) }
    }

    /// Exchanges two elements: one message.
    public func swapAt(_ i: Int, _ j: Int) {
        guard i != j else { return }
        mutate { $0.swapAt(i, j) }
    }

    /// Reverses the elements: one message.
    public func reverse() {
        mutate { $0.reverse() }
    }

    /// Sorts the elements by `areInIncreasingOrder`: one message.
    public func sort(by areInIncreasingOrder: (Element, Element) throws -> Bool) rethrows {
        try mutate { try $0.sort(by: areInIncreasingOrder) }
    }

    /// Shuffles the elements: one message.
    public func shuffle() {
        mutate { $0.shuffle() }
    }

    /// Shuffles the elements with `generator`: one message.
    public func shuffle<Generator: RandomNumberGenerator>(using generator: inout Generator) {
        mutate { $0.shuffle(using: &generator) }
    }

    /// Reorders the elements so that those that satisfy `belongsInSecondPartition` come last,
    /// and returns the index of the first of them: one message.
    public func partition(
        by belongsInSecondPartition: (Element) throws -> Bool
    ) rethrows -> Int {
        try mutate { try $0.partition(by: belongsInSecondPartition) }
    }
}

extension ObservableArray where Element: Comparable {
    /// Sorts the elements in increasing order: one message.
    public func sort() {
        mutate { $0.sort() }
    }
}

extension ObservableArray: ExpressibleByArrayLiteral {
    /// An array of the literal's elements.
    public convenience init(arrayLiteral elements: Element...) {
        self.init(elements)
    }
}

extension ObservableArray: Equatable where Element: Equatable {
    /// Two arrays are equal when their contents are.
    public static func == (lhs: ObservableArray, rhs: ObservableArray) -> Bool {
        lhs === rhs || lhs.elements == rhs.elements
    }
}

extension ObservableArray: Hashable where Element: Hashable {
    /// Hashes the contents.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(elements)
    }
}

extension ObservableArray: Encodable where Element: Encodable {
    /// Encodes the contents as a plain array.
    public func encode(to encoder: any Encoder) throws {
        // Through a single-value container, as the plain collection in a property is: an
        // encoder's key strategies treat it the same way.
        var container = encoder.singleValueContainer()
        try container.encode(elements)
    }
}

extension ObservableArray: Decodable where Element: Decodable {
    /// Decodes a plain array.
    public convenience init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode([Element].self))
    }
}

extension ObservableArray: CustomStringConvertible {
    /// The contents' description.
    public var description: String { elements.description }
}
