import Dispatch
import HeraldTestSupport
import Messaging
import Testing

/// KVO's `.initial` (opt-in), and EBN's dealloc protocol: being told that an observed object died.
@Suite("Observation options")
struct ObservationOptionsTests {
    @Test func theInitialOptionDeliversTheCurrentValueAtOnce() {
        let title = Var("Draft")
        let observer = TestObserver()
        let seen = Recording<Update<String>>()
        observer.observe(title, options: .initial) { seen.append($0) }
        #expect(seen.elements == [Update("Draft", "Draft")])

        title.value = "Final"
        #expect(seen.elements == [Update("Draft", "Draft"), Update("Draft", "Final")])
    }

    @Test func withoutTheInitialOptionStartingSendsNothing() {
        let title = Var("Draft")
        let observer = TestObserver()
        let seen = Recording<Update<String>>()
        observer.observe(title, options: []) { seen.append($0) }
        observer.observe(title) { seen.append($0) }
        #expect(seen.elements.isEmpty)
    }

    @Test func theInitialMessageIsAuthoredByTheObservedObjectAndReachesOnlyTheNewObservation() {
        let count = Var(3)
        let earlier = RecordingObserver<Update<Int>>()
        earlier.record(count)
        let observer = TestObserver()
        let authors = Recording<AnyAuthor>()
        observer.observe(count, options: .initial) { _, author in authors.append(author) }

        #expect(authors.count == 1)
        #expect(authors.elements.first === count)
        #expect(earlier.messages.elements.isEmpty)
    }

    @Test func anyCacheCanStartWithItsLatestMessage() {
        final class Weather: Messenger<String>, ObservableCache {
            var latestMessage: String { "sunny" }
        }
        let weather = Weather()
        let observer = TestObserver()
        let seen = Recording<String>()
        observer.observe(weather, options: .initial) { seen.append($0) }
        weather.send("rain")
        #expect(seen.elements == ["sunny", "rain"])
    }

    // Promise 2 holds for the first message too: started from a handler, the observation gets
    // it after the message being delivered reached every observer, and before later messages.
    @Test func anObservationStartedInAHandlerGetsItsInitialValueAfterTheCurrentDelivery() {
        let number = Var(0)
        let observer = TestObserver()
        let late = TestObserver()
        let log = Recording<String>()
        observer.observe(number) { update in
            log.append("first \(update.new)")
            if update.new == 1 {
                late.observe(number, options: .initial) { log.append("late \($0.old)→\($0.new)") }
                log.append("started")
                number.value = 2
            }
        }
        observer.observe(number) { update in log.append("second \(update.new)") }

        number.value = 1

        #expect(
            log.elements == [
                "first 1", "started", "second 1", "late 1→1", "first 2", "second 2", "late 1→2",
            ])
    }

    @Test func anObservationStoppedBeforeItsTurnGetsNoInitialValue() {
        let number = Var(0)
        let observer = TestObserver()
        let late = TestObserver()
        let seen = Recording<Update<Int>>()
        observer.observe(number) { update in
            guard update.new == 1 else { return }
            late.observe(number, options: .initial) { seen.append($0) }
            late.stopObserving(number)
        }
        number.value = 1
        number.value = 2
        #expect(seen.elements.isEmpty)
    }

    @Test func anObservingCanStartWithTheCurrentValue() {
        let title = Var("Draft")
        let seen = Recording<String>()
        let observing = Observing(title, options: .initial) { update in seen.append(update.new) }
        title.value = "Final"
        #expect(seen.elements == ["Draft", "Final"])
        #expect(observing.isActive)

        let authors = Recording<AnyAuthor>()
        let withAuthors = Observing(title, options: .initial) { _, author in
            authors.append(author)
        }
        #expect(authors.elements.first === title)
        withExtendedLifetime(withAuthors) {}
    }

    // MARK: Death

    @Test func anObserverIsToldWhenAnObservedObjectDies() {
        var messenger: Messenger<Int>? = Messenger<Int>()
        let observer = TestObserver()
        let deaths = Recording<String>()
        observer.observeDeath(of: messenger!) { deaths.append("died") }
        #expect(messenger?.observationCount == 1)
        #expect(observer.isObserving(messenger!))
        messenger?.send(1)  // a death watch receives no messages
        #expect(deaths.elements.isEmpty)

        messenger = nil

        #expect(deaths.elements == ["died"])
    }

    @Test func aVariableThatDiesWithItsModelTellsTheObserver() {
        final class Model {
            let name = Var("a")
        }
        var model: Model? = Model()
        let observer = TestObserver()
        let deaths = Recording<String>()
        observer.observeDeath(of: model!.name) { deaths.append("model gone") }
        model = nil
        #expect(deaths.elements == ["model gone"])
    }

    @Test func aDeathWatchEndsWithoutACallWhenStoppedOrWhenTheObserverDies() {
        var first: Messenger<Int>? = Messenger<Int>()
        var second: Messenger<Int>? = Messenger<Int>()
        let deaths = Recording<String>()
        let observer = TestObserver()
        var shortLived: TestObserver? = TestObserver()
        observer.observeDeath(of: first!) { deaths.append("first") }
        shortLived?.observeDeath(of: second!) { deaths.append("second") }

        observer.stopObserving(first)
        shortLived = nil
        #expect(first?.observationCount == 0)
        #expect(second?.observationCount == 0)
        first = nil
        second = nil

        #expect(deaths.elements.isEmpty)
    }

    @Test func aDeathWatchFreesItsHandler() {
        var messenger: Messenger<Int>? = Messenger<Int>()
        let observer = TestObserver()
        let freed: WeakBox<Canary>
        do {
            let canary = Canary()
            freed = WeakBox(canary)
            observer.observeDeath(of: messenger!) { withExtendedLifetime(canary) {} }
        }
        #expect(!freed.isFreed)
        messenger = nil
        #expect(freed.isFreed)
    }

    @Test func anObservingSaysWhenTheObservedObjectDies() {
        var messenger: Messenger<String>? = Messenger<String>()
        let log = Recording<String>()
        final class Holder: @unchecked Sendable {
            weak var observing: Observing<Messenger<String>>?
        }
        let holder = Holder()
        let observing = Observing(
            messenger!,
            whenObservedDies: { log.append("died, active: \(holder.observing?.isActive == true)") }
        ) { log.append($0) }
        holder.observing = observing
        messenger?.send("hi")
        messenger = nil
        #expect(log.elements == ["hi", "died, active: false"])
        #expect(!observing.isActive)
    }

    @Test func aStoppedObservingIsNotToldOfTheDeath() {
        var messenger: Messenger<String>? = Messenger<String>()
        let log = Recording<String>()
        let observing = Observing(messenger!, whenObservedDies: { log.append("died") }) { _ in }
        observing.stop()
        messenger = nil
        #expect(log.elements.isEmpty)
    }
}

