import Messaging

/// The one implementation of `receive(on:)`: every message is delivered through `scheduler`, in
/// order; nothing is delivered after the observation ended.
///
/// The message crosses to the scheduler's thread, so it must be `Sendable`: the compiler checks
/// it. Two things cross unchecked, on purpose: the author, which Herald only ever compares by
/// identity (`===`), never calls; and the rest of the chain, which is the observer's own code
/// and runs where the scheduler runs it, as any handler runs where its messages are delivered
/// (for a handler that the compiler checks, deliver on the main actor:
/// `receive(on: .mainActor)`).
@usableFromInline
enum Hop {
    @usableFromInline
    static func stage<Message: Sendable>(on scheduler: any MessageScheduler) -> Stage<
        Message, Message
    > {
        { downstream in
            let cancellation = Cancellation()
            let owner = ScheduledStageOwner(cancellation)
            let target = UncheckedSendable(downstream)
            return { message, author in
                _ = owner
                let author = UncheckedSendable(author)
                scheduler.schedule {
                    guard !cancellation.isCancelled else { return }
                    target.value(message, author.value)
                }
            }
        }
    }
}

extension ObservableObject where Message: Sendable {
    /// A stand-alone transform that delivers every message through `scheduler`, for example on
    /// the main queue. The messages cross threads, so they must be `Sendable`.
    ///
    /// ```swift
    /// let onMain = downloads.receive(on: .mainQueue)
    /// ```
    @inlinable
    public func receive(
        on scheduler: some MessageScheduler, fileID: StaticString = #fileID, line: UInt = #line
    ) -> Rescheduled<Self> {
        Rescheduled(
            self, site: DeclarationSite(fileID: fileID, line: line),
            stage: Hop.stage(on: scheduler))
    }
}

extension ObservationChain where Message: Sendable {
    /// Delivers every message through `scheduler`, in order. The messages cross threads, so
    /// they must be `Sendable`; for handlers on the main actor, `receive(on: .mainActor)` types
    /// them `@MainActor`.
    ///
    /// ```swift
    /// observer.observe(downloads).receive(on: .mainQueue).receive { progress in }
    /// ```
    @inlinable
    public func receive(on scheduler: some MessageScheduler) -> ObservationChain<Origin, Message> {
        appending(stage: Hop.stage(on: scheduler))
    }
}
