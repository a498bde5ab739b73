import Transforms

extension Synthetic {
    /// A public, immutable snapshot of a private observable array: observable, and copied at
    /// most once per mutation however often it is read (EBN's
    /// `publicCollection:copiesFromPrivateCollection:`).
    ///
    /// ```swift
    /// final class Playlist {
    ///     private let editableSongs = ObservableArray<String>()
    ///     @Synthetic(snapshotOf: \Playlist.editableSongs) var songs: [String]
    /// }
    /// ```
    public convenience init<Element>(
        snapshotOf collection: KeyPath<Owner, ObservableArray<Element>>
    )
    where Value == [Element] {
        self.init { $0[keyPath: collection].elements }
    }

    /// A public, immutable snapshot of a private observable dictionary (see
    /// ``init(snapshotOf:)-(KeyPath<Owner,ObservableArray<Element>>)``).
    public convenience init<Key, Element>(
        snapshotOf collection: KeyPath<Owner, ObservableDictionary<Key, Element>>
    ) where Value == [Key: Element] {
        self.init { $0[keyPath: collection].elements }
    }

    /// A public, immutable snapshot of a private observable set (see
    /// ``init(snapshotOf:)-(KeyPath<Owner,ObservableArray<Element>>)``).
    public convenience init<Element>(snapshotOf collection: KeyPath<Owner, ObservableSet<Element>>)
    where Value == Set<Element> {
        self.init { $0[keyPath: collection].elements }
    }
}
