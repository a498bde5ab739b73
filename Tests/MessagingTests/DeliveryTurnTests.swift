import Testing

@testable import Messaging

/// The rules of a delivery turn, without threads: when a thread waits for the delivering role,
/// when the delivering thread hands it over, and what a waiting thread does when its time is up.
@Suite("Delivery turns: the rules")
struct DeliveryTurnTests {
    /// Takes `count` steps that each take an item, with `waiting` items queued.
    static func take(_ count: Int, in turn: inout DeliveryTurn, waiting: Int = 100) {
        for _ in 0..<count {
            guard case .take = turn.next(waiting: waiting) else {
                Issue.record("handed over early")
                return
            }
        }
    }

    @Test func aThreadWaitsOnceAShareWaitsOrWasTaken() {
        var turn = DeliveryTurn()
        #expect(!turn.mustWait(waiting: DeliveryTurn.share - 1))
        #expect(turn.mustWait(waiting: DeliveryTurn.share))
        Self.take(DeliveryTurn.share - 1, in: &turn)
        #expect(!turn.mustWait(waiting: 1))
        Self.take(1, in: &turn)
        #expect(turn.mustWait(waiting: 1))
        turn.begin()
        #expect(!turn.mustWait(waiting: 1), "a new turn starts with nothing taken")
    }

    @Test func theRoleIsHandedOverOnceTheTurnTookItsShare() {
        var turn = DeliveryTurn()
        let taker = Parker()
        turn.wait(taker)
        #expect(!turn.mayGiveUp, "a waiting thread keeps the role from being given up")
        Self.take(DeliveryTurn.share, in: &turn)
        guard case .handOff(let handed) = turn.next(waiting: 100) else {
            Issue.record("not handed over after the share")
            return
        }
        #expect(handed === taker)
        #expect(turn.mayGiveUp)
        // The taker's turn starts with nothing taken: it takes its share before handing over.
        turn.wait(Parker())
        Self.take(DeliveryTurn.share, in: &turn)
    }

    @Test func theRoleIsHandedOverAtOnceWhenNothingIsLeft() {
        var turn = DeliveryTurn()
        turn.wait(Parker())
        Self.take(1, in: &turn, waiting: 5)
        guard case .handOff = turn.next(waiting: 0) else {
            Issue.record("a thread waited for a turn with nothing left to deliver")
            return
        }
    }

    @Test func waitingThreadsAreHandedTheRoleOldestFirst() {
        var turn = DeliveryTurn()
        let first = Parker()
        let second = Parker()
        turn.wait(first)
        turn.wait(second)
        Self.take(DeliveryTurn.share, in: &turn)
        guard case .handOff(let one) = turn.next(waiting: 100) else {
            Issue.record("not handed over")
            return
        }
        Self.take(DeliveryTurn.share, in: &turn)
        guard case .handOff(let two) = turn.next(waiting: 100) else {
            Issue.record("not handed over")
            return
        }
        #expect(one === first)
        #expect(two === second)
    }

    @Test func aWaitingThreadWaitsOnWhileTheDeliveringThreadTakesSteps() {
        var turn = DeliveryTurn()
        let taker = Parker()
        turn.wait(taker)
        Self.take(1, in: &turn)
        guard case .keepWaiting = turn.timedOut(taker) else {
            Issue.record("withdrew although the delivering thread took a step")
            return
        }
        guard case .withdrew = turn.timedOut(taker) else {
            Issue.record("waited on although the delivering thread took no step")
            return
        }
        #expect(turn.withdrawals == 1)
        #expect(turn.mayGiveUp)
    }

    @Test func aThreadHandedTheRoleAsItsTimeRanOutTakesIt() {
        var turn = DeliveryTurn()
        let taker = Parker()
        turn.wait(taker)
        Self.take(DeliveryTurn.share, in: &turn)
        _ = turn.next(waiting: 100)  // hands over
        guard case .handedOver = turn.timedOut(taker) else {
            Issue.record("withdrew from a role it was handed")
            return
        }
        #expect(turn.withdrawals == 0)
    }

    @Test func nobodyWaitsAtAStalledMessengerUntilItsNextStepOrUntilManyWait() {
        var turn = DeliveryTurn()
        let taker = Parker()
        turn.wait(taker)
        _ = turn.timedOut(taker)  // no step since it began waiting: withdraws
        #expect(turn.isStalled)
        #expect(!turn.mustWait(waiting: 100), "a stuck handler costs one wait, not one per send")
        #expect(
            turn.mustWait(waiting: DeliveryTurn.mostWhileStalled),
            "what waits at a stalled messenger stays bounded")
        Self.take(1, in: &turn)
        #expect(!turn.isStalled)
        #expect(turn.mustWait(waiting: 100))
    }

    @Test func aParkerReturnsWhenUnparkedOrWhenItsTimeIsUp() {
        let unparked = Parker()
        unparked.unpark()
        #expect(unparked.park(forAtMost: 1_000_000_000), "unparked before it parked")
        let forgotten = Parker()
        #expect(!forgotten.park(forAtMost: 1_000_000), "nobody unparked it")
    }
}
