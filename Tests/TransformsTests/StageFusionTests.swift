import Dispatch
import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import Transforms

/// How many links are fused with `link` (0 when it is in no run).
func fusedCount(_ link: any FusionLink) -> Int {
    StageFusion.run(of: link)?.members.count ?? 0
}

/// Holds a delivery on another thread at a known point: `start` runs `body` on another thread
/// and returns once it reached `here()`; `finish` lets it go on and waits for it to end.
final class PausedDelivery: @unchecked Sendable {
    private let reached = DispatchSemaphore(value: 0)
    private let release = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    func here() {
        reached.signal()
        release.wait()
    }

    func start(_ body: @escaping @Sendable () -> Void) {
        DispatchQueue(label: "paused delivery").async { [done] in
            body()
            done.signal()
        }
        reached.wait()
    }

    func finish() {
        release.signal()
        done.wait()
    }
}

/// Counts how often a stage runs, and whether it ever ran concurrently with itself.
final class StageProbe: @unchecked Sendable {
    private let running = Atomic<Int>(0)
    private let calls = Atomic<Int>(0)
    private let overlaps = Atomic<Int>(0)

    /// Call at the start of the stage; `end()` at its end.
    func begin() {
        calls.add(1, ordering: .relaxed)
        if running.add(1, ordering: .acquiringAndReleasing).newValue > 1 {
            overlaps.add(1, ordering: .relaxed)
        }
    }

    func end() { running.subtract(1, ordering: .acquiringAndReleasing) }

    var callCount: Int { calls.load(ordering: .relaxed) }
    var overlapCount: Int { overlaps.load(ordering: .relaxed) }
}

/// Stand-alone chains of `Map`s and `Filter`s lend their stages to the transform downstream, so a
/// chain costs one messenger hop (Docs/Transforms.md, "Stand-alone chains are fused"). These
/// tests pin down that fusion changes nothing a user can see.
@Suite("Stage fusion")
struct StageFusionTests {
    @Test func aChainOfStandAloneTransformsIsFusedAndDeliversWhatEachStageMakes() {
        let number = Var<Int?>(nil)
        let new = number.new()
        let unwrapped = new.unwrap(0)
        let incremented = unwrapped.map { $0 + 1 }
        let even = incremented.filter { $0 % 2 == 0 }
        let observer = RecordingObserver<Int>()
        observer.record(even)
        #expect(fusedCount(even.link) == 4)
        #expect(fusedCount(new.link) == 4)

        let author = Author("editor")
        for value in [1, nil, 3, 4, 5] { number.set(value, as: author) }
        #expect(observer.messages.elements == [2, 4, 6])
        let authors = observer.authors.elements.map(ObjectIdentifier.init)
        #expect(authors == Array(repeating: ObjectIdentifier(author), count: 3))
        // Fusion leaves the objects' observer counts as they were.
        #expect(number.observationCount == 1)
        #expect(new.observationCount == 1)
        #expect(unwrapped.observationCount == 1)
        #expect(even.observationCount == 1)
    }

    @Test func eachStageOfAFusedChainRunsOncePerMessage() {
        let source = Messenger<Int>()
        let probe = StageProbe()
        let first = source.map { value -> Int in
            probe.begin()
            defer { probe.end() }
            return value * 10
        }
        let second = first.map { $0 + 1 }
        let observer = RecordingObserver<Int>()
        observer.record(second)
        #expect(fusedCount(second.link) == 2)
        for value in 1...5 { source.send(value) }
        #expect(probe.callCount == 5)
        #expect(observer.messages.elements == [11, 21, 31, 41, 51])
    }

    @Test func aMessageSentIntoAnIntermediateGoesThroughTheStagesAfterIt() {
        let source = Messenger<Int>()
        let doubled = source.map { $0 * 2 }
        let plusOne = doubled.map { $0 + 1 }
        let last = plusOne.filter { $0 > 0 }
        let observer = RecordingObserver<Int>()
        observer.record(last)
        #expect(fusedCount(last.link) == 3)

        let author = Author("direct")
        source.send(1)
        plusOne.send(100, from: author)  // only `last`'s stage
        doubled.send(10)  // `plusOne`'s and `last`'s stages
        plusOne.send(-5)  // filtered out by `last`
        source.send(2)
        #expect(observer.messages.elements == [3, 100, 11, 5])
        let authors = observer.authors.elements.map(ObjectIdentifier.init)
        #expect(authors[1] == ObjectIdentifier(author))
        #expect(authors[2] == ObjectIdentifier(doubled))
        #expect(fusedCount(last.link) == 3)
    }

