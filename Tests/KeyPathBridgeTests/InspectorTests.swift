import HeraldTestSupport
import KeyPathBridge
import Testing

@Suite("Introspection and debugging")
struct InspectorTests {
    @Test func anObjectListsItsObservablePropertiesWithTheirObservationCounts() {
        let ann = User(name: "Ann", address: Address(zipCode: "10115"))
        let cache = UserCache()
        cache.currentUser = ann
        let first = TestObserver()
        let second = TestObserver()
        first.observe(ann.$name) { _ in }
        second.observe(ann.$name) { _ in }
        second.observe(cache, \.$currentUser, \.$address, \.$zipCode) { _ in }

        let properties = Inspector(ann).properties

        #expect(properties.map(\.name) == ["name", "address", "workAddress"])
        #expect(properties.map(\.observationCount) == [2, 1, 0])
        #expect(properties.map(\.isObserved) == [true, true, false])
    }

    @Test func eachObservationIsListedWithItsDeclarationSite() {
        let ann = User(name: "Ann")
        let observer = TestObserver()
        observer.observe(ann.$name) { _ in }
        let line = #line - 1

        let name = Inspector(ann).properties.first { $0.name == "name" }

        #expect(name?.observationSites.map(\.line) == [UInt32(line)])
        #expect(name?.observationSites.first?.fileID == "KeyPathBridgeTests/InspectorTests.swift")
    }

