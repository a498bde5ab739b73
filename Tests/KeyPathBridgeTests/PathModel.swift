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