    @Test func aMessageSentIntoAnIntermediateFromAHandlerComesAfterTheCurrentMessage() {
        let source = Messenger<Int>()
        let middle = source.map { $0 }
        let last = middle.map { $0 }
        let observer = TestObserver()
        let received = Recording<Int>()
        observer.observe(last) { value in
            received.append(value)
            if value == 1 { middle.send(2) }
        }
        #expect(fusedCount(last.link) == 2)
        let late = TestObserver()
        late.observe(source) { value in if value == 1 { source.send(3) } }
        source.send(1)
        // As without fusion: the message sent into `middle` during the delivery of 1 waits for
        // that delivery, and comes before 3, which `source` accepted after it.
        #expect(received.elements == [1, 2, 3])
    }

    @Test func anIntermediateThatGainsAnObserverStopsLendingItsStageAndItsStageStillRunsOnce() {
        let source = Messenger<Int>()
        let probe = StageProbe()
        let middle = source.map { value -> Int in
            probe.begin()
            defer { probe.end() }
            return value + 1
        }
        let last = middle.map { $0 * 10 }
        let endObserver = RecordingObserver<Int>()
        endObserver.record(last)
        #expect(fusedCount(last.link) == 2)

        source.send(1)
        let middleObserver = RecordingObserver<Int>()
        middleObserver.record(middle)
        #expect(fusedCount(last.link) == 0)
        source.send(2)
        #expect(middleObserver.messages.elements == [3])
        #expect(endObserver.messages.elements == [20, 30])
        #expect(probe.callCount == 2)

        // When it is left alone again, it lends its stage again.
        middleObserver.stopObserving()
        #expect(fusedCount(last.link) == 2)
        source.send(3)
        #expect(endObserver.messages.elements == [20, 30, 40])
        #expect(middleObserver.messages.elements == [3])
        #expect(probe.callCount == 3)
    }

    @Test func aChainSharedByTwoDownstreamTransformsRunsTheSharedStageOncePerMessage() {
        let source = Messenger<Int>()
        let probe = StageProbe()
        let shared = source.map { value -> Int in
            probe.begin()
            defer { probe.end() }
            return value + 1
        }
        let left = shared.map { $0 * 2 }
        let right = shared.filter { $0 % 2 == 0 }
        let leftObserver = RecordingObserver<Int>()
        let rightObserver = RecordingObserver<Int>()
        leftObserver.record(left)
        rightObserver.record(right)
        #expect(fusedCount(shared.link) == 0)
        for value in 1...4 { source.send(value) }
        #expect(probe.callCount == 4)
        #expect(leftObserver.messages.elements == [4, 6, 8, 10])
        #expect(rightObserver.messages.elements == [2, 4])
    }

    @Test func aDroppedBranchLetsTheOtherFuse() {
        let source = Messenger<Int>()
        let shared = source.map { $0 + 1 }
        let left = shared.map { $0 * 2 }
        let observer = RecordingObserver<Int>()
        observer.record(left)
        do {
            let right = shared.map { $0 * 3 }
            #expect(fusedCount(left.link) == 0)
            #expect(shared.observationCount == 2)
            withExtendedLifetime(right) {}
        }
        #expect(fusedCount(left.link) == 2)
        source.send(1)
        #expect(observer.messages.elements == [4])
    }

    @Test func replacingAnOriginInTheMiddleOfAFusedChainRewiresIt() {
        let first = Messenger<Int>()
        let second = Messenger<Int>()
        let middle = first.map { $0 + 1 }
        let last = middle.map { $0 * 10 }
        let observer = RecordingObserver<Int>()
        observer.record(last)
        #expect(fusedCount(last.link) == 2)

        first.send(1)
        middle.origin = second
        #expect(fusedCount(last.link) == 2)
        #expect(first.observationCount == 0)
        first.send(2)  // no longer observed
        second.send(3)
        #expect(observer.messages.elements == [20, 40])

        // The end's own origin replaced by an unrelated transform.
        let other = second.map { $0 - 1 }
        last.origin = other
        #expect(fusedCount(last.link) == 2)
        #expect(fusedCount(middle.link) == 0)
        second.send(5)
        #expect(observer.messages.elements == [20, 40, 40])
    }