    @Test func theReportIsAReadableDumpOfEveryObserverWithItsDeclarationSite() {
        let ann = User(name: "Ann")
        let observer = TestObserver()
        observer.observe(ann.$name) { _ in }
        let line = #line - 1

        let report = Inspector(ann).report

        #expect(report.hasPrefix("User (0x"))
        #expect(
            report.contains(
                "  name: 1 observation\n    KeyPathBridgeTests/InspectorTests.swift:\(line)"))
        #expect(report.contains("  address: not observed"))
    }

    @Test func aPropertyHasAnObservationStateHookByName() throws {
        let ann = User(name: "Ann")
        let states = Recording<Bool>()
        try Inspector(ann).whenObservationStateChanges(of: "name") { states.append($0) }
        let observer = TestObserver()

        observer.observe(ann.$name) { _ in }  // 0 → 1
        observer.observe(ann.$name) { _ in }  // 1 → 2: no call
        observer.stopObserving()  // 2 → 0

        #expect(states.elements == [true, false])
    }

    @Test func anUnknownPropertyNameIsAnErrorNamingItAndTheType() {
        let ann = User(name: "Ann")
        #expect(
            throws: PathError.unknownProperty(
                "nmae", type: "User", path: "nmae", known: ["name", "address", "workAddress"])
        ) {
            try Inspector(ann).observationCount(of: "nmae")
        }
        #expect(throws: PathError.self) { try Inspector(ann).trigger("nmae") }
    }

    @Test func observationCountByName() throws {
        let ann = User(name: "Ann")
        let observer = TestObserver()
        observer.observe(ann.$address) { _ in }
        #expect(try Inspector(ann).observationCount(of: "address") == 1)
        #expect(try Inspector(ann).observationCount(of: "name") == 0)
    }

    @Test func triggeringAPropertySendsItsCurrentValueToItsObservers() throws {
        let ann = User(name: "Ann")
        let observer = RecordingObserver<Update<String>>()
        observer.record(ann.$name)

        try Inspector(ann).trigger("name")
        Inspector(ann).trigger(\.$name)

        #expect(observer.messages.elements == [Update("Ann", "Ann"), Update("Ann", "Ann")])
        #expect(observer.authors.elements.allSatisfy { $0 === Inspector<User>.triggerAuthor })
    }

    @Test func triggeringAPropertyReachesThePathsThroughIt() {
        let cache = UserCache()
        cache.currentUser = User(name: "Ann", address: Address(zipCode: "10115"))
        let observer = TestObserver()
        let zips = Recording<String?>()
        observer.observe(cache, \.$currentUser, \.$address, \.$zipCode) { zips.append($0) }
        let addresses = Recording<String?>()
        observer.observe(cache, \.$currentUser, \.$address) { addresses.append($0??.zipCode) }

        Inspector(cache.currentUser!.address!).trigger(\.$zipCode)  // the end of the first path
        Inspector(cache.currentUser!).trigger(\.$address)  // an intermediate of the first path

        #expect(zips.elements == ["10115", "10115"])
        #expect(addresses.elements == ["10115"])
    }

    @Test func breakOnChangeLogsEveryChangeOfThePathFollowingReWiring() {
        let cache = UserCache()
        let lines = Recording<String>()
        let watch = Inspector(cache).breakOnChange(
            PropertyPath(\.$currentUser).appending(\.$address).appending(\.$zipCode)
        ) { lines.append($0) }
        let line = #line - 3

        let ann = User(name: "Ann", address: Address(zipCode: "10115"))
        cache.currentUser = ann
        ann.address?.zipCode = "10117"
        ann.address = nil

        let site = "InspectorTests.swift:\(line)"
        #expect(
            lines.elements == [
                "Herald: UserCache.currentUser.address.zipCode changed: unreachable → \"10115\" "
                    + "(by Variable<Optional<User>>; watched at KeyPathBridgeTests/\(site))",
                "Herald: UserCache.currentUser.address.zipCode changed: \"10115\" → \"10117\" "
                    + "(by Variable<String>; watched at KeyPathBridgeTests/\(site))",
                "Herald: UserCache.currentUser.address.zipCode changed: \"10117\" → unreachable "
                    + "(by Variable<Optional<Address>>; watched at KeyPathBridgeTests/\(site))",
            ])
        #expect(watch.isActive)
    }

    @Test func aBreakOnChangeWatchLastsAsLongAsTheRootUnlessStopped() {
        let lines = Recording<String>()
        weak var watched: ObservedPath<UserCache, User?>?
        do {
            let cache = UserCache()
            do {
                // Not held by the caller: the watch lives on.
                watched = Inspector(cache).breakOnChange(PropertyPath(\.$currentUser)) {
                    lines.append($0)
                }
            }
            cache.currentUser = User(name: "Ann")
            #expect(lines.count == 1)
            #expect(watched?.isActive == true)
        }
        // The root died: the path became unreachable (logged), the watch ended and let go.
        #expect(lines.elements.last?.contains("User → unreachable") == true)
        #expect(watched == nil)

        let cache = UserCache()
        let watch = Inspector(cache).breakOnChange(PropertyPath(\.$currentUser)) {
            lines.append($0)
        }
        let weakWatch = WeakBox(watch)
        watch.stop()
        cache.currentUser = User(name: "Bob")
        #expect(lines.count == 2)
        _ = consume watch
        #expect(weakWatch.isFreed)  // stopping released it
    }

    /// A watch set while another root dies — after the root's weak references are gone, before
    /// its path hears of the death (here from the root's `deinit`; in CI it was another thread)
    /// — does not drop the dying root's watch before its last line.
    @Test func aWatchSetWhileAnotherRootDiesKeepsThatRootsLastLine() {
        final class Root {
            @ObservableVar var currentUser: User?
            deinit {
                Inspector(UserCache()).breakOnChange(PropertyPath(\.$currentUser)) { _ in }
            }
        }
        let lines = Recording<String>()
        do {
            let root = Root()
            Inspector(root).breakOnChange(PropertyPath(\.$currentUser)) { lines.append($0) }
            root.currentUser = User(name: "Ann")
        }
        #expect(lines.count == 2)
        #expect(lines.elements.last?.contains("User → unreachable") == true)
    }

    @Test func theLogNamesPropertiesOfEveryKind() {
        let root = Node()  // `let` variables: stored properties
        let lines = Recording<String>()
        Inspector(root).breakOnChange(PropertyPath(\.child).appending(\.value)) {
            lines.append($0)
        }
        root.child.value = Node()
        #expect(
            lines.elements.first?.hasPrefix("Herald: Node.child.value changed: unreachable → 0")
                == true)
    }

    @Test func aWatchOnAnUnreachablePathEndsWhenTheRootDies() {
        weak var watched: ObservedPath<UserCache, String>?
        do {
            let cache = UserCache()
            watched = Inspector(cache).breakOnChange(
                PropertyPath(\.$currentUser).appending(\.$name)
            ) { _ in }
            #expect(watched != nil)
        }
        #expect(watched == nil)
    }

    /// Issue 10, item 5: only the real death of the root counts as its death. The root's
    /// property stopping being observed is not: the watch goes on and still logs changes.
    @Test func aWatchGoesOnWhenTheRootsPropertyStopsBeingObserved() {
        let cache = UserCache()
        let lines = Recording<String>()
        weak var watched: ObservedPath<UserCache, String>?
        watched = Inspector(cache).breakOnChange(
            PropertyPath(\.$currentUser).appending(\.$name)
        ) { lines.append($0) }

        cache.$currentUser.stopBeingObserved()

        #expect(watched != nil)
        #expect(watched?.isActive == true)
        cache.currentUser = User(name: "Ann")
        #expect(lines.elements.count == 1)
    }

    @Test func breakOnChangeTakesAStringPath() throws {
        let cache = UserCache()
        let lines = Recording<String>()
        try Inspector(cache).breakOnChange("currentUser.name") { lines.append($0) }
        cache.currentUser = User(name: "Ann")

        #expect(
            lines.elements.first?.hasPrefix(
                "Herald: UserCache.currentUser.name changed: unreachable → \"Ann\"") == true)
        #expect(throws: PathError.self) { try Inspector(cache).breakOnChange("currentUser.nmae") }
    }
}
