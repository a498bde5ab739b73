import Foundation
import HeraldTestSupport
import KeyPathBridge
import Observation
import Testing

// Models from Swift's Observation module, mixed with Herald variables.
@Observable final class Profile {
    var name: String
    var address: PostalAddress?

    init(name: String, address: PostalAddress? = nil) {
        self.name = name
        self.address = address
    }
}

@Observable final class PostalAddress {
    var zipCode: String
    var street: String?

    init(zipCode: String, street: String? = nil) {
        self.zipCode = zipCode
        self.street = street
    }
}

final class Session {
    @ObservableVar var profile: Profile?
}

/// An `Observable` class written by hand, to count how often its property is read.
final class CountingModel: Observable {
    private let registrar = ObservationRegistrar()
    private var storedName = ""
    let getterCalls = Recording<Void>()

    var name: String {
        get {
            getterCalls.append(())
            registrar.access(self, keyPath: \.name)
            return storedName
        }
        set {
            registrar.withMutation(of: self, keyPath: \.name) { storedName = newValue }
        }
    }
}

final class Holder {
    @ObservableVar var model: CountingModel?
}

/// An `Observable` class whose setter can be paused between Observation's `onChange` (which runs
/// first) and storing the value, to act in that window from another thread.
final class PausingModel: Observable, @unchecked Sendable {
    private let registrar = ObservationRegistrar()
    private let lock = NSLock()
    private var storedName = "A"
    private var pause: (() -> Void)?

    var name: String {
        get {
            registrar.access(self, keyPath: \.name)
            return lock.withLock { storedName }
        }
        set {
            registrar.withMutation(of: self, keyPath: \.name) {
                lock.withLock { pause }?()
                lock.withLock { storedName = newValue }
            }
        }
    }

    /// Makes the next set call `pause` once, after `onChange`, before storing the value.
    func pauseNextSet(_ pause: @escaping () -> Void) {
        lock.withLock {
            self.pause = { [weak self] in
                self?.lock.withLock { self?.pause = nil }
                pause()
            }
        }
    }
}

final class PausingHolder: @unchecked Sendable {
    @ObservableVar var model: PausingModel?
}

@Suite("Bridge to Swift's Observation")
struct ObservationBridgeTests {
    @Test func aTrackedPropertyDeliversItsNewValueAfterTheSet() {
        let scheduler = TestMessageScheduler()
        let ann = Profile(name: "Ann")
        let name = ObservedPath(ann, PropertyPath(tracking: \Profile.name, on: scheduler))
        let observer = TestObserver()
        let seen = Recording<(update: String?, read: String)>()
        observer.observe(name) { update in seen.append((update.new, ann.name)) }

        ann.name = "Anne"
        #expect(seen.count == 0)  // Observation tells before the set: delivery waits for a turn
        scheduler.flush()

        #expect(seen.elements.map(\.update) == ["Anne"])
        #expect(seen.elements.map(\.read) == ["Anne"])  // the handler sees the new value
        #expect(name.value == "Anne")
    }

    @Test func trackingIsReArmedSoEveryLaterChangeArrives() {
        let scheduler = TestMessageScheduler()
        let ann = Profile(name: "Ann")
        let observer = TestObserver()
        let names = Recording<String?>()
        observer.observe(ann, PropertyPath(tracking: \.name, on: scheduler)) { names.append($0) }

        for next in ["B", "C", "D"] {
            ann.name = next
            scheduler.flush()
        }

        #expect(names.elements == ["B", "C", "D"])
    }

    @Test func changesWithinOneTurnArriveAsTheLatestValue() {
        let scheduler = TestMessageScheduler()
        let ann = Profile(name: "Ann")
        let observer = TestObserver()
        let names = Recording<String?>()
        observer.observe(ann, PropertyPath(tracking: \.name, on: scheduler)) { names.append($0) }

        ann.name = "B"
        ann.name = "C"
        scheduler.flush()
        ann.name = "D"
        ann.name = "Ann"  // back where it started within a turn: not a change
        scheduler.flush()

        #expect(names.elements == ["C", "Ann"])
    }

    @Test func aPathMixesVariablesAndTrackedPropertiesAndReWires() {
        let scheduler = TestMessageScheduler()
        let session = Session()
        let observer = TestObserver()
        let zips = Recording<String?>()
        let path = PropertyPath(\Session.$profile)
            .appending(tracking: \.address, on: scheduler)
            .appending(tracking: \.zipCode, on: scheduler)
        observer.observe(session, path) { zips.append($0) }

        let home = PostalAddress(zipCode: "10115")
        let ann = Profile(name: "Ann", address: home)
        session.profile = ann  // a variable: re-wires at once
        home.zipCode = "10117"
        scheduler.flush()
        let work = PostalAddress(zipCode: "20095")
        ann.address = work  // a tracked intermediate: re-wires on the next turn
        scheduler.flush()
        home.zipCode = "99999"  // no longer on the path
        work.zipCode = "20097"
        scheduler.flush()

        #expect(zips.elements == ["10115", "10117", "20095", "20097"])
    }

