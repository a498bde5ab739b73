import HeraldTestSupport
import KeyPathBridge
import Testing

/// An observable property that is not a `Var`: a tally with its own change rule (a move of less
/// than 10 is no change).
final class Tally: SettableProperty, @unchecked Sendable {
    let messenger = Messenger<Update<Int>>()
    private let lock = NSLockLike()
    private var stored: Int

    init(_ value: Int) {
        stored = value
    }

    var value: Int { lock.withLock { stored } }

    func isChange(from old: Int, to new: Int) -> Bool { abs(new - old) >= 10 }

    func set(_ new: Int, as author: AnyAuthor) {
        let old = lock.withLock { () -> Int? in
            guard isChange(from: stored, to: new) else { return nil }
            defer { stored = new }
            return stored
        }
        if let old { send(Update(old, new), from: author) }
    }
}

final class Team {
    let tally: Tally
    @ObservableVar var name: String

    init(_ name: String, tally: Int) {
        self.name = name
        self.tally = Tally(tally)
    }
}

final class League {
    @ObservableVar var leader: Team?
}

@Suite("Observable properties other than Var")
struct ObservablePropertyTests {
    @Test func typedAndStringPathsGoThroughAnyObservableProperty() throws {
        let league = League()
        let reds = Team("Reds", tally: 30)
        let blues = Team("Blues", tally: 50)
        let observer = TestObserver()
        let typed = Recording<Int?>()
        let text = Recording<Int?>()
        observer.observe(league, \.$leader, \.tally) { typed.append($0) }
        try observer.observe(league, path: "leader.tally") { text.append($0 as? Int) }

        league.leader = reds  // re-wires: 30
        reds.tally.set(35, as: reds)  // not a change by the tally's rule
        reds.tally.set(40, as: reds)
        league.leader = blues  // 50
        reds.tally.set(90, as: reds)  // no longer on the path
        league.leader = nil

        #expect(typed.elements == [30, 40, 50, nil])
        #expect(text.elements == typed.elements)
        #expect(!reds.tally.isObserved && !blues.tally.isObserved)
    }

    @Test func anObservedPathWritesThroughASettableProperty() {
        let reds = Team("Reds", tally: 0)
        let board = Team("Board", tally: 0)
        let binding = bind(reds.tally, to: board.tally)
        reds.tally.set(20, as: reds)
        #expect(board.tally.value == 20)
        let sync = bindTwoWay(reds.$name, board.$name)
        board.name = "Board 2"
        #expect(reds.name == "Board 2")
        withExtendedLifetime((binding, sync)) {}
    }

    @Test func coalescedObservationsAndTheInspectorKnowThemToo() throws {
        let scheduler = TestMessageScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let reds = Team("Reds", tally: 0)
        let observer = TestObserver()
        let runs = Recording<String>()
        observer.observeCoalesced(reds, \.tally, \.$name, in: coalescer) { _, team in
            runs.append("\(team.name) \(team.tally.value)")
        }
        reds.tally.set(10, as: reds)
        reds.name = "Red Sox"
        _ = scheduler.flush()
        #expect(runs.elements == ["Red Sox 10"])

        let inspector = Inspector(reds)
        #expect(try inspector.observationCount(of: "tally") == 1)
        #expect(inspector.properties.map(\.name).contains("tally"))
        try inspector.trigger("tally")  // sends the current value: the block runs again
        inspector.trigger(\.tally)
        _ = scheduler.flush()
        #expect(runs.elements == ["Red Sox 10", "Red Sox 10"])
    }

    /// A re-wire compares end values by the end property's own rule.
    @Test func aRewireComparesEndValuesByTheEndPropertysRule() {
        let league = League()
        league.leader = Team("Reds", tally: 30)
        let observer = TestObserver()
        let tallies = Recording<Int?>()
        observer.observe(league, \.$leader, \.tally) { tallies.append($0) }

        league.leader = Team("Blues", tally: 35)  // no change by Tally's rule (< 10)

        #expect(tallies.elements.isEmpty)
    }
}
