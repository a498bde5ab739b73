import Dispatch
import Messaging

/// Delivery on the main actor: `receive(on: .mainActor)` and `observe(_:on:receive:)` type their
/// handlers `@MainActor`, so main-actor code observes Herald objects changed on any thread with
/// no `MainActor.assumeIsolated`, no `@unchecked` and no warning.
///
/// ```swift
/// @MainActor final class CounterViewModel: Observer {
///     nonisolated let receiver = Receiver()
///     private(set) var text = ""
///
///     init(counter: Var<Int>) {
///         observe(counter).new().receive(on: .mainActor) { [weak self] count in
///             self?.text = "\(count)"   // main-actor state, checked by the compiler
///         }
///     }
/// }
/// ```
///
/// Every message is delivered asynchronously on the main queue (the main actor's executor), in
/// the order sent, also when it was sent on the main thread, so that order never depends on
/// where a change was made; nothing is delivered after the observation ended. The messages
/// cross threads, so they must be `Sendable`.
public enum MainActorDelivery: Sendable {
    /// The main actor.
    case mainActor
}

extension ObservationChain where Message: Sendable {
    /// Delivers every message on the main actor, in order: finish the chain with a `@MainActor`
    /// handler (see ``MainActorDelivery``).
    ///
    /// ```swift
    /// observer.observe(downloads).receive(on: .mainActor) { progress in
    ///     progressView.progress = progress   // on the main actor
    /// }
    /// ```
    @inlinable
    public func receive(on mainActor: MainActorDelivery) -> MainActorObservationChain<
        Origin, Message
    > {
        MainActorObservationChain(
            chain: appending(stage: Hop.stage(on: MainQueueMessageScheduler())))
    }

    /// Delivers every message on the main actor to `receive`, in order.
    ///
    /// ```swift
    /// observer.observe(model.$title).new().receive(on: .mainActor) { title in label.text = title }
    /// ```
    @inlinable
    public func receive(
        on mainActor: MainActorDelivery, _ receive: @escaping @MainActor (Message) -> Void
    ) {
        self.receive(on: mainActor).receive(receive)
    }
}

/// An ad hoc chain whose messages are delivered on the main actor (see
/// `receive(on: .mainActor)` on an ``ObservationChain``): it ends with a `@MainActor` handler.
public struct MainActorObservationChain<Origin: ObservableObject, Message: Sendable> {
    @usableFromInline let chain: ObservationChain<Origin, Message>

    @inlinable init(chain: ObservationChain<Origin, Message>) { self.chain = chain }

    /// Starts the observation: `receive` runs on the main actor with every message that passes
    /// the chain.
    @inlinable
    public func receive(_ receive: @escaping @MainActor (Message) -> Void) {
        chain.receive { message, _ in
            // The hop before this stage delivers on the main queue, the main actor's executor.
            MainActor.assumeIsolated { receive(message) }
        }
    }

    /// Starts the observation: `receive` runs on the main actor with every message that passes
    /// the chain, and its author (an identity to compare with `===`).
    @inlinable
    public func receive(_ receive: @escaping @MainActor (Message, AnyAuthor) -> Void) {
        chain.receive { message, author in
            let author = UncheckedSendable(author)
            MainActor.assumeIsolated { receive(message, author.value) }
        }
    }
}

extension Observer {
    /// Starts observing `observable` on the main actor: `receive` runs there with every message
    /// it sends from now on, in order (see ``MainActorDelivery``).
    ///
    /// ```swift
    /// observe(model.$title, on: .mainActor) { [weak self] update in
    ///     self?.title = update.new
    /// }
    /// ```
    @inlinable
    public func observe<Observed: ObservableObject>(
        _ observable: Observed, on mainActor: MainActorDelivery,
        fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping @MainActor (Observed.Message) -> Void
    ) where Observed.Message: Sendable {
        observe(observable, fileID: fileID, line: line).receive(on: mainActor).receive(receive)
    }
}