    @Test func aTrackedIntermediateThatTurnsNilMakesThePathUnreachable() {
        let scheduler = TestMessageScheduler()
        let ann = Profile(name: "Ann", address: PostalAddress(zipCode: "1", street: nil))
        let street = ObservedPath(
            ann,
            PropertyPath(tracking: \Profile.address, on: scheduler)
                .appending(tracking: \.street, on: scheduler))
        let observer = TestObserver()
        let values = Recording<String??>()
        observer.observe(street) { values.append($0.new) }
        #expect(street.value == .some(nil))  // reachable, no street

        ann.address?.street = "Main St"
        scheduler.flush()
        ann.address = nil
        scheduler.flush()

        #expect(values.elements == [.some("Main St"), nil])
        #expect(!street.isReachable)
    }

    @Test func trackedChangesAreAuthoredByTheObject() {
        let scheduler = TestMessageScheduler()
        let ann = Profile(name: "Ann")
        let name = ObservedPath(ann, PropertyPath(tracking: \Profile.name, on: scheduler))
        let observer = RecordingObserver<Update<String?>>()
        observer.record(name)

        ann.name = "Anne"
        scheduler.flush()

        #expect(observer.authors.elements.count == 1)
        #expect(observer.authors.elements.first === ann)
    }

    @Test func aBindingWritesToATrackedPropertyWithoutAFeedbackLoop() {
        let scheduler = TestMessageScheduler()
        let field = Var("Ann")
        let ann = Profile(name: "")
        let binding = bindTwoWay(
            field, PropertyPath(\Variable<String>.self), ann,
            PropertyPath(tracking: \.name, on: scheduler))
        #expect(ann.name == "Ann")  // synced at once

        field.value = "Anne"
        #expect(ann.name == "Anne")
        scheduler.flush()  // the tracked change arrives, authored by the binding: ignored
        ann.name = "Annie"
        scheduler.flush()

        #expect(field.value == "Annie")
        #expect(scheduler.pendingCount == 0)
        withExtendedLifetime(binding) {}
    }

    @Test func aTrackedPathHoldsNeitherItsObjectsNorItsScheduler() {
        let profile = Profile(name: "Ann", address: PostalAddress(zipCode: "1"))
        let address = WeakBox(profile.address!)
        var scheduler: TestMessageScheduler? = TestMessageScheduler()
        let weakScheduler = WeakBox(scheduler!)
        var path: ObservedPath<Profile, String>? = ObservedPath(
            profile,
            PropertyPath(tracking: \Profile.address, on: scheduler!)
                .appending(tracking: \.zipCode, on: scheduler!))
        let weakPath = WeakBox(path!)
        profile.address = nil  // a change is scheduled
        scheduler?.flush()
        #expect(address.isFreed)

        path = nil
        scheduler = nil
        #expect(weakPath.isFreed)
        #expect(weakScheduler.isFreed)  // the path let go of everything it held
    }

    @Test func aBindingIsCreditedOnlyWithTheValueItWrote() {
        let scheduler = TestMessageScheduler()
        let field = Var("Ann")
        let ann = Profile(name: "Ann")
        let binding = bindTwoWay(
            field, PropertyPath(\Variable<String>.self), ann,
            PropertyPath(tracking: \.name, on: scheduler))

        field.value = "Anne"  // the binding writes "Anne"
        ann.name = "Bob"  // someone else changes it before the delivery
        scheduler.flush()

        #expect(ann.name == "Bob")
        #expect(field.value == "Bob")  // both sides end equal
        withExtendedLifetime(binding) {}
    }

    @Test func aTrackedPropertyOfTheRootCanBeObservedCoalesced() {
        let scheduler = TestMessageScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let ann = Profile(name: "Ann")
        let observer = TestObserver()
        let runs = Recording<String>()
        observer.observeCoalesced(ann, PropertyPath(tracking: \.name, on: scheduler), in: coalescer)
        { _, profile in
            runs.append(profile.name)
        }

        ann.name = "Anne"
        scheduler.flush()

        #expect(runs.elements == ["Anne"])
    }