    @Test func stoppingTheObservationsOfAnIntermediateCutsTheChainAtOnce() {
        let source = Messenger<Int>()
        let middle = source.map { $0 }
        let last = middle.map { $0 }
        let observer = TestObserver()
        let received = Recording<Int>()
        observer.observe(last) { value in
            received.append(value)
            // Inside the fused delivery of 1: from now on `last` hears nothing of `middle`.
            if value == 1 { middle.stopBeingObserved() }
        }
        source.send(1)
        source.send(2)
        middle.send(3)
        #expect(received.elements == [1])
        #expect(fusedCount(last.link) == 0)
        #expect(middle.observationCount == 0)
    }

    @Test func intermediatesNobodyHoldsLiveAsLongAsTheChainAndAreFreedWithIt() {
        let source = Messenger<Int>()
        var chain: Filter<Map<Map<Messenger<Int>, Int>, Int>, Int>? = source.map { $0 + 1 }
            .map { $0 * 2 }.filter { $0 > 0 }
        let middle = WeakBox(chain!.origin)
        let first = WeakBox(chain!.origin.origin)
        let observer = RecordingObserver<Int>()
        observer.record(chain!)
        #expect(fusedCount(chain!.link) == 3)
        source.send(1)
        #expect(observer.messages.elements == [4])
        chain = nil
        #expect(middle.isFreed)
        #expect(first.isFreed)
        #expect(source.observationCount == 0)
        source.send(2)
        #expect(observer.messages.elements == [4])
    }

    @Test func aFusedChainOverAVariableStaysACacheAndStartsWithItsValue() {
        let title = Var("Draft")
        let length = title.new().map { $0.count }
        let observer = TestObserver()
        let received = Recording<Int>()
        observer.observe(length, options: .initial) { received.append($0) }
        #expect(fusedCount(length.link) == 2)
        #expect(length.latestMessage == 5)
        title.value = "Final draft"
        #expect(received.elements == [5, 11])
    }

    /// Found by review: setting the origin a link already has, during a delivery, left the run
    /// with the old connection's closed gate, and the next message was lost.
    @Test func settingTheOriginALinkAlreadyObservesChangesNothing() {
        let source = Messenger<Int>()
        let middle = source.map { $0 }
        let last = middle.map { $0 }
        let received = Recording<Int>()
        let observer = TestObserver()
        observer.observe(last) { value in
            received.append(value)
            if value == 1 {
                source.send(2)
                last.origin = middle
                middle.origin = source
            }
        }
        source.send(1)
        #expect(received.elements == [1, 2])
        #expect(fusedCount(last.link) == 2)
    }

    /// Found by an adversarial round: a head link cut from its origin
    /// (`stopBeingObserved()`), then given the same origin again, took the fused run's place
    /// in the origin's order of observers only after the run was formed anew.
    @Test func aHeadCutFromItsOriginAndGivenItAgainIsFusedAgainInItsNewPlace() {
        let source = Messenger<Int>()
        let middle = source.map { $0 }
        let last = middle.map { $0 }
        let received = Recording<String>()
        let end = TestObserver()
        end.observe(last) { received.append("end \($0)") }
        source.stopBeingObserved()
        source.send(0)
        middle.send(9)
        middle.origin = source
        #expect(fusedCount(last.link) == 2)
        let other = TestObserver()
        other.observe(source) { value in
            received.append("other \(value)")
            if value == 1 { source.send(2) }
        }
        source.send(1)
        #expect(received.elements == ["end 9", "end 1", "other 1", "end 2", "other 2"])
    }

    /// What fusion does differently, as Docs/Transforms.md says: an observation of an object in
    /// the middle that starts while the chain's origin delivers receives what the origin accepts
    /// after it started (here: not 2, which the origin had accepted before).
    @Test func anObservationOfAnIntermediateStartedInADeliveryGetsWhatTheOriginAcceptsAfter() {
        let source = Messenger<Int>()
        let middle = source.map { $0 + 1 }
        let last = middle.map { $0 * 10 }
        let middleObserver = RecordingObserver<Int>()
        let observer = TestObserver()
        observer.observe(last) { value in
            if value == 20 {
                source.send(2)
                middleObserver.record(middle)
                source.send(3)
            }
        }
        source.send(1)
        #expect(middleObserver.messages.elements == [4])
    }

