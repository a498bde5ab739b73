import Dispatch
import Foundation
import HeraldTestSupport
import Synchronization
import Testing
import Transforms

/// Transforms under concurrent use. CI runs this suite under the thread sanitizer too
/// (`--filter Concurrency`).
@Suite("Transforms concurrency")
struct TransformsConcurrencyTests {
    struct Stamp: Sendable, Equatable {
        let thread: Int
        let index: Int
    }

    @Test func concurrentSendsThroughAStandAloneChainLoseNothingAndKeepEachThreadsOrder() {
        let messenger = SharedMessenger<Stamp>()
        let chain = messenger.map { $0 }.filter { $0.index % 2 == 0 }
        let received = Recording<Stamp>()
        let observer = TestObserver()
        observer.observe(chain) { received.append($0) }

        concurrently(threads: 4) { thread in
            for index in 0..<1_000 { messenger.send(Stamp(thread: thread, index: index)) }
        }

        let stamps = received.elements
        #expect(stamps.count == 4 * 500)
        for thread in 0..<4 {
            let order = stamps.filter { $0.thread == thread }.map(\.index)
            #expect(order == Array(stride(from: 0, to: 1_000, by: 2)))
        }
    }

    @Test func replacingTheOriginWhileOriginsSendIsSafe() {
        let first = Var(0)
        let second = Var(0)
        let mapped = first.new().map { $0 }
        let received = Recording<Int>()
        let observer = TestObserver()
        observer.observe(mapped) { received.append($0) }
        let newOf = UncheckedBox((first.new(), second.new()))

        concurrently(threads: 3) { thread in
            switch thread {
            case 0:
                for index in 0..<1_000 {
                    mapped.origin = index % 2 == 0 ? newOf.value.1 : newOf.value.0
                }
            case 1: for value in 1...1_000 { first.value = value }
            default: for value in 1...1_000 { second.value = -value }
            }
        }

        mapped.origin = newOf.value.1
        let before = received.count
        second.value = 42
        #expect(received.elements.count == before + 1)
        #expect(received.elements.last == 42)
        #expect(!newOf.value.0.isObserved)
    }

    @Test func coalesceUnderConcurrentChangesDeliversTheFinalValue() {
        let scheduler = TestMessageScheduler()
        let number = Var(0)
        let received = Recording<Int>()
        let observer = TestObserver()
        observer.observe(number).new().coalesce(on: scheduler).receive { received.append($0) }

        concurrently(threads: 4) { thread in
            for index in 1...500 {
                number.value = thread * 1_000 + index
                if index % 50 == 0 { scheduler.runTurn() }
            }
        }
        scheduler.flush()

        #expect(received.elements.last == number.value)
    }

    @Test func switchingWhileTheInnerObjectsSendIsSafe() {
        let names = (0..<4).map { Var("name \($0)") }
        let selected = Var(0)
        let selectedName = selected.flatMapLatest { names[$0.new] }
        let received = Recording<String>()
        let observer = TestObserver()
        observer.observe(selectedName) { received.append($0.new) }
        let allNames = UncheckedBox(names)

        concurrently(threads: 3) { thread in
            if thread == 0 {
                for index in 0..<1_000 { selected.value = index % 4 }
            } else {
                for index in 0..<1_000 { allNames.value[index % 4].value = "\(thread)-\(index)" }
            }
        }

        selected.value = 3
        names[3].value = "final"
        #expect(received.elements.last == "final")
        #expect(names.filter(\.isObserved).count == 1)
    }

    typealias User = SwitchToLatestTests.User

    /// The handler of an ad hoc `flatMapLatest` gets the inner object's messages and the latest
    /// message of a newly selected one: two messengers, one at a time all the same.
    @Test func anAdHocFlatMapLatestNeverRunsItsHandlerConcurrentlyWithItself() {
        let ann = User("Ann")
        let bob = User("Bob")
        let currentUser = Var<User?>(ann)
        let observer = TestObserver()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let lock = NSLockLike()
        nonisolated(unsafe) var inside = 0
        nonisolated(unsafe) var overlaps = 0
        let received = Recording<String>()
        observer.observe(currentUser).flatMapLatest { $0.new?.name }.new { name in
            lock.withLock {
                inside += 1
                if inside > 1 { overlaps += 1 }
            }
            if name == "Annie" {
                entered.signal()
                release.wait()
            }
            received.append(name)
            lock.withLock { inside -= 1 }
        }

        let finished = DispatchSemaphore(value: 0)
        Thread {
            ann.name.value = "Annie"  // its handler waits for `release`
            finished.signal()
        }.start()
        entered.wait()
        currentUser.value = bob  // the handler is busy on the other thread: this waits its turn
        release.signal()
        finished.wait()

        #expect(lock.withLock { overlaps } == 0)
        #expect(received.elements == ["Annie", "Bob"])
    }

