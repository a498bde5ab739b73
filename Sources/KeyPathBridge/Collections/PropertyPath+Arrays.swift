// Typed paths into observable arrays: the typed forms of a string path's `items.count`,
// `items.#3`, `items.3`, `items.*` (last) and `items.*.name`.

extension PropertyPath {
    /// A path to an array that a `let` property of `Root` holds (an array in an observable
    /// property, `@ObservableVar var items: ObservableArray<…>`, takes `init(_:)` with `$items`).
    ///
    /// ```swift
    /// final class TodoList { let items: ObservableArray<Todo> = [] }
    /// let first = PropertyPath(\TodoList.items).appendingElement(at: 0).appending(\.$title)
    /// ```
    public init<Element>(_ array: KeyPath<Root, ObservableArray<Element>>)
    where Value == ObservableArray<Element> {
        self.init(components: [PathComponent(constant: array)])
    }

    /// This path extended by an array that a `let` property of the object it leads to holds.
    public func appending<Element>(
        _ array: KeyPath<Value, ObservableArray<Element>>
    ) -> PropertyPath<Root, ObservableArray<Element>> where Value: AnyObject {
        PropertyPath<Root, ObservableArray<Element>>(
            components: components + [PathComponent(constant: array)])
    }

    /// This path extended by the array's count (EBN's `count`): an update only when the count
    /// changes.
    ///
    /// ```swift
    /// observer.observe(list, PropertyPath(\TodoList.items).appendingCount()) { count in }
    /// ```
    @inlinable
    public func appendingCount<Element>() -> PropertyPath<Root, Int>
    where Value == ObservableArray<Element> {
        PropertyPath<Root, Int>(
            components: components + [
                PathComponent(part: .count, named: "count").endingDirectly(TypedHandlers<Int>())
            ])
    }

    /// This path extended by the element at `index`, whichever element is there (EBN's `#3`,
    /// index-following): it changes when the element at that index does — a replacement there,
    /// an insertion or removal before it, the array shrinking below it (unreachable then). It
    /// may start beyond the end. A binding can write to it while the index is in the array.
    ///
    /// - Precondition: `index` is not negative.
    @inlinable
    public func appendingElement<Element>(at index: Int) -> PropertyPath<Root, Element>
    where Value == ObservableArray<Element> {
        precondition(index >= 0, "PropertyPath: negative array index \(index)")
        return PropertyPath<Root, Element>(
            components: components + [
                PathComponent(part: .indexFollowing(index), named: "#\(index)")
                    .endingDirectly(TypedHandlers<Element>())
            ])
    }

    /// This path extended by the element that is at `index` when the path is wired to the array
    /// (EBN's `3`, object-following): followed through insertions and removals before it, and
    /// unreachable for good once it leaves the array. An index outside the array when the path
    /// is wired to it is a ``PathError/indexOutOfRange(_:count:path:)`` (reported through
    /// ``PathDiagnostics``; it makes the rest unreachable).
    @inlinable
    public func appendingElement<Element>(startingAt index: Int) -> PropertyPath<Root, Element>
    where Value == ObservableArray<Element> {
        PropertyPath<Root, Element>(
            components: components + [
                PathComponent(part: .objectFollowing(index), named: "\(index)")
                    .endingDirectly(TypedHandlers<Element>())
            ])
    }

    /// This path extended by any mutation of the array (EBN's `*` on a collection): every
    /// change message is an update whose value is the change (at first, a change without
    /// edits).
    public func appendingChanges<Element>() -> PropertyPath<Root, ArrayChange<Element>>
    where Value == ObservableArray<Element> {
        PropertyPath<Root, ArrayChange<Element>>(
            components: components + [PathComponent(part: .anyMutation, named: "*")])
    }

    /// This path extended by a fan-out over the array's elements (EBN's `items.*.name`): follow
    /// it with a property of the elements (alone, it is never reachable; for every change of
    /// the array, use `appendingChanges()`). Elements that join later are followed, elements
    /// that leave are not, and an element held twice is followed while it is held at least once.
    /// The rules of updates are a wildcard's (see ``init(everyPropertyHolding:)``).
    ///
    /// ```swift
    /// let titles = PropertyPath(\TodoList.items).appendingEachElement().appending(\.$title)
    /// ```
    public func appendingEachElement<Element: AnyObject>() -> PropertyPath<Root, Element>
    where Value == ObservableArray<Element> {
        PropertyPath<Root, Element>(
            components: components + [
                PathComponent(fanningOut: { PathComponent(eachElementFollowing: $0) })
            ])
    }
}
