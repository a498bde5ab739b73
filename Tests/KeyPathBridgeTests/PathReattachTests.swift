import HeraldTestSupport
import KeyPathBridge
import Messaging
import Testing

/// A model whose variable ends every observation as soon as it becomes observed (from its 0→1
/// hook), up to a bound that keeps a failing test from spinning forever.
final class Refusing: @unchecked Sendable {
    let value = Var(0)
    let starts = Recording<Int>()

    init() {
        value.whenObservationStateChanges { [weak self] isObserved in
            guard let self, isObserved else { return }
            self.starts.append(1)
            if self.starts.count < 100 { self.value.stopBeingObserved() }
        }
    }
}

/// A value that is not `Equatable`: every set is a change.
struct Settings {
    var level = 1
}

final class Panel {
    @ObservableVar var settings = Settings()
    @ObservableVar var text = ""
}

final class Key: Hashable, @unchecked Sendable {
    static func == (lhs: Key, rhs: Key) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

final class Registry {
    let shared = Var(0)
    subscript(key key: Key) -> Var<Int> { shared }
}

/// Found by the second review and adversarial pass of issue 10's engine; each failed before its
/// fix.
@Suite("Paths observing a property again")
struct PathReattachTests {
    @Test func aPropertyThatRefusesObserversIsNotObservedAgainForever() {
        let model = Refusing()
        let path = ObservedPath(model, PropertyPath(\Refusing.value))
        #expect(model.starts.count <= 2, "observed \(model.starts.count) times")
        #expect(!path.isActive)  // it can observe nothing of its root: over
    }

    @Test func observingTheSameEndPropertyAgainSendsNothing() {
        let panel = Panel()
        let pulses = PulseHolder()
        let observer = TestObserver()
        let received = Recording<String>()
        observer.observe(panel, \.$settings) { received.append("settings \($0?.level ?? 0)") }
        observer.observe(pulses, \.pulse) { received.append("pulse \($0 ?? 0)") }

        panel.$settings.stopBeingObserved()  // observed again; nothing changed
        pulses.pulse.stopBeingObserved()

        #expect(received.elements.isEmpty)
        panel.settings = Settings(level: 2)
        #expect(received.elements == ["settings 2"])
    }

    @Test func twoPathsThatStopEachOthersPropertiesDoNotLoop() {
        let a = Panel()
        let b = Panel()
        let observer = TestObserver()
        let runs = Recording<Int>()
        observer.observe(a, \.$settings) { _ in
            runs.append(1)
            if runs.count < 1_000 { b.$settings.stopBeingObserved() }
        }
        observer.observe(b, \.$settings) { _ in
            runs.append(2)
            if runs.count < 1_000 { a.$settings.stopBeingObserved() }
        }
        a.settings = Settings(level: 2)
        #expect(runs.elements == [1])
    }

    @Test func aBindingDoesNotSyncAgainWhenItsTargetIsObservedAgain() {
        let source = Panel()
        let target = Panel()
        source.text = "from source"
        let binding = bind(source, PropertyPath(\Panel.$text), to: target, PropertyPath(\.$text)) {
            $0
        }
        target.text = "local override"
        target.$text.stopBeingObserved()
        #expect(target.text == "local override")
        source.text = "next"
        #expect(target.text == "next")
        binding.unbind()
    }

    @Test func theOtherObserversOfAPathAreNotTheAdHocOwners() {
        let cache = UserCache()
        cache.currentUser = User(name: "Ann")
        let a = TestObserver()
        let c = TestObserver()
        let path = a.observe(cache, \.$currentUser, \.$name) { _ in }
        a.stopObserving(cache)  // ends a's ad hoc observation; the test holds the path
        let got = Recording<String?>()
        c.observe(path) { got.append($0.new) }

        #expect(!a.isObserving(path))
        a.stopObserving(path)  // a has nothing to stop
        cache.currentUser?.name = "Annie"
        #expect(got.elements == ["Annie"])
        #expect(c.isObserving(path) && path.isActive)
    }

    @Test func observeMessagesIsFreedByStopObservingItsPath() {
        let document = Document("doc")
        let workspace = Workspace(pinned: document)
        let observer = TestObserver()
        weak var weakPath: ObservedPath<Workspace, Document>?
        do {
            weakPath = observer.observeMessages(of: workspace, \.$pinned) { _ in }
        }
        #expect(weakPath != nil)
        observer.stopObserving(weakPath)
        #expect(weakPath == nil)
        #expect(!document.isObserved)
    }

