import Dispatch
import Foundation
import HeraldTestSupport
import RuntimeShims
import Synchronization
import Testing

@testable import Messaging

/// The bound on a delivering thread's work for others: a call is never held delivering other
/// threads' messages without end, and a sender that outpaces delivery is slowed, not buffered
/// without limit. (See "What a send may wait for" in Docs/Messaging.md.)
@Suite("Concurrency: delivery turns", .serialized)
struct DeliveryTurnConcurrencyTests {
    /// A handler slow enough that a sender on another thread outpaces it.
    static func busy() { busyWork() }

    /// Another thread sets a variable as fast as it can while this thread's set is delivered.
    /// Before, this thread delivered the other's sets for as long as they came (and memory
    /// grew); now it hands the role to the other thread after its share, and returns.
    @Test func aSetIsNotHeldDeliveringAnotherThreadsSetsWithoutEnd() {
        let number = Var(0)
        let observer = TestObserver()
        let tester = ThreadIdentity.current
        let testerDeliveries = AtomicCount()
        let started = DispatchSemaphore(value: 0)
        let sent = AtomicCount()
        observer.observe(number) { update in
            if update.new == 1 {
                // This thread's own set: let the other thread queue a few sets behind it.
                started.signal()
                while sent.value < 8 {}
            }
            Self.busy()
            if ThreadIdentity.current == tester { testerDeliveries.increment() }
        }
        let total = 100_000
        let sentByThen = stepsMadeElsewhere(
            total: total, made: sent, startingAfter: started, step: { number.value = -1 - $0 },
            during: { number.value = 1 })
        #expect(sentByThen != nil)
        #expect(
            sentByThen ?? total < total, "the set returned only after the other thread stopped")
        // Its own message and a share of the other thread's, give or take the few accepted while
        // it handed over.
        #expect(testerDeliveries.value <= DeliveryTurn.share + 4)
    }

    /// However fast a sender is, what waits for delivery stays bounded.
    @Test func aSenderThatOutpacesDeliveryIsSlowedNotBuffered() {
        let number = Var(0)
        let observer = TestObserver()
        let mostWaiting = Atomic<Int>(0)
        let core = number.core
        observer.observe(number) { _ in
            Self.busy()
            let waiting = core.lock.withLock { core.pending.count }
            mostWaiting.max(waiting, ordering: .relaxed)
        }
        let received = AtomicCount()
        observer.observe(number) { _ in received.increment() }
        concurrently(threads: 3) { thread in
            for index in 1...2_000 { number.value = thread * 10_000 + index }
        }
        #expect(received.value == 6_000)
        // A share, plus a few for each sender that found the queue full at once; if the
        // delivering thread took no step for `DeliveryTurn.longestWait` (descheduled on a loaded
        // machine), up to `DeliveryTurn.mostWhileStalled`. Unbounded, the queue held thousands.
        #expect(
            mostWaiting.load(ordering: .relaxed)
                <= DeliveryTurn.mostWhileStalled + DeliveryTurn.share)
    }

    /// Turns handed between threads keep every promise of delivery: one message at a time,
    /// each thread's messages in order, none lost.
    @Test func handedOverTurnsKeepOrderAndNeverOverlap() {
        let messenger = SharedMessenger<Int>()
        let observer = TestObserver()
        let inside = Atomic<Int>(0)
        let overlaps = AtomicCount()
        let lock = NSLockLike()
        nonisolated(unsafe) var lastSeen = [Int](repeating: -1, count: 4)
        let outOfOrder = AtomicCount()
        observer.observe(messenger) { message in
            if inside.add(1, ordering: .acquiringAndReleasing).newValue != 1 {
                overlaps.increment()
            }
            Self.busy()
            let (thread, index) = message.quotientAndRemainder(dividingBy: 100_000)
            lock.withLock {
                if lastSeen[thread] >= index { outOfOrder.increment() }
                lastSeen[thread] = index
            }
            inside.subtract(1, ordering: .acquiringAndReleasing)
        }
        concurrently(threads: 4) { thread in
            for index in 0..<1_000 { messenger.send(thread * 100_000 + index) }
        }
        #expect(overlaps.value == 0)
        #expect(outOfOrder.value == 0)
        #expect(lock.withLock { lastSeen } == [999, 999, 999, 999])
    }

    /// Handlers on two threads that each send to the messenger the other thread delivers (a
    /// sender inside a delivery never waits: it could be what the other waits for).
    @Test func handlersSendingToMessengersOtherThreadsDeliverDoNotDeadlock() {
        let heardByThen = Atomic<Int>(0)
        let finished = finishes(within: 60) {
            let left = Var(0)
            let right = Var(0)
            let observer = TestObserver()
            let heard = AtomicCount()
            observer.observe(left) { update in
                Self.busy()
                heard.increment()
                if update.new > 0 { right.value = -update.new }
            }
            observer.observe(right) { update in
                Self.busy()
                heard.increment()
                if update.new > 0 { left.value = -update.new }
            }
            concurrently(threads: 2) { thread in
                for index in 1...1_000 {
                    if thread == 0 { left.value = index } else { right.value = index }
                }
            }
            // Each positive set, and each negative set it caused, was heard (the negatives of
            // one side can repeat a value, so at least the positives).
            heardByThen.store(heard.value, ordering: .relaxed)
        }
        #expect(finished, "deadlocked")
        #expect(heardByThen.load(ordering: .relaxed) >= 2_000)
    }

    /// A handler is stuck (until the sender has waited twice): the sender's first wait ends
    /// after `DeliveryTurn.longestWait`, its next sends queue without waiting, but only until
    /// `DeliveryTurn.mostWhileStalled` wait; then it waits again, so what is buffered stays
    /// bounded even while nothing is delivered.
    @Test func whatWaitsStaysBoundedWhileAHandlerIsStuck() {
        let messenger = SharedMessenger<Int>()
        let observer = TestObserver()
        let core = messenger.core
        let started = DispatchSemaphore(value: 0)
        let sent = AtomicCount()
        let total = 2 * DeliveryTurn.mostWhileStalled
        let mostWaiting = Atomic<Int>(0)
        observer.observe(messenger) { message in
            if message == 0 {
                started.signal()
                // Stuck until the sender waited twice, or sent everything without waiting.
                while withdrawals(at: core) < 2, sent.value < total {}
            }
            mostWaiting.max(core.lock.withLock { core.pending.count }, ordering: .relaxed)
        }
        let finished = finishes(within: 60) {
            let deliverer = JoinableThread { messenger.send(0) }
            started.wait()
            for index in 1...total {
                messenger.send(index)
                sent.increment()
            }
            deliverer.join()
        }
        #expect(finished)
        #expect(
            mostWaiting.load(ordering: .relaxed)
                <= DeliveryTurn.mostWhileStalled + DeliveryTurn.share)
    }

    /// A fast sender whose sets a handler relays to a variable this thread delivers: the relay
    /// cannot wait (it delivers), so the sender pays the turn once its own delivery ends, and this
    /// thread's set returns while the other thread still sets.
    @Test func aSetIsNotHeldDeliveringWhatAHandlerRelaysFromAFastSender() {
        let source = Var(0)
        let target = Var(0)
        let observer = TestObserver()
        let started = DispatchSemaphore(value: 0)
        let sent = AtomicCount()
        observer.observe(source) { update in target.value = -update.new }
        observer.observe(target) { update in
            if update.new == 1 {
                started.signal()
                while sent.value < 8 {}
            }
            Self.busy()
        }
        let total = 100_000
        let sentByThen = stepsMadeElsewhere(
            total: total, made: sent, startingAfter: started, step: { source.value = 1 + $0 },
            during: { target.value = 1 })
        #expect(sentByThen != nil)
        #expect(
            sentByThen ?? total < total, "the set returned only after the other thread stopped")
    }

    /// A sender holds a lock of its own around its sets, and a handler of the variable takes the
    /// same lock: when a set has to wait for its turn, the handler cannot return until the sender
    /// lets the lock go. The wait ends by itself (once the delivering thread took no step for
    /// `DeliveryTurn.longestWait`), the set returns with its message queued, and every set is
    /// delivered.
    @Test func aSendWaitingForItsTurnEndsWhenTheHandlerWaitsForTheSender() {
        let heardByThen = Atomic<Int>(0)
        let finished = finishes(within: 60) {
            let number = Var(0)
            let observer = TestObserver()
            let userLock = NSLockLike()
            let started = DispatchSemaphore(value: 0)
            let sent = AtomicCount()
            let heard = AtomicCount()
            let core = number.core
            observer.observe(number) { update in
                if update.new == 1 {
                    started.signal()
                    // The sender queued a share; its next set waits for the turn.
                    while sent.value < DeliveryTurn.share - 1 {}
                    waitForTakers(1, at: core)
                }
                userLock.withLock {}
                heard.increment()
            }
            let deliverer = JoinableThread { number.value = 1 }
            started.wait()
            userLock.withLock {
                for index in 2..<100 {
                    number.value = index
                    sent.increment()
                }
            }
            deliverer.join()
            heardByThen.store(heard.value, ordering: .relaxed)
        }
        #expect(finished, "deadlocked: a send waited for a handler that waited for the sender")
        #expect(heardByThen.load(ordering: .relaxed) == 99)
    }

    /// A handler that sends to a messenger another thread delivers, and is behind, does not wait
    /// for it (that thread could be waiting for this one): its sends return at once, while the
    /// other thread is still held in a handler.
    @Test func aHandlerSendingBehindAnotherThreadsDeliveryDoesNotWait() {
        let target = SharedMessenger<Int>()
        let relay = SharedMessenger<Int>()
        let observer = TestObserver()
        let holding = DispatchSemaphore(value: 0)
        let sent = DispatchSemaphore(value: 0)
        let withdrawnWhileHeld = Atomic<Int>(-1)
        let core = target.core
        observer.observe(target) { message in
            if message == 0 {
                holding.signal()
                sent.wait()  // held until the relay's sends returned
            }
        }
        observer.observe(relay) { _ in
            for index in 1...2 * DeliveryTurn.share { target.send(index) }
            withdrawnWhileHeld.store(withdrawals(at: core), ordering: .relaxed)
            sent.signal()
        }
        let finished = finishes(within: 60) {
            let deliverer = JoinableThread { target.send(0) }
            holding.wait()
            relay.send(0)
            deliverer.join()
        }
        #expect(finished)
        // Had the handler waited, it would have withdrawn (the other thread took no step).
        #expect(withdrawnWhileHeld.load(ordering: .relaxed) == 0)
    }

    /// Another thread starts and ends observations as fast as it can, and the messenger's
    /// observation-state handler is slower: each change is queued work like a message, so the
    /// call that is telling the handler returns while the other thread goes on, and what waits
    /// stays bounded.
    @Test func observationStateChangesFromAnotherThreadAreBoundedLikeMessages() {
        let messenger = SharedMessenger<Int>()
        let started = DispatchSemaphore(value: 0)
        let core = messenger.core
        let mostWaiting = Atomic<Int>(0)
        let made = AtomicCount()
        let gated = Atomic<Bool>(false)
        messenger.whenObservationStateChanges { isObserved in
            if !isObserved, !gated.load(ordering: .relaxed) {
                gated.store(true, ordering: .relaxed)
                started.signal()
                while made.value < 8 {}
            }
            Self.busy()
            let waiting = core.lock.withLock { core.pending.count }
            mostWaiting.max(waiting, ordering: .relaxed)
        }
        let total = 20_000
        nonisolated(unsafe) var first: Observing<SharedMessenger<Int>>? = Observing(messenger) {
            _ in
        }
        _ = first
        let madeByThen = stepsMadeElsewhere(
            total: total, made: made, startingAfter: started,
            step: { _ in withExtendedLifetime(Observing(messenger) { _ in }) {} },
            // Unobserved: tells the handler, which lets the other thread start.
            during: { first = nil })
        #expect(madeByThen != nil)
        #expect(
            madeByThen ?? total < total, "the call returned only after the other thread stopped")
        #expect(
            mostWaiting.load(ordering: .relaxed)
                <= DeliveryTurn.mostWhileStalled + DeliveryTurn.share)
    }

    /// Another thread starts observations with `.initial` as fast as it can, while this thread's
    /// set is delivered: each first value is queued work like a message, so the set returns while
    /// the other thread goes on, and what waits stays bounded.
    @Test func initialValuesForObservationsStartedElsewhereAreBoundedLikeMessages() {
        let number = Var(0)
        let observer = TestObserver()
        let started = DispatchSemaphore(value: 0)
        let core = number.core
        let mostWaiting = Atomic<Int>(0)
        let made = AtomicCount()
        observer.observe(number) { update in
            if update.new == 1 {
                started.signal()
                while made.value < 8 {}
            }
        }
        let total = 20_000
        let kept = NSLockLike()
        nonisolated(unsafe) var observations: [Observing<Var<Int>>] = []
        let madeByThen = stepsMadeElsewhere(
            total: total, made: made, startingAfter: started,
            step: { _ in
                let observing = Observing(number, options: .initial) { _ in
                    Self.busy()
                    let waiting = core.lock.withLock { core.pending.count }
                    mostWaiting.max(waiting, ordering: .relaxed)
                }
                kept.withLock { observations.append(observing) }
            },
            during: { number.value = 1 })
        kept.withLock { observations.removeAll() }
        #expect(madeByThen != nil)
        #expect(
            madeByThen ?? total < total,
            "the set returned only after the other thread stopped starting observations")
        #expect(
            mostWaiting.load(ordering: .relaxed)
                <= DeliveryTurn.mostWhileStalled + DeliveryTurn.share)
    }

    /// Three messengers; four threads send to all; every handler of a sent message relays it to
    /// the next messenger (so turns are owed and paid, and handed over); handlers start and stop
    /// observations. Per messenger: one delivery at a time, every receiver hears each message
    /// before the next, each source's messages in order, nothing lost; and every thread ends
    /// holding no role and owing no turn.
    @Test func relayedSendsAcrossThreadsKeepEveryPromiseOfDelivery() {
        let rounds = 3
        for round in 0..<rounds {
            let count = 3
            let perThread = 1_500
            let threads = 4
            let messengers = (0..<count).map { _ in SharedMessenger<Int>() }
            let observer = TestObserver()
            let lock = NSLockLike()
            nonisolated(unsafe) var logs = [[(Int, Int)]](repeating: [], count: count)
            let overlaps = AtomicCount()
            let inside = (0..<count).map { _ in Counter() }
            let dirty = AtomicCount()
            let hookCalls = (0..<count).map { _ in Counter() }
            for k in 0..<count {
                messengers[k].whenObservationStateChanges { _ in
                    hookCalls[k].atomic.add(1, ordering: .relaxed)
                }
            }
            for k in 0..<count {
                let next = messengers[(k + 1) % count]
                let me = messengers[k]
                for receiver in 0..<2 {
                    observer.observe(me) { message in
                        if inside[k].atomic.add(1, ordering: .acquiringAndReleasing).newValue != 1 {
                            overlaps.increment()
                        }
                        lock.withLock { logs[k].append((receiver, message)) }
                        if receiver == 0, message >= 0 {
                            next.send(-(message + 1))  // relayed: owed if `next` is behind
                            if message % 97 == 0 {
                                let temporary = Observing(me) { _ in }
                                withExtendedLifetime(temporary) {}
                            }
                        }
                        if message % 13 == 0 { busyWork() }
                        inside[k].atomic.subtract(1, ordering: .acquiringAndReleasing)
                    }
                }
            }
            let finished = finishes(within: 120) {
                concurrently(threads: threads) { thread in
                    for index in 0..<perThread {
                        messengers[index % count].send(thread * 1_000_000 + index)
                    }
                    if !threadHoldsNoRoleAndOwesNoTurn() { dirty.increment() }
                }
            }
            #expect(finished, "deadlocked in round \(round)")
            guard finished else { return }
            #expect(overlaps.value == 0)
            #expect(dirty.value == 0, "a thread ended delivering or owing turns")
            let final = lock.withLock { logs }
            for k in 0..<count {
                let log = final[k]
                // Each message reaches receiver 0 then receiver 1 before the next message.
                var pairedOK = log.count % 2 == 0
                var messages: [Int] = []
                var index = 0
                while pairedOK, index + 1 < log.count {
                    if log[index].0 != 0 || log[index + 1].0 != 1
                        || log[index].1 != log[index + 1].1
                    {
                        pairedOK = false
                    }
                    messages.append(log[index].1)
                    index += 2
                }
                #expect(pairedOK, "messenger \(k): a message did not reach every receiver first")
                // Each source's messages in order, direct and relayed.
                var last: [Int: Int] = [:]
                var outOfOrder = 0
                for message in messages {
                    let value = message >= 0 ? message : -(message + 1)
                    let source = (message >= 0 ? 0 : 1) * 100 + value / 1_000_000
                    let seq = value % 1_000_000
                    if let previous = last[source], previous >= seq { outOfOrder += 1 }
                    last[source] = seq
                }
                #expect(outOfOrder == 0, "messenger \(k): \(outOfOrder) out of order")
                #expect(messages.count == 2 * threads * perThread / count, "messenger \(k)")
            }
            withExtendedLifetime(messengers) {}
        }
    }

    /// While a sender waits for its turn, the observer and the test's own reference to the
    /// messenger go away (the waiting sender still holds one): nothing crashes, and the
    /// messenger's core is freed once the sender is done.
    @Test func theObserverMayGoAwayWhileASenderWaitsForItsTurn() {
        let weakCore = WeakReference()
        let finished = finishes(within: 20) {
            var messenger: SharedMessenger<Int>? = SharedMessenger<Int>()
            weakCore.object = messenger!.core
            var observer: TestObserver? = TestObserver()
            let started = DispatchSemaphore(value: 0)
            let gate = DispatchSemaphore(value: 0)
            let sent = AtomicCount()
            observer!.observe(messenger!) { message in
                if message == 0 {
                    started.signal()
                    gate.wait()
                }
            }
            let box = UncheckedBox(messenger!)
            let d = JoinableThread { box.value.send(0) }
            started.wait()
            let p = JoinableThread {
                for i in 1...100 {
                    box.value.send(i)
                    sent.increment()
                }
            }
            while sent.value < DeliveryTurn.share - 1 {}
            waitForTakers(1, at: box.value.core)  // p waits for its turn now
            observer = nil
            messenger = nil
            gate.signal()
            d.join()
            p.join()
        }
        #expect(finished)
        #expect(weakCore.object == nil, "the core outlived everything")
    }

    /// A handler of `m1` sends to `m2` while another thread delivers `m2` and is behind: the
    /// thread owes `m2` a turn, pays it when its delivery ends, and then keeps no reference to
    /// `m2`.
    @Test func aTurnOwedAndPaidKeepsNoMessengerAlive() {
        let weakCore = WeakReference()
        let clean = Atomic<Bool>(false)
        let finished = finishes(within: 20) {
            let m1 = SharedMessenger<Int>()
            var m2: SharedMessenger<Int>? = SharedMessenger<Int>()
            weakCore.object = m2!.core
            let observer = TestObserver()
            let started = DispatchSemaphore(value: 0)
            let gate = DispatchSemaphore(value: 0)
            let box2 = UncheckedBox(m2!)
            observer.observe(m2!) { message in
                if message == 0 {
                    for i in 1...40 { box2.value.send(i) }
                    started.signal()
                    gate.wait()
                }
            }
            observer.observe(m1) { _ in box2.value.send(1_000) }
            let d = JoinableThread { box2.value.send(0) }
            started.wait()
            let t = JoinableThread {
                m1.send(1)  // owes m2; once m1's delivery ends, waits for m2's turn
                clean.store(threadHoldsNoRoleAndOwesNoTurn(), ordering: .relaxed)
            }
            waitForTakers(1, at: box2.value.core)
            gate.signal()
            d.join()
            t.join()
            m2 = nil
            withExtendedLifetime(m1) {}
        }
        #expect(finished)
        let wasClean = clean.load(ordering: .relaxed)
        #expect(wasClean)
        #expect(weakCore.object == nil)
    }

    /// While senders hand turns over and observations come and go on several threads, the
    /// observation-state handler is told in order: once all is quiet, the last state told is
    /// the messenger's.
    @Test func theObservationStateHandlerEndsToldTheLastState() {
        for _ in 0..<20 {
            let messenger = SharedMessenger<Int>()
            let told = Atomic<Int>(-1)
            let calls = AtomicCount()
            messenger.whenObservationStateChanges { observed in
                told.store(observed ? 1 : 0, ordering: .sequentiallyConsistent)
                calls.increment()
            }
            let keep = TestObserver()
            keep.observe(messenger) { _ in busyWork() }
            let finished = finishes(within: 60) {
                concurrently(threads: 4) { thread in
                    for index in 0..<400 {
                        if thread < 2 {
                            messenger.send(index)
                        } else {
                            let o = Observing(messenger) { _ in }
                            if index % 3 == 0 { messenger.send(-index) }
                            withExtendedLifetime(o) {}
                        }
                    }
                }
            }
            #expect(finished)
            keep.stopObserving()
            #expect(messenger.observationCount == 0)
            #expect(told.load(ordering: .sequentiallyConsistent) == 0)
        }
    }
}

/// Waits (spinning) until `count` threads waited to be handed `core`'s delivering role: they
/// wait now, or waited and withdrew.
func waitForTakers<Message>(_ count: Int, at core: MessengerCore<Message>) {
    while core.lock.withLock({ core.state.turn.takers.count + core.state.turn.withdrawals })
        < count
    {}
}

/// How many threads withdrew from waiting for `core`'s delivering role, for want of progress.
func withdrawals<Message>(at core: MessengerCore<Message>) -> Int {
    core.lock.withLock { core.state.turn.withdrawals }
}

/// Whether this thread holds no delivering role and owes no turn, as a thread should once its
/// sends returned.
func threadHoldsNoRoleAndOwesNoTurn() -> Bool {
    !herald_is_delivering() && (ThreadContext.current?.owedTurns.isEmpty ?? true)
}

/// A counter that closures share.
private final class Counter: Sendable {
    let atomic = Atomic<Int>(0)
}

/// A weak reference that closures share.
private final class WeakReference: @unchecked Sendable {
    weak var object: AnyObject?
}