    #if DEBUG  // the hook exists in debug builds only
        /// A message the old inner object sent just before a re-wire must not be forwarded after the
        /// new inner object's latest message.
        @Test func aStaleInnerMessageNeverWinsARaceWithARewire() {
            for adHoc in [false, true] {
                let ann = User("Ann")
                let bob = User("Bob")
                let currentUser = Var<User?>(ann)
                let received = Recording<String>()
                let observer = TestObserver()
                let standAlone = currentUser.flatMapLatest { $0.new?.name }
                if adHoc {
                    observer.observe(currentUser).flatMapLatest { $0.new?.name }.new {
                        received.append($0)
                    }
                } else {
                    observer.observe(standAlone) { received.append($0.new) }
                }
                // Accepted by ann's observation, then paused before it is forwarded.
                let paused = PausedBeforeForwarding { ann.name.value = "Annie" }
                currentUser.value = bob  // re-wires to bob and forwards "Bob"
                paused.resume()

                #expect(received.elements.last == "Bob", "ad hoc: \(adHoc)")
                #expect(!received.elements.contains("Annie"), "ad hoc: \(adHoc)")
            }
        }
    #endif

    /// Ad hoc flatMapLatest over an origin that is not a cache: a selection made by a message
    /// sent as the observation starts (here by the origin's 0→1 hook, "start loading now") is
    /// kept: the initial wiring, handled after it, reads older state.
    @Test func adHocSelectionSentWhileTheObservationStartsIsKept() {
        let name = Var("Ann")
        let users = Messenger<Var<String>?>()
        users.whenObservationStateChanges { [weak users] isObserved in
            if isObserved { users?.send(name) }
        }
        let observer = TestObserver()
        let received = Recording<String>()
        observer.observe(users).switchToLatest().new { received.append($0) }

        name.value = "Annie"

        #expect(received.elements == ["Ann", "Annie"])
        #expect(name.isObserved)
    }

    #if DEBUG  // the hook exists in debug builds only
        /// Over a cache, the origin's 0→1 hook selects before the initial wiring is handled: the
        /// wiring must not re-wire (and so drop a change the first inner observation accepted).
        @Test func startAfterASelectionDoesNotLoseAChange() {
            let ann = User("Ann")
            let currentUser = Var<User?>(nil)
            currentUser.whenObservationStateChanges { [weak currentUser] isObserved in
                if isObserved { currentUser?.value = ann }
            }
            let observer = TestObserver()
            let received = Recording<String>()
            let paused = Recording<PausedBeforeForwarding>()
            observer.observe(currentUser).flatMapLatest { $0.new?.name }.new { name in
                received.append(name)
                guard name == "Ann" else { return }
                // Inside `receive`: the origin's observation started, the initial wiring did not.
                paused.append(PausedBeforeForwarding { ann.name.value = "Anna" })
            }
            // `receive` returned: the initial wiring was handled.
            paused.elements.first?.resume()

            #expect(ann.name.value == "Anna")
            #expect(received.elements == ["Ann", "Anna"])
        }
    #endif
}

#if DEBUG  // the hook exists in debug builds only
    /// Runs `send` on a new thread whose inner-message forwarding pauses (through the engine's
    /// `beforeForwarding` hook) until `resume()`; returns once the pause is reached.
    final class PausedBeforeForwarding: Sendable {
        private let release = DispatchSemaphore(value: 0)
        private let finished = DispatchSemaphore(value: 0)

        init(_ send: @escaping @Sendable () -> Void) {
            let entered = DispatchSemaphore(value: 0)
            let (release, finished) = (release, finished)
            Thread {
                SwitchTestHooks.$beforeForwarding.withValue({
                    entered.signal()
                    release.wait()
                }) {
                    send()
                }
                finished.signal()
            }.start()
            entered.wait()
        }

        /// Lets the paused forwarding go on, and waits for the thread to finish.
        func resume() {
            release.signal()
            finished.wait()
        }
    }
#endif
