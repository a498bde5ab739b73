import Testing

@testable import KeyPathBridge

/// Who syncs a binding, and from which side: the state machine alone, without threads.
@Suite("Bindings: sync state")
struct BindingSyncStateTests {
    /// ``BindingSyncState/changed(_:)``, callable inside `#expect`.
    func changed(_ side: BindingSide, _ state: inout BindingSyncState) -> Bool {
        state.changed(side)
    }

    /// ``BindingSyncState/next()``, callable inside `#expect`.
    func next(_ state: inout BindingSyncState) -> BindingSide? {
        state.next()
    }

    @Test func theFirstChangeTakesTheRoleAndIsSyncedOnce() {
        var state = BindingSyncState()
        #expect(changed(.first, &state))
        #expect(next(&state) == .first)
        #expect(next(&state) == nil)
        #expect(!state.isSyncing)
    }

    @Test func aChangeHeardWhileSyncingIsLeftToTheSyncingThread() {
        var state = BindingSyncState()
        #expect(changed(.first, &state))
        #expect(next(&state) == .first)
        #expect(!changed(.second, &state))  // heard while syncing: not this caller's to sync
        #expect(next(&state) == .second)
        #expect(next(&state) == nil)
        #expect(changed(.second, &state))  // after the role was given up, a change takes it
    }

    @Test func theSideHeardOfLastIsSyncedFromAndTheEarlierOneIsNot() {
        var state = BindingSyncState()
        #expect(changed(.first, &state))
        #expect(!changed(.second, &state))
        #expect(!changed(.first, &state))
        #expect(state.latest == .first)
        #expect(next(&state) == .first)
        #expect(next(&state) == nil)
        #expect(state == BindingSyncState())
    }

    @Test func aChangeOfTheOtherSideWhileSyncingIsSyncedFromNext() {
        var state = BindingSyncState()
        #expect(changed(.first, &state))
        #expect(!changed(.second, &state))
        #expect(next(&state) == .second)
        #expect(next(&state) == nil)
    }
}
