import HeraldTestSupport
import Messaging
import Testing

/// Observers with many observations and messengers with many observers: every way an observation
/// ends, in random order, leaves each remaining observation receiving every message, in the order
/// the observations started (promises 3, 6 and 7).
@Suite("Many observations: ending them in any order")
struct ManyObservationsTests {
    typealias Watch = Observing<Messenger<Int>>

    /// Who owns an observation in the model.
    enum Owner: Equatable {
        case observer(Int)
        case watch(Int)
    }

    /// What the handlers record: the id of each observation a message reached, in order.
    final class Log {
        var ids: [Int] = []
    }

    /// A seeded run of 3,000 random operations on 24 messengers, 6 observers and stand-alone
    /// `Observing`s: starting observations (the same messenger several times too), stopping them
    /// by every API, observers and messengers dying. After each operation every living messenger
    /// sends once, and exactly its running observations must receive, in the order they started.
    @Test(arguments: [11, 12, 13] as [UInt64])
    func everyRemainingObservationStillReceivesInOrder(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let log = Log()
        var messengers = (0..<24).map { _ in Messenger<Int>() }
        var observers = (0..<6).map { _ in TestObserver() }
        var watches: [Int: Watch] = [:]
        // The model: per messenger, its running observations in the order they started.
        var running: [[(id: Int, owner: Owner)]] = Array(repeating: [], count: messengers.count)
        var nextID = 0
        var freed: [() -> Bool] = []
        // What each running observation's handler captured: freed as soon as it ends.
        var captured: [Int: WeakBox<Canary>] = [:]

        func start(on messenger: Int) {
            let id = nextID
            nextID += 1
            let canary = Canary()
            captured[id] = WeakBox(canary)
            let handler: (Int) -> Void = { [log, canary] _ in
                _ = canary
                log.ids.append(id)
            }
            if Int.random(in: 0..<5, using: &random) == 0 {
                watches[id] = Watch(messengers[messenger], receive: handler)
                running[messenger].append((id, .watch(id)))
            } else {
                let observer = Int.random(in: 0..<observers.count, using: &random)
                observers[observer].observe(messengers[messenger], receive: handler)
                running[messenger].append((id, .observer(observer)))
            }
        }
        func end(where ends: (Int, Owner) -> Bool) {
            for messenger in running.indices {
                running[messenger].removeAll { ends(messenger, $0.owner) }
            }
        }

        for _ in 0..<300 { start(on: Int.random(in: 0..<messengers.count, using: &random)) }

        for step in 0..<3_000 {
            let messenger = Int.random(in: 0..<messengers.count, using: &random)
            let observer = Int.random(in: 0..<observers.count, using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<35:
                start(on: messenger)
            case 35..<55:
                observers[observer].stopObserving(messengers[messenger])
                end { $0 == messenger && $1 == .observer(observer) }
            case 55..<65:
                messengers[messenger].stopBeingObserved(by: observers[observer])
                end { $0 == messenger && $1 == .observer(observer) }
            case 65..<75:
                guard let id = watches.keys.randomElement(using: &random) else { continue }
                if Bool.random(using: &random) { watches[id]!.stop() } else { watches[id] = nil }
                end { $1 == .watch(id) }
            case 75..<80:
                freed.append { [box = WeakBox(messengers[messenger])] in box.isFreed }
                messengers[messenger] = Messenger()
                running[messenger] = []
                // An `Observing` of a dead messenger is inactive; drop it.
                for id in watches.keys where !watches[id]!.isActive { watches[id] = nil }
            case 80..<83:
                freed.append { [box = WeakBox(observers[observer])] in box.isFreed }
                observers[observer] = TestObserver()
                end { $1 == .observer(observer) }
            case 83..<85:
                observers[observer].stopObserving()
                end { $1 == .observer(observer) }
            case 85..<88:
                messengers[messenger].stopBeingObserved()
                running[messenger] = []
            default:
                for (index, each) in messengers.enumerated() {
                    for (number, candidate) in observers.enumerated() {
                        let expected = running[index].contains { $0.owner == .observer(number) }
                        #expect(candidate.isObserving(each) == expected, "step \(step)")
                    }
                }
            }

            for (index, each) in messengers.enumerated() {
                log.ids = []
                each.send(index)
                let expected = running[index].map(\.id)
                let count = each.observationCount
                if log.ids != expected || count != expected.count {
                    let received = log.ids
                    Issue.record(
                        """
                        seed \(seed), step \(step), messenger \(index): received by \(received), \
                        expected \(expected); observationCount \(count)
                        """)
                    return
                }
            }
            for (id, watch) in watches {
                let expected = running.contains { $0.contains { $0.id == id } }
                #expect(watch.isActive == expected, "step \(step): watch \(id)")
            }
            let runningIDs = Set(running.joined().map(\.id))
            for (id, box) in captured where !runningIDs.contains(id) {
                #expect(box.isFreed, "step \(step): observation \(id) ended but is not freed")
                captured[id] = nil
            }
        }

        freed += messengers.map { each in { [box = WeakBox(each)] in box.isFreed } }
        freed += observers.map { each in { [box = WeakBox(each)] in box.isFreed } }
        messengers = []
        observers = []
        watches = [:]
        #expect(freed.allSatisfy { $0() }, "every messenger and observer is freed")
    }

