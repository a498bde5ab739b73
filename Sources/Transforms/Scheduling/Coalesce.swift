import Messaging

/// The one implementation of coalescing: at most one delivery per scheduler turn, of the latest
/// message; a message that arrives after the turn's delivery began schedules another turn, so
/// the last message is never lost.
@usableFromInline
final class Coalescer<Message>: @unchecked Sendable {
    // `lock` protects `latest` and `isScheduled`; the rest is immutable.
    private let lock = Lock()
    @exclusivity(unchecked) private var latest: (message: Message, author: AnyAuthor)?
    @exclusivity(unchecked) private var isScheduled = false
    private let scheduler: any Scheduler
    private let cancellation: Cancellation
    private let downstream: (Message, AnyAuthor) -> Void

    @usableFromInline
    init(
        scheduler: any Scheduler, cancellation: Cancellation,
        downstream: @escaping (Message, AnyAuthor) -> Void
    ) {
        self.scheduler = scheduler
        self.cancellation = cancellation
        self.downstream = downstream
    }

    @usableFromInline
    func receive(_ message: Message, from author: AnyAuthor) {
        let mustSchedule = lock.withLock {
            latest = (message, author)
            defer { isScheduled = true }
            return !isScheduled
        }
        guard mustSchedule else { return }
        let unchecked = UncheckedSendable(self)
        scheduler.schedule { unchecked.value.deliver() }
    }

    private func deliver() {
        let item = lock.withLock {
            isScheduled = false
            defer { latest = nil }
            return latest
        }
        guard let item, !cancellation.isCancelled else { return }
        downstream(item.message, item.author)
    }

    /// Coalescing as a stage.
    @usableFromInline
    static func stage(on scheduler: any Scheduler) -> Stage<Message, Message> {
        { downstream in
            let cancellation = Cancellation()
            let owner = ScheduledStageOwner(cancellation)
            let coalescer = Coalescer(
                scheduler: scheduler, cancellation: cancellation, downstream: downstream)
            return { message, author in
                _ = owner
                coalescer.receive(message, from: author)
            }
        }
    }
}

extension ObservableObject {
    /// A stand-alone transform that delivers at most once per turn of `scheduler`: the latest
    /// message (with its author). The last message is never lost.
    ///
    /// ```swift
    /// let refresh = model.coalesce(on: .mainQueue)
    /// observer.observe(refresh) { _ in view.reload() }   // once per main-queue turn
    /// ```
    @inlinable
    public func coalesce(
        on scheduler: some Scheduler, fileID: StaticString = #fileID, line: UInt = #line
    ) -> Rescheduled<Self> {
        Rescheduled(
            self, site: DeclarationSite(fileID: fileID, line: line),
            stage: Coalescer.stage(on: scheduler))
    }
}

extension ObservationChain {
    /// Delivers at most once per turn of `scheduler`: the latest message. The last message is
    /// never lost; nothing is delivered after the observation ended.
    ///
    /// ```swift
    /// observer.observe(document).coalesce(on: .mainQueue).receive { _ in redraw() }
    /// ```
    @inlinable
    public func coalesce(on scheduler: some Scheduler) -> ObservationChain<Origin, Message> {
        appending(stage: Coalescer.stage(on: scheduler))
    }
}