    /// What fusion does differently, as Docs/Transforms.md says: a message sent into an object in
    /// the middle while the chain's origin delivers waits for what the origin accepted before.
    @Test func aMessageSentIntoAnIntermediateInADeliveryWaitsForWhatTheOriginAcceptedBefore() {
        let source = Messenger<Int>()
        let middle = source.map { $0 }
        let last = middle.map { $0 }
        let received = Recording<Int>()
        let observer = TestObserver()
        observer.observe(last) { value in
            received.append(value)
            if value == 1 {
                source.send(2)
                middle.send(100)
            }
        }
        source.send(1)
        #expect(received.elements == [1, 2, 100])
    }

    /// What a dead transform's stage captured is released outside the fusion lock: its
    /// `deinit` may use Herald (here: end an observation of another `Map`, whose count handler
    /// settles again).
    @Test func whatADroppedStageCapturedMayUseHeraldWhenItIsFreed() {
        let source = Messenger<Int>()
        let side = source.map { $0 }
        let sideObserver = TestObserver()
        sideObserver.observe(side) { _ in }
        let middle = source.map { $0 }
        let freed = Recording<Bool>()
        do {
            let tripwire = OnDeinit {
                sideObserver.stopObserving()
                freed.append(true)
            }
            let last = middle.map { value -> Int in
                withExtendedLifetime(tripwire) {}
                return value
            }
            let observer = RecordingObserver<Int>()
            observer.record(last)
            #expect(fusedCount(last.link) == 2)
            source.send(1)
            #expect(observer.messages.elements == [1])
        }
        #expect(freed.elements == [true])
        #expect(fusedCount(middle.link) == 0)
        #expect(side.observationCount == 0)
    }

    // Found by the second adversarial round: a message routed to the root's turn was checked
    // against the link's gate when it arrived there, which a re-wiring had replaced.

    /// A message sent into an intermediate waits for the root's delivery (documented). If the
    /// link after it leaves the intermediate meanwhile (its origin is replaced), the message must
    /// not reach it afterwards: it was sent into an object the link no longer observes.
    @Test func aRoutedMessageDoesNotReachALinkThatLeftItsOriginWhileItWaited() {
        let source = Messenger<Int>()
        let other = Messenger<Int>()
        let middle = source.map { $0 }
        let otherMiddle = other.map { $0 }
        let last = middle.map { $0 }
        let received = Recording<String>()
        let observer = TestObserver()
        observer.observe(last) { received.append("\($0)") }
        let trigger = TestObserver()
        trigger.observe(source) { value in
            if value == 1 {
                middle.send(100)  // waits for this delivery of `source`
                last.origin = otherMiddle  // `last` leaves `middle`
                received.append("rewired")
            }
        }
        #expect(fusedCount(last.link) == 2)
        source.send(1)
        // Unfused: ["1", "100", "rewired"]. Never acceptable: "100" after "rewired".
        #expect(received.elements.last != "100")
        #expect(received.elements == ["1", "rewired"])
        other.send(7)
        #expect(received.elements.last == "7")
    }

    /// Same, with the intermediate cutting its observers and the link observing it anew: the
    /// message was sent before the new observation started, so it is not for it.
    @Test func aRoutedMessageDoesNotReachAnObservationStartedAfterItWasSent() {
        let source = Messenger<Int>()
        let middle = source.map { $0 }
        let last = middle.map { $0 }
        let received = Recording<String>()
        let observer = TestObserver()
        observer.observe(last) { received.append("\($0)") }
        let trigger = TestObserver()
        trigger.observe(source) { value in
            if value == 1 {
                middle.send(100)
                middle.stopBeingObserved()
                last.origin = middle  // a new observation of `middle`
                received.append("rewired")
            }
        }
        #expect(fusedCount(last.link) == 2)
        source.send(1)
        #expect(received.elements.last != "100")
        source.send(2)
        #expect(received.elements.last == "2")
    }

