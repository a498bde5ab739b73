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
        let scheduler = TestScheduler()
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
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let finished = DispatchSemaphore(value: 0)
            Thread {
                // Accepted by ann's observation, then paused before it is forwarded.
                SwitchTestHooks.$beforeForwarding.withValue({
                    entered.signal()
                    release.wait()
                }) {
                    ann.name.value = "Annie"
                }
                finished.signal()
            }.start()
            entered.wait()
            currentUser.value = bob  // re-wires to bob and forwards "Bob"
            release.signal()
            finished.wait()

            #expect(received.elements.last == "Bob", "ad hoc: \(adHoc)")
            #expect(!received.elements.contains("Annie"), "ad hoc: \(adHoc)")
        }
    }
}