extension ConcurrencyTests {
    // The first message of an observation started while another thread delivers waits its turn:
    // it is never delivered concurrently with, or after, a later message.
    @Test func anInitialValueWaitsForTheDeliveryInProgressOnAnotherThread() {
        let number = Var(0)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let observer = TestObserver()
        observer.observe(number) { update in
            guard update.new == 1 else { return }
            entered.signal()
            release.wait()
        }
        let sent = DispatchGroup()
        DispatchQueue.global().async(group: sent) { number.value = 1 }
        entered.wait()

        let late = TestObserver()
        let log = Recording<String>()
        late.observe(number, options: .initial) { log.append("\($0.old)→\($0.new)") }
        let queuedBehindTheDelivery = log.elements.isEmpty
        number.value = 2  // queued for the delivering thread too
        release.signal()
        sent.wait()

        #expect(queuedBehindTheDelivery)
        #expect(log.elements == ["1→1", "1→2"])
    }
}

extension ObservationOptionsTests {
    @Test func theInitialValueComesBeforeWhatTheObservationStateHandlerSends() {
        let weather = Var("unknown")
        weather.whenObservationStateChanges { isObserved in
            if isObserved { weather.value = "sunny" }  // "someone wants this now": load it
        }
        let observer = TestObserver()
        let seen = Recording<String>()
        observer.observe(weather, options: .initial) { seen.append("\($0.old)→\($0.new)") }
        #expect(seen.elements == ["unknown→unknown", "unknown→sunny"])
    }

    @Test func aDeathHandlerMayReleaseItsObserverAndObserveOtherObjects() {
        var doomed: Messenger<Int>? = Messenger<Int>()
        let other = Var(0)
        let seen = Recording<Int>()
        let survivor = TestObserver()
        let freed: WeakBox<TestObserver>
        do {
            let observer = TestObserver()
            let box = Box(observer)
            freed = WeakBox(observer)
            observer.observeDeath(of: doomed!) {
                _ = box.take()  // the observer's last reference goes here
                survivor.observe(other) { seen.append($0.new) }
            }
        }
        #expect(!freed.isFreed)
        doomed = nil
        other.value = 1
        #expect(freed.isFreed)
        #expect(seen.elements == [1])
    }
}

extension ConcurrencyTests {
    // An object dying on one thread while its observer stops observing it on another: the death
    // handler runs at most once, and nothing crashes.
    @Test func aDeathRacingAStopCallsTheHandlerAtMostOnce() {
        for _ in 0..<200 {
            let observer = TestObserver()
            let calls = Recording<Int>()
            let box: Box<Messenger<Int>>
            do {
                let messenger = Messenger<Int>()
                observer.observeDeath(of: messenger) { calls.append(1) }
                box = Box(messenger)
            }
            concurrently(threads: 2) { thread in
                if thread == 0 { _ = box.take() } else { observer.stopObserving() }
            }
            #expect(calls.count <= 1)
        }
    }
}

