import Foundation
import HeraldTestSupport
import KeyPathBridge
import Testing

/// A model whose observable property is given from outside (shared with others).
final class SharedDoc {
    let title: Var<String>
    init(_ title: Var<String>) { self.title = title }
}

/// A model whose key path leads through a computed property returning a fresh Var.
final class Fresh: @unchecked Sendable {
    var temp: Var<Int> { Var(1) }
}

/// A property whose rule says every send is a change (an event-like property).
final class Pulse: ObservableProperty, @unchecked Sendable {
    let messenger = Messenger<Update<Int>>()
    var value: Int { 1 }
    func isChange(from old: Int, to new: Int) -> Bool { true }
    func fire() { send(Update(1, 1)) }
}

final class PulseHolder {
    let pulse = Pulse()
}

/// Found by the adversarial tests of the engine change (issue 10); each failed before its fix.
@Suite("Path edge cases")
struct PathEdgeCaseTests {
    @Test func rootDiesButItsSharedPropertyLives() {
        let shared = Var("a")
        var doc: SharedDoc? = SharedDoc(shared)
        let observer = TestObserver()
        let got = Recording<String?>()
        weak var weakPath: ObservedPath<SharedDoc, String>?
        do {
            weakPath = observer.observe(doc!, \.title) { got.append($0) }
        }
        doc = nil
        shared.value = "b"
        #expect(got.elements == [nil], "root died: one last update to unreachable, then nothing")
        #expect(weakPath == nil, "path should be freed once the root is gone")
        #expect(!shared.isObserved)
    }

    @Test(.timeLimit(.minutes(1))) func computedPropertyReturningAFreshVar() {
        let fresh = Fresh()
        let finished = finishes(within: 5) {
            let path = ObservedPath(fresh, PropertyPath(\Fresh.temp))
            _ = path.value
        }
        #expect(finished, "creating a path through a computed property hangs")
    }

    @Test func intermediatePropertyStopsBeingObserved() {
        let cache = UserCache()
        let ann = User(name: "Ann")
        cache.currentUser = ann
        let path = ObservedPath(cache, PropertyPath(\UserCache.$currentUser).appending(\.$name))
        ann.$name.stopBeingObserved()
        ann.name = "Annie"
        #expect(path.value == "Annie", "the end property's observation was cut; path is stale")
    }

    @Test func aPropertysOwnChangeRuleIsUsedByPaths() {
        let holder = PulseHolder()
        let observer = TestObserver()
        let direct = Recording<Int>()
        let viaPath = Recording<Int?>()
        observer.observe(holder.pulse) { direct.append($0.new) }
        observer.observe(holder, \.pulse) { viaPath.append($0) }
        holder.pulse.fire()
        holder.pulse.fire()
        #expect(direct.count == 2)
        #expect(viaPath.count == 2, "isChange says every send is a change; the path drops them")
    }

    @Test func aTallyRewireWithinToleranceIsNoChange() {
        let league = League()
        let reds = Team("Reds", tally: 30)
        let blues = Team("Blues", tally: 31)
        league.leader = reds
        let observer = TestObserver()
        let got = Recording<Int?>()
        observer.observe(league, \.$leader, \.tally) { got.append($0) }
        league.leader = blues
        #expect(got.elements == [], "31 vs 30 is no change by the tally's rule")
    }

    @Test func stringPathTellsReachableNilFromUnreachable() throws {
        let ann = User(name: "Ann", address: Address(zipCode: "1", street: nil))
        let observer = TestObserver()
        let typed = Recording<String>()
        let text = Recording<String>()
        let typedPath = observer.observe(ann, \.$address, \.$street) {
            typed.append(String(describing: $0))
        }
        let textPath = try observer.observe(ann, path: "address.street") {
            text.append(String(describing: $0))
        }
        #expect(typedPath.isReachable && textPath.isReachable)
        ann.address = nil
        #expect(!typedPath.isReachable)
        #expect(!textPath.isReachable, "string path still claims reachable")
        #expect(typed.count == 1)
        #expect(text.count == typed.count, "typed: \(typed.elements) text: \(text.elements)")
    }

    final class Lazy {
        lazy var counter = Var(0)
    }
}
