import KeyPathBridge

/// The seed's model (EBNObservable's guide): a user cache with a current user with addresses.
final class Address {
    @ObservableVar var zipCode: String
    @ObservableVar var street: String?

    init(zipCode: String, street: String? = nil) {
        self.zipCode = zipCode
        self.street = street
    }
}

final class User {
    @ObservableVar var name: String
    @ObservableVar var address: Address?
    @ObservableVar var workAddress: Address?

    init(name: String, address: Address? = nil) {
        self.name = name
        self.address = address
    }
}

final class UserCache {
    @ObservableVar var currentUser: User?
}

/// A model whose properties are `let` variables, so it is `Sendable` (for the concurrency tests).
final class Node: Sendable {
    let child = Var<Node?>(nil)
    let value = Var(0)
}

/// An element equal to another by `id` alone, so that an equal element can be another object.
final class SameIDItem: Hashable, @unchecked Sendable {
    let id: Int
    @ObservableVar var title: String
    init(_ id: Int, _ title: String = "") {
        self.id = id
        self.title = title
    }
    static func == (lhs: SameIDItem, rhs: SameIDItem) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// Collections and values at the ends of typed and string paths.
final class CollectionsModel: @unchecked Sendable {
    let items: ObservableArray<Int> = []
    let objects: ObservableArray<SameIDItem> = []
    let words: ObservableDictionary<String, String> = [:]
    @ObservableVar var anyList: ObservableArray<Any?> = [5]
    @ObservableVar var text = ""
    @ObservableVar var described: (any CustomStringConvertible)? = 5
}

/// Dictionaries and sets whose keys, members and values are parts of paths.
final class KeyedCollections: @unchecked Sendable {
    let words: ObservableDictionary<String, String> = [:]
    let scores: ObservableDictionary<Int, Int> = [:]
    let entries: ObservableDictionary<String, SameIDItem> = [:]
    let letters: ObservableDictionary<Character, Int> = [:]
    let tags: ObservableSet<String> = []
    let numbers: ObservableSet<Int> = []
    let members: ObservableSet<SameIDItem> = []
    @ObservableVar var replaceable: ObservableDictionary<String, Int> = [:]
}

/// Two dictionaries, and an array of objects that are equal by value.
final class TwoDictionaryShelf {
    let words: ObservableDictionary<String, String> = [:]
    let other: ObservableDictionary<String, String> = [:]
    let boxes: ObservableArray<SameValueBox> = []
}

/// Equal by value, but each box is an object of its own (`===` decides for objects).
final class SameValueBox: Hashable {
    let value: Int
    init(_ value: Int) { self.value = value }
    static func == (lhs: SameValueBox, rhs: SameValueBox) -> Bool { lhs.value == rhs.value }
    func hash(into hasher: inout Hasher) { hasher.combine(value) }
}
