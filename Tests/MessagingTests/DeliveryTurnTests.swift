import Testing

@testable import Messaging

/// The rules of a delivery turn, without threads: when a messenger is behind, when the delivering
/// thread hands its role over, and what a sender whose wait ended finds.
@Suite("Delivery turns: the rules")
struct DeliveryTurnTests {
    @Test func aMessengerIsBehindOnceAShareWaitsOrWasTaken() {
        var turn = DeliveryTurn()
        #expect(!turn.isBehind(waiting: DeliveryTurn.share - 1))
        #expect(turn.isBehind(waiting: DeliveryTurn.share))
        for _ in 0..<DeliveryTurn.share - 1 { _ = turn.next() }
        #expect(!turn.isBehind(waiting: 1))
        _ = turn.next()
        #expect(turn.isBehind(waiting: 1))
        turn.begin()
        #expect(!turn.isBehind(waiting: 1), "a new turn starts with nothing taken")
    }

    @Test func theRoleIsHandedOverOnlyAfterTheTurnTookSomething() {
        var turn = DeliveryTurn()
        let taker = Parker()
        turn.wait(taker)
        #expect(!turn.mayGiveUp, "a waiting sender keeps the role from being given up")
        guard case .take = turn.next() else {
            Issue.record("handed over before anything was taken")
            return
        }
        guard case .handOff(let handed) = turn.next() else {
            Issue.record("not handed over at the next step")
            return
        }
        #expect(handed === taker)
        #expect(turn.mayGiveUp)
        // The taker's turn starts with nothing taken: it takes before it hands over in turn.
        turn.wait(Parker())
        guard case .take = turn.next() else {
            Issue.record("the new turn handed over before taking anything")
            return
        }
    }

    @Test func waitingSendersAreHandedTheRoleOldestFirst() {
        var turn = DeliveryTurn()
        let first = Parker()
        let second = Parker()
        turn.wait(first)
        turn.wait(second)
        _ = turn.next()
        guard case .handOff(let one) = turn.next() else {
            Issue.record("not handed over")
            return
        }
        _ = turn.next()
        guard case .handOff(let two) = turn.next() else {
            Issue.record("not handed over")
            return
        }
        #expect(one === first)
        #expect(two === second)
    }

    @Test func aSenderWhoseTimeRanOutWithdrawsUnlessItWasHandedTheRole() {
        var turn = DeliveryTurn()
        let late = Parker()
        let waiting = Parker()
        turn.wait(late)
        turn.wait(waiting)
        _ = turn.next()
        _ = turn.next()  // hands over to `late`
        let lateWithdrew = turn.withdraw(late)
        let waitingWithdrew = turn.withdraw(waiting)
        let withdrewTwice = turn.withdraw(waiting)
        #expect(!lateWithdrew, "it was handed the role: it must take it")
        #expect(waitingWithdrew)
        #expect(turn.mayGiveUp)
        #expect(!withdrewTwice, "withdrawn once")
    }

    @Test func aParkerReturnsWhenUnparkedOrWhenItsTimeIsUp() {
        let unparked = Parker()
        unparked.unpark()
        #expect(unparked.park(forAtMost: 1_000_000_000), "unparked before it parked")
        let forgotten = Parker()
        #expect(!forgotten.park(forAtMost: 1_000_000), "nobody unparked it")
    }
}