extension ConcurrencyTests {
    // Observations that start with the current value while other threads set the variable: each
    // one's first update is (v, v) and every later update starts where the previous one ended,
    // so the first message is exactly the state the later ones change, never late or doubled.
    @Test func initialValuesStartConsistentChainsUnderConcurrentSets() {
        let number = Var(0)
        let count = 64
        let observers = (0..<count).map { _ in TestObserver() }
        let chains = (0..<count).map { _ in Recording<Update<Int>>() }
        let barrier = SpinBarrier()
        concurrently(threads: 4) { thread in
            barrier.wait(parties: 4)
            if thread < 2 {
                for index in 1...20_000 { number.value = thread * 100_000 + index }
            } else {
                for slot in stride(from: thread - 2, to: count, by: 2) {
                    observers[slot].observe(number, options: .initial) { chains[slot].append($0) }
                    for _ in 0..<200 { _ = number.value }  // spread the starts over the sets
                }
            }
        }
        for (slot, chain) in chains.enumerated() {
            let updates = chain.elements
            guard let first = updates.first else {
                Issue.record("observation \(slot) got no initial value")
                continue
            }
            #expect(first.old == first.new, "observation \(slot) starts with \(first)")
            for (previous, next) in zip(updates, updates.dropFirst()) where previous.new != next.old
            {
                Issue.record("observation \(slot): \(next) does not follow \(previous)")
                break
            }
            #expect(updates.last?.new == number.value)
        }
    }
}

/// Death watches that an earlier death handler of the same object ends: they are not told
/// (found by review; they were, because the messenger's teardown forgot every watch first and
/// told them all afterwards).
@Suite("Death watches ended during a death")
struct DeathWatchesEndedDuringADeathTests {
    final class Holder: @unchecked Sendable {
        var second: Observing<Messenger<Int>>?
    }

    /// How the first death handler ends the second watch.
    enum Ending: String, CaseIterable, Sendable {
        case stopped, released
    }

    @Test(arguments: Ending.allCases)
    func aDeathHandlerIsNotCalledOnceAnEarlierOneEndedIt(_ ending: Ending) {
        var messenger: Messenger<Int>? = Messenger<Int>()
        let log = Recording<String>()
        let holder = Holder()
        let first = Observing(
            messenger!,
            whenObservedDies: {
                switch ending {
                case .stopped: holder.second?.stop()
                case .released: holder.second = nil
                }
                log.append("first died; second \(ending.rawValue)")
            }
        ) { _ in }
        holder.second = Observing(messenger!, whenObservedDies: { log.append("second died") }) {
            _ in
        }
        messenger = nil
        #expect(log.elements == ["first died; second \(ending.rawValue)"])
        withExtendedLifetime(first) {}
    }

    @Test func aDeathWatchOfAnObserverThatDiedMeanwhileIsNotCalled() {
        var messenger: Messenger<Int>? = Messenger<Int>()
        let log = Recording<String>()
        let first = TestObserver()
        let box = Box(TestObserver())
        let secondFreed: WeakBox<TestObserver>
        first.observeDeath(of: messenger!) {
            _ = box.take()  // the second observer's last reference goes here
            log.append("first told")
        }
        do {
            let second = box.take()!
            secondFreed = WeakBox(second)
            second.observeDeath(of: messenger!) {
                log.append("second told, its observer freed: \(secondFreed.isFreed)")
            }
            box.put(second)
        }
        messenger = nil
        #expect(secondFreed.isFreed)
        #expect(log.elements == ["first told"])
    }
}

/// A watch of an object's death survives the object ending its observations (found by an
/// adversarial round: `stopBeingObserved()`, or a path that stops, took the watches out without
/// telling them, so they never heard of the death).
@Suite("Death watches after the observed side stops")
struct DeathWatchesAfterTheObservedSideStopsTests {
    @Test func aDeathWatchIsToldOfADeathAfterStopBeingObserved() {
        var messenger: Messenger<Int>? = Messenger<Int>()
        let observer = TestObserver()
        let log = Recording<String>()
        observer.observeDeath(of: messenger!) { log.append("died") }
        observer.observe(messenger!) { log.append("message \($0)") }
        messenger!.stopBeingObserved()
        #expect(messenger!.observationCount == 1)
        messenger!.send(1)
        messenger = nil
        #expect(log.elements == ["died"])
    }

    @Test func theLastMessageObservationEndingAfterStopBeingObservedTellsTheStateHandler() {
        let messenger = Messenger<Int>()
        let observer = TestObserver()
        let states = Recording<Bool>()
        messenger.whenObservationStateChanges { states.append($0) }
        observer.observe(messenger) { _ in }
        messenger.stopBeingObserved()
        #expect(states.elements == [true, false])
        observer.observeDeath(of: messenger) {}
        messenger.stopBeingObserved()
        #expect(states.elements == [true, false, true])
        #expect(messenger.isObserved)
    }
}
