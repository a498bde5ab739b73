import Dispatch
import Messaging

/// Something that runs work later: the main queue, right away, or when a test says so.
///
/// Herald's scheduling transforms (`coalesce(on:)`, `receive(on:)`) take a scheduler. A
/// scheduler must run work in the order it was scheduled.
///
/// ```swift
/// observer.observe(model).coalesce(on: .mainQueue).receive { _ in view.refresh() }
/// ```
public protocol MessageScheduler: Sendable {
    /// Runs `work` later, after the work scheduled before it (or at once, for
    /// ``ImmediateMessageScheduler``).
    func schedule(_ work: @escaping @Sendable () -> Void)
}

/// Runs work at once, on the calling thread.
public struct ImmediateMessageScheduler: MessageScheduler {
    /// Creates the immediate scheduler; ``MessageScheduler/immediate`` is the usual spelling.
    public init() {}

    /// Runs `work` now.
    public func schedule(_ work: @escaping @Sendable () -> Void) {
        work()
    }
}

/// Runs work asynchronously on the Dispatch main queue: one scheduled block per turn of the main
/// run loop.
public struct MainQueueMessageScheduler: MessageScheduler {
    /// Creates the main-queue scheduler; ``MessageScheduler/mainQueue`` is the usual spelling.
    public init() {}

    /// Runs `work` on the main queue, after what is already queued there.
    public func schedule(_ work: @escaping @Sendable () -> Void) {
        DispatchQueue.main.async(execute: work)
    }
}

extension MessageScheduler where Self == ImmediateMessageScheduler {
    /// Runs work at once, on the calling thread.
    public static var immediate: ImmediateMessageScheduler { ImmediateMessageScheduler() }
}

extension MessageScheduler where Self == MainQueueMessageScheduler {
    /// Runs work asynchronously on the Dispatch main queue.
    public static var mainQueue: MainQueueMessageScheduler { MainQueueMessageScheduler() }
}
