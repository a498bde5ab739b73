// The table of the followed indices (`#3`) an array change gave another element.

/// The indices that paths follow (`#3`) and that hold another element after a change (by the
/// element type's rule), in ascending order, each with the element there now (boxed, nil past
/// the end). Not generic: a link looks its index up without any generic metadata (and a
/// single-edit mutation, specialized where it is called, boxes the elements there).
///
/// `@unchecked Sendable`: it holds boxed elements, and lives only in an ``ArrayChange``, which
/// is `Sendable` only where its elements are.
@usableFromInline
struct FollowedIndexChanges: @unchecked Sendable {
    @usableFromInline var indices: [Int] = []
    @usableFromInline var values: [Any?] = []

    @inlinable init() {}

    /// Records that `index` (greater than every index recorded before) holds `value` now.
    @inlinable
    mutating func append(_ index: Int, _ value: Any?) {
        indices.append(index)
        values.append(value)
    }

    /// The element at `index` now if the change gave it another one (`.some(nil)`: past the
    /// end); nil if the element there stayed.
    func value(at index: Int) -> Any?? {
        let position = indices.firstPosition(notBelow: index)
        guard position < indices.count, indices[position] == index else { return nil }
        return .some(values[position])
    }
}

extension [Int] {
    /// In an ascending array, the position of the first element not below `value` (the count
    /// if there is none), by binary search.
    @inlinable
    func firstPosition(notBelow value: Int) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
