import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import Messaging

/// What one thread keeps for dependency tracking: found through a C thread-local variable,
/// released through a thread-local storage key's destructor when the thread ends.
@Suite("ThreadContext: each thread's tracking state")
struct ThreadContextTests {
    /// What a test thread saw, filled on it and read after joining it.
    final class Sightings: @unchecked Sendable {
        var before: ThreadContext?
        var made: ThreadContext?
        var again: ThreadContext?
        weak var madeWeakly: ThreadContext?
        /// Set by a deinit that runs while the thread lets its context go.
        var currentDuringRelease: ThreadContext?
        var madeDuringRelease: ObjectIdentifier?
        weak var madeDuringReleaseWeakly: ThreadContext?
        var originalIdentity: ObjectIdentifier?
    }

    /// Work whose deinit uses this thread's context: it runs while the thread's context is
    /// being released, at the thread's end.
    final class UsesContextWhenFreed: PropagationWork {
        let sightings: Sightings
        init(_ sightings: Sightings) { self.sightings = sightings }
        func propagate() {}
        deinit {
            sightings.currentDuringRelease = ThreadContext.current
            let fresh = ThreadContext.forThisThread
            sightings.madeDuringRelease = ObjectIdentifier(fresh)
            sightings.madeDuringReleaseWeakly = fresh
        }
    }

    @Test func aThreadMakesItsOwnContextOnFirstUseAndKeepsIt() {
        let here = ThreadContext.forThisThread
        let sightings = Sightings()
        runOnThreadAndJoin {
            sightings.before = ThreadContext.current
            sightings.made = ThreadContext.forThisThread
            sightings.again = ThreadContext.current
        }
        #expect(sightings.before == nil)
        #expect(sightings.made != nil)
        #expect(sightings.again === sightings.made)
        #expect(sightings.made !== here)
        #expect(ThreadContext.current === here)
    }

    @Test func aThreadsContextIsFreedWhenTheThreadEnds() {
        let sightings = Sightings()
        runOnThreadAndJoin {
            sightings.madeWeakly = ThreadContext.forThisThread
            #expect(sightings.madeWeakly != nil)
        }
        #expect(sightings.madeWeakly == nil)
    }

    /// A deinit that the context's release runs may use Herald on the ending thread: it must
    /// not be handed the context being released, and what it makes is freed too.
    @Test func aDeinitRunByTheContextsReleaseGetsAFreshContextThatIsFreedToo() {
        let sightings = Sightings()
        runOnThreadAndJoin {
            let context = ThreadContext.forThisThread
            sightings.originalIdentity = ObjectIdentifier(context)
            context.queued.append(UsesContextWhenFreed(sightings))
        }
        #expect(sightings.currentDuringRelease == nil)
        #expect(sightings.madeDuringRelease != nil)
        #expect(sightings.madeDuringReleaseWeakly == nil)
    }
}
