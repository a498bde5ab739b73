import HeraldTestSupport
import KeyPathBridge
import Testing

/// Two teams, each with a `Tally` (a property with a change rule of its own: a change is a
/// difference of at least 10).
final class Fixture {
    @ObservableVar var home: Team?
    @ObservableVar var away: Team?

    init(home: Team?, away: Team? = nil) {
        self.home = home
        self.away = away
    }
}

final class Season {
    @ObservableVar var fixture: Fixture?
}

/// Adversarial tests of wildcards in the middle of a path (commit 767f204). Each failed before
/// its fix.
@Suite("Fan-out paths, adversarial")
struct FanOutAdversarialTests {
    /// A path that observes nothing of its root ends at once (as
    /// `aPropertyThatRefusesObserversIsNotObservedAgainForever` shows for a plain path). A
    /// fan-out at the root whose every branch refuses observers observes nothing of its root
    /// either, but stays active.
    @Test func aFanOutAtTheRootWhoseOnlyPropertyRefusesObserversEnds() throws {
        let model = Refusing()
        let path = try ObservedPath(model, path: "*.anything")
        #expect(model.starts.count <= 2, "observed \(model.starts.count) times")
        #expect(!path.isActive)  // it can observe nothing of its root: over
    }

    /// The same, as a lifetime: the root dies, but nothing tells the path (no branch observes
    /// anything), so the ad hoc observation and its path are never freed and never get their
    /// last update to unreachable.
    @Test func aFanOutPathWhoseBranchesAllRefusedIsFreedWhenItsRootDies() throws {
        let observer = TestObserver()
        weak var weakPath: ObservedPath<Refusing, Any>?
        weak var weakModel: Refusing?
        do {
            let model = Refusing()
            weakModel = model
            weakPath = try observer.observe(model, path: "*.anything") { _ in }
        }
        #expect(weakModel == nil)
        #expect(weakPath == nil)
    }

    /// Observing the same property again sends nothing (PathWiring.observationEnded's
    /// promise). When the property before a wildcard stops being observed and is observed
    /// again, the fan-out is rebuilt and the first reachable branch's value is published, as if
    /// the object had been replaced: a spurious update although nothing changed.
    @Test func observingThePropertyBeforeTheWildcardAgainSendsNothing() throws {
        let cache = UserCache()
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        ann.workAddress = Address(zipCode: "2")
        cache.currentUser = ann
        let observer = TestObserver()
        let zips = Recording<String?>()
        try observer.observe(cache, path: "currentUser.*.zipCode") { zips.append($0 as? String) }

        ann.workAddress?.zipCode = "3"  // the value sent last is now the work address's
        cache.$currentUser.stopBeingObserved()  // observed again; nothing changed

        #expect(zips.elements == ["3"])
    }

    /// A change made while a fan-out is being wired (here by a property's 0→1 hook, user code
    /// the wiring runs; a change from another thread at that moment does the same) is counted
    /// twice: the fan-out's starting value already includes it (it reads each branch's latest
    /// end value after all branches started), and the branch's queued change is then published
    /// again, forced. Two updates with equal values.
    @Test func aChangeMadeWhileAFanOutIsWiredIsSentOnce() throws {
        let cache = UserCache()
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        let work = Address(zipCode: "2")
        ann.workAddress = work
        let observer = TestObserver()
        let updates = Recording<String>()
        let path = try ObservedPath(cache, path: "currentUser.*.zipCode")
        observer.observe(path) { update in
            updates.append("\(update.old as? String ?? "-")→\(update.new as? String ?? "-")")
        }
        var changed = false
        work.$zipCode.whenObservationStateChanges { [weak ann] isObserved in
            guard isObserved, !changed else { return }
            changed = true
            ann?.address?.zipCode = "5"  // the address branch is wired already
        }

        cache.currentUser = ann

        // Either "-→1", "1→5" (the change after the start) or "-→5" alone; never 5 twice.
        #expect(
            updates.elements == ["-→1", "1→5"] || updates.elements == ["-→5"],
            "\(updates.elements)")
        #expect(path.value as? String == "5")
    }

    /// Replacing an object before the wildcard "sends the first reachable branch's end value if
    /// it differs from the value sent last" — but not by the end property's own rule, which a
    /// plain path (and each branch) uses: `Tally` says 10 → 13 is no change, and a plain path
    /// sends nothing; the fan-out sends 13.
    @Test func replacingTheObjectBeforeTheWildcardComparesByTheEndPropertysOwnRule() throws {
        let season = Season()
        season.fixture = Fixture(home: Team("A", tally: 10))
        let observer = TestObserver()
        let plain = Recording<Int?>()
        let fannedOut = Recording<Int?>()
        try observer.observe(season, path: "fixture.home.tally") { plain.append($0 as? Int) }
        try observer.observe(season, path: "fixture.*.tally") { fannedOut.append($0 as? Int) }

        season.fixture = Fixture(home: Team("B", tally: 13))  // no change, by Tally's rule

        #expect(plain.elements.isEmpty)
        #expect(fannedOut.elements == plain.elements)
    }
}

extension FanOutAdversarialTests {
    /// A wildcard followed by a name that no branch has (a typo) is an error, never silent
    /// (when no object the branches reach has it, but some object does not).
    @Test func aNameThatNoBranchOfTheWildcardHasIsAnError() {
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        ann.workAddress = Address(zipCode: "2")
        #expect(throws: PathError.self) { try ObservedPath(ann, path: "*.zipCod") }
        // With nothing to check it on yet (no address), there is nothing to say.
        #expect(throws: Never.self) { try ObservedPath(User(name: "Bob"), path: "*.zipCod") }
    }

    /// A plain path lets go of an object replaced along it, as a fan-out does before its
    /// wildcard: the old user (and through the old branches' links nothing else, as they
    /// ended) is not kept while the path runs.
    @Test(arguments: ["currentUser.address.zipCode", "currentUser.*.zipCode"])
    func anObjectReplacedAlongAPathIsFreed(path: String) throws {
        let cache = UserCache()
        weak var oldUser: User?
        do {
            let ann = User(name: "Ann", address: Address(zipCode: "1"))
            oldUser = ann
            cache.currentUser = ann
        }
        let observer = TestObserver()
        try observer.observe(cache, path: path) { _ in }
        observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) { _ in }

        cache.currentUser = User(name: "Bob", address: Address(zipCode: "2"))

        #expect(oldUser == nil)
    }

    /// "A path holds its objects weakly": replacing the object in a branch lets go of the old
    /// one. It is kept alive for as long as the path runs: the branch's first link (a
    /// `PropertyLink`) keeps its starting value and next object in `started`, strongly. (The
    /// cause predates the fan-out — a plain path keeps the first object it reached behind each
    /// property the same way — but every branch inherits it.)
    @Test func anObjectReplacedInABranchIsFreed() throws {
        let ann = User(name: "Ann", address: Address(zipCode: "1"))
        weak let oldAddress = ann.address
        let observer = TestObserver()
        try observer.observe(ann, path: "*.zipCode") { _ in }

        ann.address = Address(zipCode: "3")

        #expect(oldAddress == nil)
    }
}
