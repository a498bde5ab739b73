import Messaging

/// `coalesce(on:)` as a stage: the latest message waits in a box, whose one block a
/// ``Coalescer`` of the stage's own runs at most once per turn of the scheduler. A message that
/// arrives after the turn's delivery began schedules another turn (the coalescer's rules), so the
/// last message is never lost.
@usableFromInline
enum LatestMessage {
    @usableFromInline
    static func stage<Message: Sendable>(on scheduler: any MessageScheduler) -> Stage<
        Message, Message
    > {
        { downstream in
            let cancellation = Cancellation()
            let owner = ScheduledStageOwner(cancellation)
            let box = Box(downstream: downstream, cancellation: cancellation)
            let coalescer = Coalescer(scheduler: scheduler)
            let run = { box.deliver() }
            let entry = Coalescer.Entry { run }  // the same run each time: nothing to allocate
            return { message, author in
                _ = owner
                box.store(message, from: author)
                coalescer.schedule(entry)
            }
        }
    }

    /// The latest message not delivered yet.
    private final class Box<Message>: @unchecked Sendable {
        // `lock` protects `latest`; the rest is immutable.
        private let lock = Lock()
        @exclusivity(unchecked) private var latest: (message: Message, author: AnyAuthor)?
        private let downstream: (Message, AnyAuthor) -> Void
        private let cancellation: Cancellation

        init(downstream: @escaping (Message, AnyAuthor) -> Void, cancellation: Cancellation) {
            self.downstream = downstream
            self.cancellation = cancellation
        }

        func store(_ message: Message, from author: AnyAuthor) {
            // The replaced message is released after unlocking.
            let replaced = lock.withLock {
                defer { latest = (message, author) }
                return latest
            }
            _ = replaced
        }

        func deliver() {
            let item = lock.withLock {
                defer { latest = nil }
                return latest
            }
            guard let item, !cancellation.isCancelled else { return }
            downstream(item.message, item.author)
        }
    }
}

extension ObservableObject where Message: Sendable {
    /// A stand-alone transform that delivers at most once per turn of `scheduler`: the latest
    /// message (with its author). The last message is never lost. The messages cross threads,
    /// so they must be `Sendable`.
    ///
    /// ```swift
    /// let refresh = model.coalesce(on: .mainQueue)
    /// observer.observe(refresh) { _ in view.reload() }   // once per main-queue turn
    /// ```
    @inlinable
    public func coalesce(
        on scheduler: some MessageScheduler, fileID: StaticString = #fileID, line: UInt = #line
    ) -> Rescheduled<Self> {
        Rescheduled(
            self, site: DeclarationSite(fileID: fileID, line: line),
            stage: LatestMessage.stage(on: scheduler))
    }
}

extension ObservationChain where Message: Sendable {
    /// Delivers at most once per turn of `scheduler`: the latest message. The last message is
    /// never lost; nothing is delivered after the observation ended. The messages cross
    /// threads, so they must be `Sendable`.
    ///
    /// ```swift
    /// observer.observe(document).coalesce(on: .mainQueue).receive { _ in redraw() }
    /// ```
    @inlinable
    public func coalesce(on scheduler: some MessageScheduler) -> ObservationChain<Origin, Message> {
        appending(stage: LatestMessage.stage(on: scheduler))
    }
}
