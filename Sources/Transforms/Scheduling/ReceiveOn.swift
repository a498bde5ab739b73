import Messaging

/// The one implementation of `receive(on:)`: every message is delivered through `scheduler`, in
/// order; nothing is delivered after the observation ended.
@usableFromInline
enum Hop {
    @usableFromInline
    static func stage<Message>(on scheduler: any MessageScheduler) -> Stage<Message, Message> {
        { downstream in
            let cancellation = Cancellation()
            let owner = ScheduledStageOwner(cancellation)
            let target = UncheckedSendable(downstream)
            return { message, author in
                _ = owner
                let item = UncheckedSendable((message, author))
                scheduler.schedule {
                    guard !cancellation.isCancelled else { return }
                    target.value(item.value.0, item.value.1)
                }
            }
        }
    }
}

extension ObservableObject {
    /// A stand-alone transform that delivers every message through `scheduler`, for example on
    /// the main queue.
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

extension ObservationChain {
    /// Delivers every message through `scheduler`, in order.
    ///
    /// ```swift
    /// observer.observe(downloads).receive(on: .mainQueue).receive { progress in }
    /// ```
    @inlinable
    public func receive(on scheduler: some MessageScheduler) -> ObservationChain<Origin, Message> {
        appending(stage: Hop.stage(on: scheduler))
    }
}
