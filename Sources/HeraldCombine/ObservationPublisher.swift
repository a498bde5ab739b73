// Herald's messages as a Combine publisher. The same file is compiled against Apple's Combine
// (this package, where Combine exists) and against OpenCombine (the OpenCombineTests package,
// which tests it on Linux), so it uses only Herald's public API.
// (`HERALD_OPENCOMBINE` is defined by OpenCombineTests/ only: an app that has OpenCombine in its
// build for another reason still gets Apple's Combine here.)
#if HERALD_OPENCOMBINE
    import OpenCombine
#elseif canImport(Combine)
    import Combine
#endif

#if HERALD_OPENCOMBINE || canImport(Combine)
    import Messaging
    import Synchronization

    // `Messaging.ObservableObject`, spelled out: Combine has an `ObservableObject` too.

    extension Messaging.ObservableObject {
        /// A Combine publisher of this object's messages: each subscription observes the object
        /// and publishes every message it sends from then on (a variable's publisher publishes
        /// its updates). It never fails and never finishes.
        ///
        /// ```swift
        /// import HeraldCombine
        ///
        /// let title = Var("Draft")
        /// let subscription = title.publisher()
        ///     .map(\.new)
        ///     .sink { print("title:", $0) }
        /// title.value = "Final"   // prints "title: Final"
        /// subscription.cancel()   // ends the observation
        /// ```
        ///
        /// Lifetimes: the publisher and each of its subscriptions hold the object, as Combine's
        /// publishers hold their upstream, so that a publisher of a transform made in the same
        /// expression works (`combine(a, b) { … }.publisher().sink { … }`). Cancelling a
        /// subscription ends its observation, and the subscriber's letting go of it (Combine's
        /// subscribers do on cancel) lets go of the object. Messages are published
        /// on the thread that sent them, one at a time; a message that arrives while the
        /// subscriber has no demand is dropped, as a `PassthroughSubject` drops it.
        public func publisher() -> ObservationPublisher<Self> {
            ObservationPublisher(self)
        }
    }

    /// The messages of an observable object, as a Combine publisher (see
    /// ``Messaging/ObservableObject/publisher()``).
    public struct ObservationPublisher<Source: Messaging.ObservableObject>: Publisher {
        /// The source's messages.
        public typealias Output = Source.Message
        /// Never fails.
        public typealias Failure = Never

        /// The object whose messages are published.
        public let source: Source

        /// A publisher of `source`'s messages.
        public init(_ source: Source) {
            self.source = source
        }

        /// Starts a subscription: an observation of the source, from now on.
        public func receive<Downstream: Subscriber>(subscriber: Downstream)
        where Downstream.Input == Source.Message, Downstream.Failure == Never {
            let subscription = ObservationSubscription(source, subscriber)
            subscriber.receive(subscription: subscription)
            subscription.start()
        }
    }

    /// One subscriber's observation of the source: a Herald observer. The observation's handler
    /// holds it until it is cancelled, as a Combine subject holds its subscriptions, so that a
    /// subscriber need not keep it to receive.
    private final class ObservationSubscription<
        Source: Messaging.ObservableObject, Downstream: Subscriber
    >:
        Subscription, Observer
    where Downstream.Input == Source.Message, Downstream.Failure == Never {
        let receiver = Receiver()
        /// Held for as long as the subscription is (Combine's subscribers let go of it when
        /// they cancel or complete).
        private let source: Source
        private let downstream: Downstream
        /// How many messages the subscriber asked for and has not had; `Int.max`: unlimited.
        private let demand = Atomic<Int>(0)
        private let ended = Atomic<Bool>(false)

        init(_ source: Source, _ downstream: Downstream) {
            self.source = source
            self.downstream = downstream
        }

        /// Starts observing, once the subscriber has the subscription (it may have cancelled
        /// it already).
        func start() {
            guard !ended.load(ordering: .acquiring) else { return }
            // Strongly: ended by `cancel()` (an `AnyCancellable` cancels when released).
            observe(source) { message in self.deliver(message) }
            // A cancel that came meanwhile may have found no observation to end.
            if ended.load(ordering: .acquiring) { stopObserving() }
        }

        func request(_ more: Subscribers.Demand) {
            add(more)
        }

        func cancel() {
            guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
            stopObserving()
        }

        private func deliver(_ message: Source.Message) {
            guard !ended.load(ordering: .acquiring), takeOne() else { return }
            add(downstream.receive(message))
        }

        /// Takes one unit of demand, if there is one.
        private func takeOne() -> Bool {
            var current = demand.load(ordering: .relaxed)
            while true {
                if current == .max { return true }
                if current == 0 { return false }
                let (exchanged, original) = demand.compareExchange(
                    expected: current, desired: current - 1, ordering: .relaxed)
                if exchanged { return true }
                current = original
            }
        }

        private func add(_ more: Subscribers.Demand) {
            guard more != .none else { return }
            let amount = more.max ?? .max
            var current = demand.load(ordering: .relaxed)
            while current != .max {
                let (sum, overflow) = current.addingReportingOverflow(amount)
                let (exchanged, original) = demand.compareExchange(
                    expected: current, desired: overflow ? .max : sum, ordering: .relaxed)
                if exchanged { return }
                current = original
            }
        }
    }
#endif