    /// A linear chain of maps, each adding its own number, with observers that come and go and
    /// messages sent into every object, checked against what each observer must receive.
    @Test(arguments: [1, 2, 3, 4, 5])
    func randomEditsOfAFusedChainDeliverWhatAnUnfusedChainWould(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let source = Messenger<Int>()
        let m1 = source.map { $0 + 1 }
        let m2 = m1.map { $0 + 10 }
        let m3 = m2.map { $0 + 100 }
        let m4 = m3.filter { _ in true }
        let offsets = [0, 1, 11, 111, 111]  // what each object adds to what `source` sends
        let objects: [any ObservableObject<Int>] = [source, m1, m2, m3, m4]
        var observers: [(index: Int, observer: RecordingObserver<Int>, expected: [Int])] = []

        for step in 0..<400 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0, 1:
                let index = Int.random(in: 1..<objects.count, using: &random)
                let observer = RecordingObserver<Int>()
                observer.record(objects[index])
                observers.append((index, observer, []))
            case 2 where !observers.isEmpty:
                let position = Int.random(in: 0..<observers.count, using: &random)
                let removed = observers.remove(at: position)
                removed.observer.stopObserving()
                #expect(removed.observer.messages.elements == removed.expected)
            default:
                let into = Int.random(in: 0..<objects.count, using: &random)
                let value = step * 1_000
                objects[into].send(value)
                for position in observers.indices where observers[position].index >= into {
                    let index = observers[position].index
                    observers[position].expected.append(value + offsets[index] - offsets[into])
                }
            }
        }
        for entry in observers {
            #expect(entry.observer.messages.elements == entry.expected)
        }
    }
}

/// Stage fusion under threads: the stages of a fused chain never run concurrently with
/// themselves. CI runs this suite under the thread sanitizer (`--filter Concurrency`).
@Suite("Stage fusion concurrency")
struct StageFusionConcurrencyTests {
    @Test func aMessageSentIntoAnIntermediateWaitsForTheRootsDelivery() {
        let source = SharedMessenger<Int>()
        let middle = source.map { $0 }
        let probe = StageProbe()
        let pause = PausedDelivery()
        let last = middle.map { value -> Int in
            probe.begin()
            defer { probe.end() }
            if value == 1 { pause.here() }
            return value
        }
        let received = Recording<Int>()
        let observer = TestObserver()
        observer.observe(last) { received.append($0) }
        #expect(fusedCount(last.link) == 2)

        pause.start { source.send(1) }
        // `last`'s stage is running for 1 on the other thread: this message is handed to the
        // root's turn instead of running the stage beside it.
        middle.send(2)
        #expect(received.elements.isEmpty)
        pause.finish()
        #expect(received.elements == [1, 2])
        #expect(probe.overlapCount == 0)
    }

    @Test func anIntermediateThatGainsAnObserverDuringADeliveryGetsEveryLaterMessage() {
        let source = SharedMessenger<Int>()
        let pause = PausedDelivery()
        let middle = source.map { value -> Int in
            if value == 1 { pause.here() }
            return value
        }
        let last = middle.map { $0 }
        let endReceived = Recording<Int>()
        let observer = TestObserver()
        observer.observe(last) { endReceived.append($0) }
        #expect(fusedCount(last.link) == 2)

        pause.start { source.send(1) }
        let middleObserver = RecordingObserver<Int>()
        middleObserver.record(middle)  // while 1 is in `middle`'s stage on the other thread
        source.send(2)  // queued behind 1 and behind the run's dissolution
        pause.finish()
        #expect(middleObserver.messages.elements == [2])
        #expect(endReceived.elements == [1, 2])
        #expect(fusedCount(last.link) == 0)
    }

    @Test func directSendsAndRootSendsFromManyThreadsNeverOverlapAStage() {
        let source = SharedMessenger<Int>()
        let middle = source.map { $0 }
        let probe = StageProbe()
        let last = middle.map { value -> Int in
            probe.begin()
            defer { probe.end() }
            return value
        }
        let received = Recording<Int>()
        let observer = TestObserver()
        observer.observe(last) { received.append($0) }
        concurrently(threads: 4) { thread in
            for index in 0..<500 {
                if thread % 2 == 0 { source.send(index) } else { middle.send(index) }
            }
        }
        #expect(received.count == 2_000)
        #expect(probe.callCount == 2_000)
        #expect(probe.overlapCount == 0)
    }

