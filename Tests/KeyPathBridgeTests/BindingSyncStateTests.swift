import Testing

@testable import KeyPathBridge

/// Which side a binding syncs from, and when a sync is queued: the state machine alone, without
/// threads.
@Suite("Bindings: sync state")
struct BindingSyncStateTests {
    /// ``BindingSyncState/changed(_:)``, callable inside `#expect`.
    func changed(_ side: BindingSide, _ state: inout BindingSyncState) -> Bool {
        state.changed(side)
    }

    /// ``BindingSyncState/start()``, callable inside `#expect`.
    func start(_ state: inout BindingSyncState) -> BindingSide? {
        state.start()
    }

    @Test func theFirstChangeQueuesASyncThatSyncsOnce() {
        var state = BindingSyncState()
        #expect(changed(.first, &state))
        #expect(start(&state) == .first)
        #expect(state == BindingSyncState())
    }

    @Test func aChangeHeardWhileASyncRunsQueuesAnother() {
        var state = BindingSyncState()
        #expect(changed(.first, &state))
        #expect(start(&state) == .first)
        #expect(changed(.second, &state))  // heard while the first sync runs
        #expect(start(&state) == .second)
    }

    @Test func changesHeardWhileASyncIsQueuedAreSyncedByItFromTheSideHeardOfLast() {
        var state = BindingSyncState()
        #expect(changed(.first, &state))
        #expect(!changed(.second, &state))
        #expect(!changed(.first, &state))
        #expect(state.latest == .first)
        #expect(start(&state) == .first)
        #expect(state == BindingSyncState())
    }
}
