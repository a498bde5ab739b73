import HeraldTestSupport
import Observation
import Synchronization
import Testing

@testable import KeyPathBridge

/// The list that keeps `Inspector.breakOnChange`'s watches, each test on a list of its own (the
/// shared one is used by tests running in parallel).
@Suite("Debug watches: the list that keeps them")
struct PathWatchesTests {
    @Test func aWatchWhoseObservableRootDiedEndsWithItsLastLineAtTheNextWatch() {
        let watches = PathWatches()
        let scheduler = TestMessageScheduler()
        let lines = Recording<String?>()
        weak var watched: ObservedPath<Profile, String>?
        do {
            let ann = Profile(name: "Ann")
            let path = ObservedPath(ann, PropertyPath(tracking: \.name, on: scheduler))
            watches.add(path, fileID: #fileID, line: #line) { update, _ in
                lines.append(update.new ?? nil)
            }
            watched = path
        }
        // The path cannot hear of an @Observable root's death: the watch lives on, silent.
        #expect(watched != nil)
        #expect(lines.count == 0)

        let bob = Profile(name: "Bob")
        watches.add(ObservedPath(bob, PropertyPath(tracking: \.name, on: scheduler)))

        #expect(lines.elements == [nil])  // "Ann" → unreachable
        #expect(watched == nil)  // it ended and was let go
    }

    /// A watch whose root dies while another is added — here from a last line that the adding
    /// logs — is let go at once, not held until the adding returns.
    @Test func aWatchThatEndsWhileAnotherIsAddedIsFreedAtOnce() {
        final class State: @unchecked Sendable {
            var cache: UserCache? = UserCache()
            weak var watched: ObservedPath<UserCache, User?>?
            var freedAtOnce: Bool?
        }
        let watches = PathWatches()
        let scheduler = TestMessageScheduler()
        let state = State()
        let cachePath = ObservedPath(state.cache!, PropertyPath(\.$currentUser))
        watches.add(cachePath)
        state.watched = cachePath
        _ = consume cachePath
        do {
            let ann = Profile(name: "Ann")
            watches.add(
                ObservedPath(ann, PropertyPath(tracking: \.name, on: scheduler)), fileID: #fileID,
                line: #line
            ) { _, _ in
                // Ann's last line, logged by the next add: now the cache dies.
                state.cache = nil
                state.freedAtOnce = state.watched == nil
            }
        }
        let bob = Profile(name: "Bob")
        watches.add(ObservedPath(bob, PropertyPath(tracking: \.name, on: scheduler)))

        #expect(state.freedAtOnce == true)
    }

    /// A root whose first property outlives it (shared with another object) cannot tell of its
    /// death either, but its path finds it dead at that property's next change: another watch
    /// leaves it alone, and the change ends it, after its last line.
    @Test func aWatchWhoseRootsFirstPropertyOutlivesItEndsAtThatPropertysNextChange() {
        final class Holder {
            let count: Var<Int>
            init(_ count: Var<Int>) { self.count = count }
        }
        let watches = PathWatches()
        let shared = Var(1)
        let lines = Recording<Int?>()
        weak var watched: ObservedPath<Holder, Int>?
        do {
            let holder = Holder(shared)
            let path = ObservedPath(holder, PropertyPath(\.count))
            watches.add(path, fileID: #fileID, line: #line) { update, _ in
                lines.append(update.new)
            }
            watched = path
        }
        watches.add(ObservedPath(Holder(Var(0)), PropertyPath(\.count)))
        #expect(watched != nil)
        #expect(lines.count == 0)

        shared.value = 2

        #expect(lines.elements == [nil])  // 1 → unreachable
        #expect(watched == nil)
    }

    /// Only a path that tracks an `@Observable` root is ever ended by another watch; a path
    /// rooted at a Herald object ends on the thread where its root dies, and another watch does
    /// not even hold it for a moment (which would free it late, on that watch's thread).
    @Test func onlyAPathThatTracksItsRootIsEndedByAnotherWatch() throws {
        let scheduler = TestMessageScheduler()
        let cache = UserCache()
        let ann = Profile(name: "Ann")

        #expect(ObservedPath(ann, PropertyPath(tracking: \.name, on: scheduler)).tracksItsRoot)
        #expect(!ObservedPath(cache, PropertyPath(\.$currentUser)).tracksItsRoot)
        #expect(try !ObservedPath(cache, path: "currentUser.name").tracksItsRoot)
        // An @Observable root whose first property is a Herald variable, which dies with it.
        let counter = ObservableCounter()
        let counted = ObservedPath(counter, PropertyPath(\.count))
        #expect(counted.isActive && !counted.tracksItsRoot)
    }

    /// The same under threads (a stress test, beside the deterministic one above): while
    /// another thread keeps adding watches, a watch whose Herald root dies is freed before the
    /// release of its root returns. Before the fix, a few rounds in 20,000 freed it late.
    @Test func aWatchWhoseRootDiesIsFreedAtOnceWhileAnotherThreadAddsWatches() {
        let watches = PathWatches()
        let done = Atomic(false)
        let other = JoinableThread {
            while !done.load(ordering: .acquiring) {
                watches.add(ObservedPath(UserCache(), PropertyPath(\.$currentUser)))
            }
        }
        var late = 0
        for _ in 0..<20_000 {
            weak var watched: ObservedPath<UserCache, User?>?
            do {
                let cache = UserCache()
                let path = ObservedPath(cache, PropertyPath(\.$currentUser))
                watches.add(path)
                watched = path
            }
            if watched != nil { late += 1 }
        }
        done.store(true, ordering: .releasing)
        other.join()
        #expect(late == 0)
    }
}

extension PathWatches {
    /// Adds a watch of `path` that logs nothing.
    fileprivate func add<Root, Value>(_ path: ObservedPath<Root, Value>) {
        add(path, fileID: #fileID, line: #line) { _, _ in }
    }
}

/// An `@Observable` class whose first property on a path is a Herald variable: it dies with
/// its object, so the path hears of the death.
@Observable private final class ObservableCounter {
    let count = Var(0)
}
