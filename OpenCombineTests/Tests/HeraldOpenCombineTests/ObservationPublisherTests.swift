import Dispatch
import HeraldOpenCombine
import KeyPathBridge
import OpenCombine
import Synchronization
import Testing

/// `publisher()` (the HeraldCombine product's source, compiled against OpenCombine): what a
/// Combine user relies on — values, demand, cancellation and lifetimes.
@Suite("publisher(): Herald messages as a Combine publisher")
struct ObservationPublisherTests {
    final class Person {
        @ObservableVar var first = "Ada"
        @ObservableVar var last = "Lovelace"
        @Synthetic({ (p: Person) in p.first + " " + p.last }) var fullName: String
    }

    /// A subscriber that asks for `initial` values, then `more` after each.
    final class CountingSubscriber<Input>: Subscriber, @unchecked Sendable {
        typealias Failure = Never
        let initial: Subscribers.Demand
        let more: Subscribers.Demand
        let cancelsAtOnce: Bool
        var received: [Input] = []
        var completions = 0
        var subscription: (any Subscription)?

        init(
            initial: Subscribers.Demand, more: Subscribers.Demand = .none,
            cancelsAtOnce: Bool = false
        ) {
            self.initial = initial
            self.more = more
            self.cancelsAtOnce = cancelsAtOnce
        }

        func receive(subscription: any Subscription) {
            self.subscription = subscription
            subscription.request(initial)
            if cancelsAtOnce { subscription.cancel() }
        }

        func receive(_ input: Input) -> Subscribers.Demand {
            received.append(input)
            return more
        }

        func receive(completion: Subscribers.Completion<Never>) {
            completions += 1
        }
    }

    @Test func aVariablesPublisherPublishesItsUpdates() {
        let title = Var("Draft")
        var updates: [Update<String>] = []
        let subscription = title.publisher().sink { updates.append($0) }
        title.value = "Review"
        title.value = "Final"
        #expect(updates == [Update("Draft", "Review"), Update("Review", "Final")])
        withExtendedLifetime(subscription) {}
    }

    @Test func aMessengersPublisherPublishesWhatItSendsFromTheSubscriptionOn() {
        let messenger = Messenger<String>()
        messenger.send("before")
        var received: [String] = []
        let subscription = messenger.publisher().sink { received.append($0) }
        messenger.send("one")
        messenger.send("two", from: nil)
        #expect(received == ["one", "two"])
        withExtendedLifetime(subscription) {}
    }

    @Test func operatorsChainOnThePublisher() {
        let person = Person()
        var names: [String] = []
        let subscription = person.$fullName.publisher().map(\.new).sink { names.append($0) }
        person.first = "Grace"
        person.last = "Hopper"
        person.last = "Hopper"  // no change: nothing published
        #expect(names == ["Grace Lovelace", "Grace Hopper"])
        withExtendedLifetime(subscription) {}
    }

    @Test func aSubscriptionIsAnObservationUntilCancelled() {
        let count = Var(0)
        #expect(count.observationCount == 0)
        var received: [Int] = []
        let subscription = count.publisher().sink { received.append($0.new) }
        #expect(count.observationCount == 1)
        count.value = 1
        subscription.cancel()
        #expect(count.observationCount == 0)
        count.value = 2
        #expect(received == [1])
    }

    @Test func releasingTheCancellableEndsTheObservation() {
        let count = Var(0)
        var subscription: AnyCancellable? = count.publisher().sink { _ in }
        #expect(count.observationCount == 1)
        subscription = nil
        #expect(count.observationCount == 0)
        _ = subscription
    }

    @Test func aSynthesizedPropertyIsEagerWhileSubscribed() {
        let person = Person()
        let subscription = person.$fullName.publisher().sink { _ in }
        #expect(person.$fullName.isValid)
        person.first = "Grace"
        // Observed means eager: recomputed as soon as it was invalidated.
        #expect(person.$fullName.isValid)
        subscription.cancel()
        person.first = "Ada"
        #expect(!person.$fullName.isValid)  // lazy again
    }

    @Test func messagesBeyondTheDemandAreDropped() {
        let count = Var(0)
        let subscriber = CountingSubscriber<Update<Int>>(initial: .max(2))
        count.publisher().subscribe(subscriber)
        for value in 1...4 { count.value = value }
        #expect(subscriber.received.map(\.new) == [1, 2])
        subscriber.subscription?.request(.max(1))
        count.value = 5
        count.value = 6
        #expect(subscriber.received.map(\.new) == [1, 2, 5])
        subscriber.subscription?.cancel()
    }

    @Test func demandReturnedFromReceiveAddsUp() {
        let count = Var(0)
        let subscriber = CountingSubscriber<Update<Int>>(initial: .max(1), more: .max(1))
        count.publisher().subscribe(subscriber)
        for value in 1...3 { count.value = value }
        #expect(subscriber.received.map(\.new) == [1, 2, 3])
        subscriber.subscription?.cancel()
    }