    @Test func observeMessagesTakesAPathWhoseEndIsOptional() {
        let app = App()
        let workspace = Workspace(pinned: Document("pinned"))
        app.workspace = workspace
        let observer = TestObserver()
        let received = Recording<String>()
        let path = PropertyPath(\App.$workspace).appending(\.$currentDocument)
        observer.observeMessages(of: app, path) { received.append($0) }
        let current = Document("current")
        workspace.currentDocument = current
        current.send("hello")
        #expect(received.elements == ["hello"])
    }

    /// Docs/KeyPathBridge.md: a property that "refuses observers (ends them from its 0→1
    /// hook), is not observed again". The dispatcher's receiver restarts it each time it is
    /// ended from the dictionary's side, with no such check: restarting makes the dictionary
    /// observed (0→1), its hook ends the dispatcher, which is restarted… Uncapped, the first
    /// `observe` of a key never returns (the hook is called forever); here the hook gives up
    /// after 1,000 refusals.
    @Test func aDictionaryThatRefusesObserversIsNotObservedAgainAndAgain() {
        let model = CollectionsModel()
        let words = model.words
        let calls = Recording<Bool>()
        words.whenObservationStateChanges { isObserved in
            calls.append(isObserved)
            if isObserved, calls.count < 1_000 { words.stopBeingObserved() }
        }
        let observer = TestObserver()
        observer.observe(model, PropertyPath(\CollectionsModel.words).appendingValue(forKey: "k")) {
            _ in
        }
        #expect(calls.count <= 4)
    }

    /// Docs/KeyPathBridge.md: observing the same property again "sends nothing and tells no
    /// binding" (PathReattachTests checks it for a variable). A collection part's link has no
    /// identity, so the wiring takes the re-attached part for another end property and calls
    /// the binding's sync: a one-way binding overwrites the target's own value when the array
    /// merely stops being observed.
    @Test func aBindingDoesNotSyncAgainWhenItsIndexFollowingTargetIsObservedAgain() {
        let source = CollectionsModel()
        source.text = "7"
        let target = CollectionsModel()
        target.items.append(0)
        let binding = bind(
            source, PropertyPath(\CollectionsModel.$text),
            to: target, PropertyPath(\CollectionsModel.items).appendingElement(at: 0)
        ) { Int($0) ?? 0 }
        #expect(target.items[0] == 7)
        target.items[0] = 42  // one way: the source does not follow, the binding stays quiet

        target.items.stopBeingObserved()

        #expect(target.items[0] == 42)
        binding.unbind()
    }
}

/// The component-name cache is not keyed by key path values.
@Suite("Component names")
struct ComponentNameTests {
    @Test func theNameCacheKeepsNoKeyPathArgumentAlive() {
        weak var weakKey: Key?
        do {
            let key = Key()
            weakKey = key
            _ = ObservedPath(Registry(), PropertyPath(\Registry.[key: key]))
        }
        #expect(weakKey == nil)
    }
}

// In the serialized "String paths" suite, which owns the global PathDiagnostics handler.
extension StringPathTests {
    /// A path that observes nothing of its root (a computed property that returns a new `Var`
    /// each time; a string path whose first name misfits) can never change nor hear of its
    /// root's death: it ends, and its ad hoc observation is freed.
    @Test func aPathThatCannotObserveItsRootEndsAndIsFreed() throws {
        var fresh: Fresh? = Fresh()  // `temp` is a new Var each time: it dies at once
        var user: User? = User(name: "Ann")
        let observer = TestObserver()
        weak var computed: ObservedPath<Fresh, Int>?
        weak var misfit: ObservedPath<User, Any>?
        let reports = Recording<PathError>()
        PathDiagnostics.setHandler { reports.append($0) }
        defer { PathDiagnostics.setHandler(nil) }
        do {
            computed = observer.observe(fresh!, \.temp) { _ in }
            misfit = observer.observe(user!, try PropertyPath<User, Any>("nosuch")) { _ in }
        }
        #expect(computed == nil && misfit == nil)
        #expect(!observer.isObserving(fresh!) && !observer.isObserving(user!))
        #expect(reports.count == 1)
        fresh = nil
        user = nil
    }
}