    @Test func anObserverOfManyMessengersIsToldOfEachDeathAndKeepsTheRest() {
        let observer = TestObserver()
        let log = Log()
        var messengers = (0..<1_000).map { _ in Messenger<Int>() }
        for (index, messenger) in messengers.enumerated() {
            observer.observe(messenger) { [log] _ in log.ids.append(index) }
        }
        // Every other messenger dies, from the last to the first.
        let survivors = Array(stride(from: 0, to: 1_000, by: 2))
        for index in stride(from: 999, through: 1, by: -2) { messengers.remove(at: index) }
        #expect(messengers.count == survivors.count)
        for messenger in messengers { messenger.send(0) }
        #expect(log.ids == survivors)
        #expect(messengers.allSatisfy { observer.isObserving($0) })
    }

    @Test func observingOneMessengerManyTimesAndStoppingEndsEveryOneOfThem() {
        let observer = TestObserver()
        let other = TestObserver()
        let messenger = Messenger<Int>()
        let log = Log()
        for id in 0..<500 { observer.observe(messenger) { [log] _ in log.ids.append(id) } }
        other.observe(messenger) { [log] _ in log.ids.append(-1) }
        messenger.send(0)
        #expect(log.ids == Array(0..<500) + [-1])

        observer.stopObserving(messenger)
        log.ids = []
        messenger.send(1)
        #expect(log.ids == [-1])
        #expect(!observer.isObserving(messenger))
        #expect(other.isObserving(messenger))
        #expect(messenger.observationCount == 1)
    }

    /// Promise 7 at scale: a handler that ends hundreds of observations and starts new ones during
    /// one delivery. The ended ones receive nothing more, the new ones only later messages.
    @Test func manyStopsAndStartsDuringOneDeliveryTakeEffectAtOnce() {
        let messenger = Messenger<Int>()
        let log = Log()
        var observers: [TestObserver?] = (0..<400).map { _ in TestObserver() }
        let latecomers = (0..<100).map { _ in TestObserver() }
        let others = observers.map { WeakBox($0!) }
        for (index, observer) in observers.enumerated() {
            observer!.observe(messenger) { [log] message in
                log.ids.append(index)
                guard index == 0, message == 1 else { return }
                // Two thirds end: more than half of the slots become holes, so the list
                // compacts during the delivery.
                for (other, each) in others.enumerated() where other % 3 == 1 {
                    each.object!.stopObserving(messenger)
                }
                for (other, each) in others.enumerated() where other % 3 == 2 {
                    messenger.stopBeingObserved(by: each.object!)
                }
                for (number, latecomer) in latecomers.enumerated() {
                    latecomer.observe(messenger) { [log] _ in log.ids.append(1_000 + number) }
                }
            }
        }

        messenger.send(1)
        let kept = (0..<400).filter { $0 % 3 == 0 }
        #expect(log.ids == kept)

        log.ids = []
        // Half of the kept observers die between the messages.
        for index in kept where index % 6 == 3 { observers[index] = nil }
        messenger.send(2)
        #expect(log.ids == kept.filter { $0 % 6 == 0 } + (1_000..<1_100))
        #expect(messenger.observationCount == 67 + 100)
    }
}