    /// Found by an adversarial round: a link or transform loaded while the fusion lock was held
    /// could be the last reference (another thread let go meanwhile); releasing it there ran its
    /// `deinit`, whose count handler took the lock again (a trap in debug builds, a deadlock in
    /// release). The moment of the drop is swept across the other thread's settling, so this
    /// catches it in most runs, not every run.
    @Test func droppingAChainWhileAnotherThreadSettlesItsRootNeverReentersTheLock() {
        let iterations = 3_000
        let finished = finishes(within: 60) {
            let base = SharedMessenger<Int>()
            let root = UncheckedBox(base.map { $0 })
            let start = UncheckedBox((0..<iterations).map { _ in SpinBarrier() })
            let end = UncheckedBox((0..<iterations).map { _ in SpinBarrier() })
            let spin = Atomic<Int>(0)
            concurrently(threads: 2) { thread in
                for index in 0..<iterations {
                    if thread == 0 {
                        var last: Map<Map<Map<SharedMessenger<Int>, Int>, Int>, Int>? =
                            root.value.map { $0 }.map { $0 }
                        start.value[index].wait(parties: 2)
                        for _ in 0..<((index % 100) * 8) { spin.add(1, ordering: .relaxed) }
                        last = nil
                        _ = last
                        end.value[index].wait(parties: 2)
                    } else {
                        let extra = TestObserver()
                        extra.observe(root.value) { _ in }
                        start.value[index].wait(parties: 2)
                        extra.stopObserving()
                        end.value[index].wait(parties: 2)
                    }
                }
            }
        }
        #expect(finished)
    }

    // Found by the second adversarial round: the origin setter swapped in its connection before
    // connecting it, so a second setter in between detached a connection that was not yet
    // connected, and the first then connected it for good.
    /// Two threads set a link's origin: the first is stopped (in the new origin's `messenger`
    /// getter) after it swapped in its connection but before it connected it; the second
    /// replaces it meanwhile. The link must end up observing only the last origin.
    @Test func twoThreadsSettingTheOriginLeaveItObservingOnlyTheLastOne() {
        let x = HookedSource()
        let y = HookedSource()
        let z = HookedSource()
        let map = Map(z) { $0 }
        let observer = RecordingObserver<Int>()
        observer.record(map)
        // Access 1: making the connection; access 2: connecting it (after the swap).
        x.blockAt.store(x.accesses.load(ordering: .relaxed) + 2, ordering: .relaxed)
        let box = UncheckedBox(map)
        let done = DispatchSemaphore(value: 0)
        Thread {
            box.value.origin = x
            done.signal()
        }.start()
        x.reached.wait()
        map.origin = y
        x.proceed.signal()
        done.wait()
        #expect(map.origin === y)
        x.inner.send(1)
        y.inner.send(2)
        #expect(observer.messages.elements == [2])
        #expect(x.inner.observationCount == 0)
        #expect(y.inner.observationCount == 1)
    }

    @Test func observersOfAnIntermediateComingAndGoingWhileTheRootSendsLoseNothing() {
        let source = SharedMessenger<Int>()
        let middle = source.map { $0 }
        let last = middle.map { $0 }
        let received = Recording<Int>()
        let observer = TestObserver()
        observer.observe(last) { received.append($0) }
        concurrently(threads: 2) { thread in
            if thread == 0 {
                for index in 0..<2_000 { source.send(index) }
            } else {
                for _ in 0..<200 {
                    let extra = TestObserver()
                    extra.observe(middle) { _ in }
                    extra.stopObserving()
                }
            }
        }
        #expect(received.elements == Array(0..<2_000))
    }
}

/// An observable object whose `messenger` getter can stop a thread at its n-th access.
final class HookedSource: ObservableObject, @unchecked Sendable {
    let inner = Messenger<Int>()
    let accesses = Atomic<Int>(0)
    let blockAt = Atomic<Int>(-1)
    let reached = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)

    var messenger: Messenger<Int> {
        let access = accesses.add(1, ordering: .relaxed).newValue
        if access == blockAt.load(ordering: .relaxed) {
            reached.signal()
            proceed.wait()
        }
        return inner
    }
}
