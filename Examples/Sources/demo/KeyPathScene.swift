import KeyPathBridge

final class Address {
    @ObservableVar var zipCode: String
    init(zipCode: String) { self.zipCode = zipCode }
}

final class User {
    let name: String
    @ObservableVar var address: Address?
    init(name: String, address: Address?) {
        self.name = name
        self.address = address
    }
}

final class UserCache {
    @ObservableVar var currentUser: User?
}

/// A label that shows the current user's zip code, whoever the user is and wherever they live.
final class ZipCodeLabel: Observer {
    let receiver = Receiver()

    init(cache: UserCache) {
        observe(cache, \.$currentUser, \.$address, \.$zipCode) { zip in
            Scene.show("label shows \(zip.map { "zip \($0)" } ?? "no address")")
        }
    }
}

func keyPathScene() {
    Scene.begin("A key path that re-wires when objects along it change")
    let cache = UserCache()
    let label = ZipCodeLabel(cache: cache)

    Scene.narrate("Ann is fetched: the path becomes reachable.")
    let ann = User(name: "Ann", address: Address(zipCode: "10115"))
    cache.currentUser = ann

    Scene.narrate("Ann's zip code is corrected.")
    ann.address?.zipCode = "10117"

    Scene.narrate("Ann moves: the path now follows her new address.")
    let oldAddress = ann.address
    ann.address = Address(zipCode: "20095")

    Scene.narrate("The old address changes: nobody follows it any more, nothing shows.")
    oldAddress?.zipCode = "99999"

    Scene.narrate("Bob logs in; he has not given an address: the path is unreachable.")
    cache.currentUser = User(name: "Bob", address: nil)

    withExtendedLifetime(label) {}
}
