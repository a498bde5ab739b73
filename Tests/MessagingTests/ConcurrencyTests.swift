import Dispatch
import HeraldTestSupport
import Messaging
import Synchronization
import Testing

/// Promise 8: any method from any thread; one message at a time, in acceptance order. CI runs this
/// suite again under the thread sanitizer (`swift test --sanitize=thread --filter Concurrency`).
@Suite("Concurrency")
struct ConcurrencyTests {
    struct Stamp: Sendable {
        let thread: Int
        let index: Int
    }

    /// Detects two handlers running at once.
    final class OverlapDetector: Sendable {
        private let inside = Atomic<Int>(0)
        private let overlaps = Atomic<Int>(0)

        func enter() {
            if inside.add(1, ordering: .acquiringAndReleasing).newValue != 1 {
                overlaps.add(1, ordering: .relaxed)
            }
        }
        func leave() { inside.subtract(1, ordering: .acquiringAndReleasing) }
        var overlapCount: Int { overlaps.load(ordering: .relaxed) }
    }

    @Test func concurrentSendsLoseNothingKeepEachThreadsOrderAndNeverOverlap() {
        let threads = 4
        let perThread = 2_000
        let messenger = SharedMessenger<Stamp>()
        let detector = OverlapDetector()
        let received = Recording<Stamp>()
        let observer = TestObserver()
        observer.observe(messenger) { stamp in
            detector.enter()
            received.append(stamp)
            detector.leave()
        }

        concurrently(threads: threads) { thread in
            for index in 0..<perThread { messenger.send(Stamp(thread: thread, index: index)) }
        }

        let stamps = received.elements
        #expect(stamps.count == threads * perThread)
        #expect(detector.overlapCount == 0)
        for thread in 0..<threads {
            let order = stamps.filter { $0.thread == thread }.map(\.index)
            #expect(order == Array(0..<perThread), "thread \(thread) order")
        }
    }

    @Test func concurrentVariableSetsDeliverAConsistentChainOfUpdates() {
        let number = Var(-1)
        let updates = Recording<Update<Int>>()
        let observer = TestObserver()
        observer.observe(number) { update in updates.append(update) }

        concurrently(threads: 4) { thread in
            for index in 0..<1_000 { number.value = thread * 10_000 + index }
        }

        let chain = updates.elements
        #expect(chain.count == 4_000)
        #expect(chain.first?.old == -1)
        for (previous, next) in zip(chain, chain.dropFirst()) where previous.new != next.old {
            Issue.record("update \(next) does not follow \(previous)")
            break
        }
        #expect(chain.last?.new == number.value)
    }

    @Test func observationsStartingAndStoppingDuringSendsAreSafe() {
        let messenger = SharedMessenger<Int>()
        let steady = RecordingObserver<Int>()
        steady.record(messenger)

        concurrently(threads: 4) { thread in
            if thread == 0 {
                for number in 0..<2_000 { messenger.send(number) }
            } else {
                for _ in 0..<500 {
                    let churner = TestObserver()
                    churner.observe(messenger) { _ in }
                    if Bool.random() { churner.stopObserving(messenger) }
                    // otherwise the churner dies here, ending its observation
                }
            }
        }

        #expect(steady.messages.elements == Array(0..<2_000))
        #expect(messenger.observationCount == 1)
    }

    @Test func aStopOnAnotherThreadEndsDeliveryForLaterMessages() {
        let messenger = SharedMessenger<Int>()
        for _ in 0..<200 {
            let observer = RecordingObserver<Int>()
            observer.record(messenger)
            concurrently(threads: 2) { thread in
                if thread == 0 {
                    for number in 0..<50 { messenger.send(number) }
                } else {
                    observer.stopObserving(messenger)
                    messenger.send(-1)  // accepted after the stop returned
                }
            }
            #expect(!observer.messages.elements.contains(-1))
        }
    }