    @Test func reWiringBackAndForthArmsOneTrackingPerProperty() {
        let scheduler = TestMessageScheduler()
        let holder = Holder()
        let first = CountingModel()
        let second = CountingModel()
        let observer = TestObserver()
        let names = Recording<String?>()
        let path = PropertyPath(\Holder.$model).appending(tracking: \.name, on: scheduler)
        observer.observe(holder, path) { names.append($0) }
        for _ in 0..<500 {
            holder.model = first
            holder.model = second
        }
        holder.model = first

        // Each of the 501 attaches reads the name once, for the path's end value; the first of
        // those reads armed the tracking, and no later attach armed it again (no registration
        // piles up in the registrar). One more read looked for the property's name, for logs.
        #expect(first.getterCalls.count == 501 + 1)
        scheduler.flush()  // the check that followed arming: nothing changed
        #expect(names.elements == [""])  // both models' names are equal: one update, at first
        first.name = "Anne"
        #expect(scheduler.pendingCount == 1)  // one delivery, for the one link attached now
        scheduler.flush()
        #expect(names.elements.last == "Anne")
    }

    @Test func aPathReWiredWhileTheModelIsBeingSetElsewhereGetsTheNewValue() {
        let scheduler = TestMessageScheduler()
        let holder = PausingHolder()
        let model = PausingModel()
        // Another path keeps the property's tracking alive.
        let other = ObservedPath(model, PropertyPath(tracking: \PausingModel.name, on: scheduler))
        let path = ObservedPath(
            holder, PropertyPath(\PausingHolder.$model).appending(tracking: \.name, on: scheduler))
        scheduler.flush()

        let inWindow = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        model.pauseNextSet {
            inWindow.signal()
            resume.wait()
        }
        let setterDone = DispatchSemaphore(value: 0)
        Thread {
            model.name = "B"
            setterDone.signal()
        }.start()
        inWindow.wait()  // onChange came; "B" is not stored yet
        holder.model = model  // re-wires now: the new link reads "A"
        resume.signal()
        setterDone.wait()
        scheduler.flush()

        #expect(other.value == "B")
        #expect(path.value == "B")  // the link attached in the window got a delivery too
    }

    @Test func anImmediateSchedulerIsRefused() async {
        await #expect(processExitsWith: .failure) {
            _ = PropertyPath(tracking: \Profile.name, on: .immediate)
        }
    }

    @Test func aChangeScheduledBeforeThePathStoppedDeliversNothing() {
        let scheduler = TestMessageScheduler()
        let ann = Profile(name: "Ann")
        let name = ObservedPath(ann, PropertyPath(tracking: \Profile.name, on: scheduler))
        let observer = TestObserver()
        let names = Recording<String?>()
        observer.observe(name) { names.append($0.new) }

        ann.name = "Anne"
        name.stop()
        scheduler.flush()

        #expect(names.count == 0)
    }

    @Test func inspectorWatchesShowTrackedProperties() {
        let scheduler = TestMessageScheduler()
        let ann = Profile(name: "Ann", address: PostalAddress(zipCode: "1"))
        let lines = Recording<String>()
        Inspector(ann).breakOnChange(
            PropertyPath(tracking: \.address, on: scheduler).appending(
                tracking: \.zipCode, on: scheduler)
        ) { lines.append($0) }

        ann.address?.zipCode = "2"
        scheduler.flush()

        // An object-valued property is named; a value's name cannot be found (Observation's key
        // paths lead to computed properties), so its type stands in.
        #expect(
            lines.elements.first?.hasPrefix(
                "Herald: Profile.address.<String> changed: \"1\" → \"2\"") == true)
    }

    @Test func aTrackedPropertyThatHeldNilAtFirstIsNamedOnceItHoldsAnObject() {
        let scheduler = TestMessageScheduler()
        let ann = Profile(name: "Ann")  // no address yet
        let lines = Recording<String>()
        Inspector(ann).breakOnChange(
            PropertyPath(tracking: \.address, on: scheduler).appending(
                tracking: \.zipCode, on: scheduler)
        ) { lines.append($0) }

        ann.address = PostalAddress(zipCode: "1")
        scheduler.flush()

        #expect(
            lines.elements.first?.hasPrefix(
                "Herald: Profile.address.<String> changed: unreachable → \"1\"") == true)
    }

    @Test func aStringPathNamingAnObservableClassPropertyIsAnErrorPointingToTrackedPaths() {
        let ann = Profile(name: "Ann")
        #expect {
            _ = try ObservedPath(ann, path: "name")
        } throws: { error in
            let description = "\(error)"
            return description.contains("Profile has no observable property \"name\"")
                && description.contains("PropertyPath(tracking:)")
        }
    }
}
