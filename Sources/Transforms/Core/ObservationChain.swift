import Messaging

/// An observation being built ad hoc: `observer.observe(object)` without a closure returns one,
/// each transform returns a longer one, and `receive(_:)` (or a transform's trailing
/// closure) starts the observation.
///
/// ```swift
/// observer.observe(title).new().unwrap("Untitled").map({ $0.count }) { length in
///     print("The title has \(length) characters")
/// }
/// ```
///
/// The chain is one observation of the original object: its transforms run inside the delivery,
/// without intermediate objects. It ends like any observation: when the observer or the observed
/// object dies, or when the observer stops observing the object. A chain that is never
/// completed with a closure observes nothing (the compiler warns about the unused result).
public struct ObservationChain<Origin: ObservableObject, Message> {
    /// A function from "what receives the chain's output" to "what the origin's messages go
    /// to". Each transform wraps the downstream closure (continuation-passing), so a stage may
    /// also keep per-observation state, such as a combinator's current inner object, in a box
    /// that the origin's connection owns and frees when the observation ends.
    /// A stage that must act once the observation has started (a combinator wiring itself to
    /// the origin's current state, which it must read after the origin's connection exists, so
    /// that no change falls in between) appends that action to `whenStarted`.
    @usableFromInline typealias Build = (
        _ downstream: @escaping (Message, AnyAuthor) -> Void,
        _ whenStarted: inout [() -> Void]
    ) -> (Origin.Message, AnyAuthor) -> Void

    @usableFromInline let receiver: Receiver
    @usableFromInline let origin: Origin
    @usableFromInline let site: DeclarationSite
    @usableFromInline let build: Build
    /// The chain's current message, pulled from the origin's latest message through the pure
    /// stages, or nil if the origin is not an ``ObservableCache``, a stage filters it out, or a
    /// stateful stage lies in between. (The ad hoc analogue of "a map over a cache is a cache".)
    @usableFromInline let current: () -> Message?

    @inlinable
    init(
        receiver: Receiver, origin: Origin, site: DeclarationSite,
        current: @escaping () -> Message?, build: @escaping Build
    ) {
        self.receiver = receiver
        self.origin = origin
        self.site = site
        self.current = current
        self.build = build
    }

    /// The chain extended by a stage that turns each downstream receiver into an upstream one.
    @inlinable
    func appending<Next>(
        stage:
            @escaping (
                _ downstream: @escaping (Next, AnyAuthor) -> Void
            ) -> (Message, AnyAuthor) -> Void
    ) -> ObservationChain<Origin, Next> {
        appending(startingStage: { downstream, _ in stage(downstream) })
    }

    /// The chain extended by a stage that may also act once the observation started (see
    /// `Build`).
    @inlinable
    func appending<Next>(
        startingStage stage:
            @escaping (
                _ downstream: @escaping (Next, AnyAuthor) -> Void,
                _ whenStarted: inout [() -> Void]
            ) -> (Message, AnyAuthor) -> Void
    ) -> ObservationChain<Origin, Next> {
        let build = self.build
        return ObservationChain<Origin, Next>(
            receiver: receiver, origin: origin, site: site, current: { nil }
        ) { downstream, whenStarted in
            build(stage(downstream, &whenStarted), &whenStarted)
        }
    }

    /// The chain extended by a transform that turns each message into zero or one message.
    /// Authors are never changed.
    @inlinable
    func appending<Next>(
        _ transform: @escaping (Message, AnyAuthor) -> Next?
    ) -> ObservationChain<Origin, Next> {
        let build = self.build
        let current = self.current
        let origin = self.origin
        return ObservationChain<Origin, Next>(
            receiver: receiver, origin: origin, site: site,
            current: { current().flatMap { transform($0, origin) } }
        ) { downstream, whenStarted in
            build(
                { message, author in
                    if let transformed = transform(message, author) {
                        downstream(transformed, author)
                    }
                }, &whenStarted)
        }
    }

    /// The chain extended by a stage that maps every message (one closure call per message, no
    /// optional in between).
    @inlinable
    func appendingMap<Next>(_ transform: @escaping (Message) -> Next) -> ObservationChain<
        Origin, Next
    > {
        let build = self.build
        let current = self.current
        return ObservationChain<Origin, Next>(
            receiver: receiver, origin: origin, site: site,
            current: { current().map(transform) }
        ) { downstream, whenStarted in
            build({ message, author in downstream(transform(message), author) }, &whenStarted)
        }
    }

    /// The chain extended by a stage that lets through the messages (and authors) for which
    /// `isIncluded` is true. The chain's current message is taken to be authored by the origin,
    /// as `send()` would author it.
    @inlinable
    func appendingFilter(
        _ isIncluded: @escaping (Message, AnyAuthor) -> Bool
    ) -> ObservationChain<Origin, Message> {
        let build = self.build
        let current = self.current
        let origin = self.origin
        return ObservationChain<Origin, Message>(
            receiver: receiver, origin: origin, site: site,
            current: { current().flatMap { isIncluded($0, origin) ? $0 : nil } }
        ) { downstream, whenStarted in
            build(
                { message, author in
                    if isIncluded(message, author) { downstream(message, author) }
                }, &whenStarted)
        }
    }

    /// Starts the observation: `receive` gets every message that passes the chain.
    ///
    /// ```swift
    /// observer.observe(sky).map { $0 == .blue }.receive { isBlue in print(isBlue) }
    /// ```
    @inlinable
    public func receive(_ receive: @escaping (Message) -> Void) {
        self.receive { message, _ in receive(message) }
    }

    /// Starts the observation: `receive` gets every message that passes the chain, with its
    /// author.
    @inlinable
    public func receive(_ receive: @escaping (Message, AnyAuthor) -> Void) {
        var whenStarted: [() -> Void] = []
        let handler = build(receive, &whenStarted)
        _ = origin.messenger.core.connect(receiver: receiver, site: site, receive: handler)
        for start in whenStarted { start() }
    }
}

extension Observer {
    /// Starts building an ad hoc transform chain on an observation of `observable`; finish it with
    /// a closure.
    ///
    /// ```swift
    /// observer.observe(number).new().filter { $0 > 9 }.receive { print($0) }
    /// ```
    @inlinable
    public func observe<Observed: ObservableObject>(
        _ observable: Observed, fileID: StaticString = #fileID, line: UInt = #line
    ) -> ObservationChain<Observed, Observed.Message> {
        ObservationChain(
            receiver: receiver, origin: observable,
            site: DeclarationSite(fileID: fileID, line: line),
            current: { latestMessageIfCache(of: observable) }
        ) { downstream, _ in downstream }
    }
}