    /// While one thread is inside a delivery (held at a gate by the first handler), another
    /// ends hundreds of that messenger's observations and starts new ones. The list is copied
    /// once for the running delivery and then changed in place; the delivery must neither reach
    /// an ended or new observation nor race with those writes (the thread sanitizer checks).
    @Test func manyChangesOnAnotherThreadDuringOneDeliveryTakeEffectAtOnce() {
        let messenger = SharedMessenger<Int>()
        let inDelivery = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        let received = Recording<Int>()
        let observers = (0..<300).map { _ in TestObserver() }
        let latecomers = (0..<50).map { _ in TestObserver() }
        for (index, observer) in observers.enumerated() {
            observer.observe(messenger) { message in
                if index == 0, message == 1 {
                    inDelivery.signal()
                    resume.wait()
                }
                received.append(index)
            }
        }

        concurrently(threads: 2) { thread in
            if thread == 0 {
                messenger.send(1)
            } else {
                inDelivery.wait()
                // Two thirds: more than half of the slots become holes, so the list compacts
                // (in place, in the copy made for these changes) while the delivery reads the
                // snapshot.
                for (index, observer) in observers.enumerated() where index % 3 != 0 {
                    observer.stopObserving(messenger)
                }
                for (number, latecomer) in latecomers.enumerated() {
                    latecomer.observe(messenger) { _ in received.append(1_000 + number) }
                }
                resume.signal()
            }
        }
        // Kept alive to the end: an optimized build may free them after their last use above.
        withExtendedLifetime((observers, latecomers)) {
            messenger.send(2)

            let kept = Array(stride(from: 0, to: 300, by: 3))
            #expect(received.elements == kept + kept + Array(1_000..<1_050))
            #expect(messenger.observationCount == 100 + 50)
        }
    }

    #if DEBUG  // the hook exists in debug builds only
        /// An observation that the observed side ends between its messenger registering it and its
        /// receiver taking it (`stopBeingObserved()` on another thread; the hook runs it in that
        /// window deterministically) still reports its end, once: a `messages` stream or a path
        /// waiting for that report would otherwise wait forever.
        @Test func anObservationEndedByTheObservedSideWhileStartingReportsItsEnd() {
            let messenger = SharedMessenger<Int>()
            let ended = Atomic<Int>(0)
            let observer = ReportingObserver { ended.add(1, ordering: .relaxed) }
            observer.receiver.beforeTakingAnObservation { messenger.stopBeingObserved() }
            observer.observe(messenger) { _ in }

            #expect(messenger.observationCount == 0)
            #expect(!observer.isObserving(messenger))
            #expect(ended.load(ordering: .relaxed) == 1)
        }
    #endif

    @Test func messengersAndObserversDyingOnDifferentThreadsAreFreed() {
        for _ in 0..<200 {
            var messengers = (0..<4).map { _ in SharedMessenger<Int>() }
            var observers = (0..<4).map { _ in TestObserver() }
            var canaries = (0..<16).map { _ in Canary() }
            for (index, observer) in observers.enumerated() {
                for (offset, messenger) in messengers.enumerated() {
                    let canary = canaries[index * 4 + offset]
                    observer.observe(messenger) { [canary] _ in _ = canary }
                }
            }
            let freed: [() -> Bool] =
                messengers.map { WeakBox($0) }.map { box in { box.isFreed } }
                + observers.map { WeakBox($0) }.map { box in { box.isFreed } }
            let canaryBoxes = canaries.map { WeakBox($0) }
            canaries = []  // from now on only the handlers hold them
            let holder = Holder(messengers: messengers, observers: observers)
            messengers = []
            observers = []
            concurrently(threads: 3) { thread in
                switch thread {
                case 0: holder.dropMessengers()
                case 1: holder.dropObservers()
                default: holder.sendToAll()
                }
            }
            let objectsFreed = freed.allSatisfy { $0() }
            let capturesFreed = canaryBoxes.allSatisfy { $0.isFreed }
            #expect(objectsFreed)
            #expect(capturesFreed)
        }
    }