    @Test func aSubscriberThatAsksForNothingGetsNothing() {
        let count = Var(0)
        let subscriber = CountingSubscriber<Update<Int>>(initial: .none)
        count.publisher().subscribe(subscriber)
        count.value = 1
        #expect(subscriber.received.isEmpty)
        subscriber.subscription?.request(.unlimited)
        count.value = 2
        count.value = 3
        #expect(subscriber.received.map(\.new) == [2, 3])
        subscriber.subscription?.cancel()
    }

    @Test func aCancelInsideReceiveSubscriptionStartsNoObservation() {
        let count = Var(0)
        let subscriber = CountingSubscriber<Update<Int>>(initial: .unlimited, cancelsAtOnce: true)
        count.publisher().subscribe(subscriber)
        #expect(count.observationCount == 0)
        count.value = 1
        #expect(subscriber.received.isEmpty)
    }

    @Test func aPublisherOfATransformMadeInTheSameExpressionWorks() {
        let first = Var(1)
        let second = Var(2)
        var sums: [Int] = []
        let subscription = combine(first, second) { $0.new + $1.new }.publisher()
            .sink { sums.append($0) }
        first.value = 10
        second.value = 20
        #expect(sums == [12, 30])
        withExtendedLifetime(subscription) {}
    }

    @Test func aDroppedPublisherAndACancelledSubscriptionKeepNothingAlive() {
        weak var weakCount: Var<Int>?
        var publisher: ObservationPublisher<Var<Int>>?
        var subscription: AnyCancellable?
        do {
            let count = Var(0)
            weakCount = count
            publisher = count.publisher()
            subscription = publisher?.sink { _ in }
        }
        publisher = nil
        #expect(weakCount != nil)  // the subscription holds it
        subscription?.cancel()
        #expect(weakCount == nil)
        _ = (publisher, subscription)
    }

    @Test func aSubscriptionKeepsItsSourceUntilCancelled() {
        weak var weakCount: Var<Int>?
        var subscription: AnyCancellable?
        do {
            let count = Var(0)
            weakCount = count
            subscription = count.publisher().sink { _ in }
        }
        #expect(weakCount != nil)
        subscription?.cancel()
        subscription = nil
        #expect(weakCount == nil)
    }

    @Test func aSubscriptionDoesNotKeepItsSubscriberAfterCancel() {
        weak var weakSubscriber: CountingSubscriber<Update<Int>>?
        let count = Var(0)
        do {
            let subscriber = CountingSubscriber<Update<Int>>(initial: .unlimited)
            weakSubscriber = subscriber
            count.publisher().subscribe(subscriber)
            subscriber.subscription?.cancel()
            subscriber.subscription = nil
        }
        #expect(weakSubscriber == nil)
        #expect(count.observationCount == 0)
    }
    /// A messenger whose messages are `Sendable`, to send from several threads.
    final class Notifier: Messenger<Int>, @unchecked Sendable {}

    @Test func sendsFromSeveralThreadsAreEachPublishedOnce() {
        let messenger = Notifier()
        let received = Mutex<[Int]>([])
        let subscription = messenger.publisher().sink { value in
            received.withLock { $0.append(value) }
        }
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for index in 0..<500 { messenger.send(thread * 1_000 + index) }
        }
        let all = received.withLock { $0 }
        #expect(all.count == 2_000)
        #expect(Set(all).count == 2_000)
        withExtendedLifetime(subscription) {}
    }

    @Test func aLimitedDemandHoldsUnderSendsFromSeveralThreads() {
        let messenger = Notifier()
        let subscriber = CountingSubscriber<Int>(initial: .max(100))
        let lock = Mutex(())
        let counting = AnySubscriber<Int, Never>(
            receiveSubscription: { subscriber.receive(subscription: $0) },
            receiveValue: { value in lock.withLock { _ in subscriber.receive(value) } },
            receiveCompletion: { subscriber.receive(completion: $0) })
        messenger.publisher().subscribe(counting)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for index in 0..<500 { messenger.send(thread * 1_000 + index) }
        }
        #expect(lock.withLock { _ in subscriber.received.count } == 100)
        subscriber.subscription?.cancel()
    }
    /// A subscriber that does not keep its subscription, as Combine allows for subjects.
    final class ForgetfulSubscriber: Subscriber, @unchecked Sendable {
        typealias Input = Update<Int>
        typealias Failure = Never
        var received: [Int] = []
        func receive(subscription: any Subscription) { subscription.request(.unlimited) }
        func receive(_ input: Update<Int>) -> Subscribers.Demand {
            received.append(input.new)
            return .none
        }
        func receive(completion: Subscribers.Completion<Never>) {}
    }

    @Test func aSubscriberThatDoesNotKeepItsSubscriptionStillReceives() {
        let count = Var(0)
        let subscriber = ForgetfulSubscriber()
        count.publisher().subscribe(subscriber)
        count.value = 1
        count.value = 2
        #expect(subscriber.received == [1, 2])
        count.stopBeingObserved()
    }
}
