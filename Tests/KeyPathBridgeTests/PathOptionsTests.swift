import HeraldTestSupport
import KeyPathBridge
import Testing

/// The KVO options for paths: the current end value at once (`.initial`), and old and new values
/// (`observeUpdates`), in every form of ad hoc path observation.
@Suite("Path options")
struct PathOptionsTests {
    @Test func theInitialOptionDeliversTheCurrentEndValueAtOnce() {
        let cache = UserCache()
        cache.currentUser = User(name: "Ann", address: Address(zipCode: "10115"))
        let observer = TestObserver()
        let zips = Recording<String?>()
        let names = Recording<String?>()
        observer.observe(cache, \.$currentUser, \.$address, \.$zipCode, options: .initial) {
            zips.append($0)
        }
        observer.observe(cache, \.$currentUser, \.$name, options: .initial) { names.append($0) }
        #expect(zips.elements == ["10115"])
        #expect(names.elements == ["Ann"])

        cache.currentUser?.address?.zipCode = "10117"

        #expect(zips.elements == ["10115", "10117"])
    }

    @Test func anUnreachablePathStartsWithNil() {
        let cache = UserCache()
        let observer = TestObserver()
        let zips = Recording<String?>()
        observer.observe(cache, \.$currentUser, \.$address, \.$zipCode, options: .initial) {
            zips.append($0)
        }
        #expect(zips.elements == [nil])
    }

    @Test func withoutOptionsAPathStartsSilently() {
        let cache = UserCache()
        cache.currentUser = User(name: "Ann")
        let observer = TestObserver()
        let names = Recording<String?>()
        observer.observe(cache, \.$currentUser, \.$name) { names.append($0) }
        observer.observeUpdates(cache, \.$currentUser, \.$name) { names.append($0.new) }
        #expect(names.elements.isEmpty)
    }

    @Test func observeUpdatesDeliversTheOldAndTheNewEndValue() {
        let cache = UserCache()
        let observer = TestObserver()
        let updates = Recording<Update<String?>>()
        observer.observeUpdates(cache, \.$currentUser, \.$address, \.$zipCode) {
            updates.append($0)
        }

        let ann = User(name: "Ann", address: Address(zipCode: "10115"))
        cache.currentUser = ann
        ann.address?.zipCode = "10117"
        ann.address = nil

        #expect(
            updates.elements == [
                Update(nil, "10115"), Update("10115", "10117"), Update("10117", nil),
            ])
    }

    @Test func observeUpdatesWithTheInitialOptionStartsWithTheCurrentValueTwice() {
        let settings = VolumeSettings()
        let observer = TestObserver()
        let updates = Recording<Update<Int?>>()
        let path = observer.observeUpdates(settings, \.$volume, options: .initial) {
            updates.append($0)
        }
        settings.volume = 7

        #expect(updates.elements == [Update(3, 3), Update(3, 7)])
        #expect(path.value == 7)
    }

    @Test func everyArityTakesTheOptionsAndHasAnUpdatesForm() {
        let app = OptionsApp()
        app.session = AppSession()
        app.session?.user = User(name: "Ann", address: Address(zipCode: "1"))
        let observer = TestObserver()
        let values = Recording<String>()
        observer.observe(app, \.$session, options: .initial) { values.append("1: \($0 != nil)") }
        observer.observe(app, \.$session, \.$user, \.$name, options: .initial) {
            values.append("3: \($0 ?? "-")")
        }
        observer.observe(app, \.$session, \.$user, \.$address, \.$zipCode, options: .initial) {
            values.append("4: \($0 ?? "-")")
        }
        observer.observeUpdates(app, \.$session, \.$user, options: .initial) {
            values.append("u2: \($0.new??.name ?? "-")")
        }
        observer.observeUpdates(app, \.$session, \.$user, \.$address, \.$zipCode) {
            values.append("u4: \($0.old ?? "-")→\($0.new ?? "-")")
        }
        app.session?.user?.address?.zipCode = "2"

        #expect(
            values.elements == [
                "1: true", "3: Ann", "4: 1", "u2: Ann", "4: 2", "u4: 1→2",
            ])
    }

    @Test func stringPathsTakeTheOptionsAndHaveAnUpdatesForm() throws {
        let cache = UserCache()
        cache.currentUser = User(name: "Ann")
        let observer = TestObserver()
        let log = Recording<String>()
        try observer.observe(cache, path: "currentUser.name", options: .initial) {
            log.append("value \($0 as? String ?? "-")")
        }
        try observer.observeUpdates(cache, path: "currentUser.name", options: .initial) {
            log.append("update \($0.old as? String ?? "-")→\($0.new as? String ?? "-")")
        }
        cache.currentUser?.name = "Bo"

        #expect(
            log.elements == [
                "value Ann", "update Ann→Ann", "value Bo", "update Ann→Bo",
            ])
    }

    @Test func aPathObservationWithTheInitialOptionIsFiledUnderItsRoot() {
        let cache = UserCache()
        let observer = TestObserver()
        observer.observe(cache, \.$currentUser, \.$name, options: .initial) { _ in }
        #expect(observer.isObserving(cache))
        observer.stopObserving(cache)
        #expect(!observer.isObserving(cache))
    }

    @Test func anObservedPathCanBeObservedWithTheInitialOption() {
        let cache = UserCache()
        cache.currentUser = User(name: "Ann")
        let name = ObservedPath(cache, PropertyPath(\UserCache.$currentUser).appending(\.$name))
        let observer = TestObserver()
        let updates = Recording<Update<String?>>()
        observer.observe(name, options: .initial) { updates.append($0) }
        #expect(updates.elements == [Update("Ann", "Ann")])
    }
}

private final class VolumeSettings {
    @ObservableVar var volume = 3
}

private final class AppSession {
    @ObservableVar var user: User?
}

private final class OptionsApp {
    @ObservableVar var session: AppSession?
}

/// Found by an adversarial round: a path that stopped (by hand, or because its root died) took
/// the watches of its own death out, so they never heard of it.
@Suite("Death watches of a stopped path")
struct DeathWatchesOfAStoppedPathTests {
    @Test func aWatchOfAPathThatStoppedIsToldWhenThePathDies() {
        let ann = User(name: "Ann")
        var path: ObservedPath<User, String>? = ObservedPath(ann, PropertyPath(\User.$name))
        let observer = TestObserver()
        let log = Recording<String>()
        observer.observeDeath(of: path!) { log.append("path died") }
        path?.stop()
        #expect(log.elements.isEmpty)
        path = nil
        #expect(log.elements == ["path died"])
    }

    @Test func aWatchOfAPathWhoseRootDiedIsToldWhenThePathDies() {
        var ann: User? = User(name: "Ann")
        var path: ObservedPath<User, String>? = ObservedPath(ann!, PropertyPath(\User.$name))
        let observer = TestObserver()
        let log = Recording<String>()
        observer.observeDeath(of: path!) { log.append("path died") }
        ann = nil
        #expect(log.elements.isEmpty)
        path = nil
        #expect(log.elements == ["path died"])
    }
}