    @Test func stopBeingObservedRacingWithObserveLeaksNothing() {
        let messenger = SharedMessenger<Int>()
        let observer = TestObserver()
        let boxes = Recording<WeakBox<Canary>>()
        concurrently(threads: 2) { thread in
            if thread == 0 {
                for _ in 0..<5_000 {
                    let canary = Canary()
                    boxes.append(WeakBox(canary))
                    observer.observe(messenger) { [canary] _ in _ = canary }
                }
            } else {
                for _ in 0..<5_000 { messenger.stopBeingObserved() }
            }
        }
        messenger.stopBeingObserved()
        #expect(messenger.observationCount == 0)
        #expect(!observer.isObserving(messenger))
        let alive = boxes.elements.filter { !$0.isFreed }.count
        #expect(alive == 0, "\(alive) handlers (and what they captured) still alive")
    }

    @Test func variableSendRacingWithSetsKeepsTheChainOfUpdates() {
        let number = Var(0)
        let updates = Recording<Update<Int>>()
        let observer = TestObserver()
        observer.observe(number) { updates.append($0) }
        concurrently(threads: 2) { thread in
            for index in 1...5_000 {
                if thread == 0 { number.value = index } else { number.send() }
            }
        }
        let chain = updates.elements
        let broken = zip(chain, chain.dropFirst()).filter { $0.new != $1.old }.count
        #expect(broken == 0, "\(broken) updates whose old is not the previous new")
        #expect(chain.last?.new == number.value)
    }

    @Test func stopBeingObservedByAnObserverRacingWithObserverDeathDoesNotDeadlock() {
        let finished = finishes(within: 60) {
            let messenger = SharedMessenger<Int>()
            let fixed = TestObserver()
            let others = (0..<16).map { _ in TestObserver() }
            for other in others { other.observe(messenger) { _ in } }
            concurrently(threads: 3) { thread in
                if thread == 0 {
                    for _ in 0..<20_000 { messenger.stopBeingObserved(by: fixed) }
                } else {
                    for _ in 0..<20_000 {
                        let observer = TestObserver()
                        observer.observe(messenger) { _ in }
                    }
                }
            }
            // (`_ = others` would not keep them alive in an optimized build.)
            withExtendedLifetime(others) { #expect(messenger.observationCount == 16) }
        }
        #expect(finished, "deadlocked")
    }

    @Test func observationCountsStayExactUnderConcurrentChurn() {
        let messenger = SharedMessenger<Int>()
        let states = Recording<Bool>()
        messenger.whenObservationStateChanges { states.append($0) }
        concurrently(threads: 4) { _ in
            for _ in 0..<500 {
                let observer = TestObserver()
                observer.observe(messenger) { _ in }
                observer.stopObserving()
            }
        }
        #expect(messenger.observationCount == 0)
        let transitions = states.elements
        // Transitions alternate strictly, starting with "observed" and ending with "unobserved".
        #expect(transitions.first == true)
        #expect(transitions.last == false)
        #expect(zip(transitions, transitions.dropFirst()).allSatisfy { $0 != $1 })
    }
}

/// Holds objects that the concurrency tests release from different threads.
private final class Holder: @unchecked Sendable {
    private let lock = NSLockLike()
    private var messengers: [SharedMessenger<Int>]
    private var observers: [TestObserver]

    init(messengers: [SharedMessenger<Int>], observers: [TestObserver]) {
        self.messengers = messengers
        self.observers = observers
    }

    func dropMessengers() {
        let dropped = lock.withLock { () -> [SharedMessenger<Int>] in
            defer { messengers = [] }
            return messengers
        }
        _ = dropped  // released here, outside the lock
    }

    func dropObservers() {
        let dropped = lock.withLock { () -> [TestObserver] in
            defer { observers = [] }
            return observers
        }
        _ = dropped
    }

    func sendToAll() {
        let current = lock.withLock { messengers }
        for messenger in current { messenger.send(1) }
    }
}

/// An observer whose receiver reports each observation that the observed side ends.
private final class ReportingObserver: Observer {
    let receiver: Receiver

    init(_ observationEnded: @escaping @Sendable () -> Void) {
        receiver = Receiver(whenAnObservationEnds: observationEnded)
    }
}
