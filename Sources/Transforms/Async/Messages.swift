import Messaging

extension ObservableObject where Message: Sendable {
    /// The messages this object sends from now on, as an asynchronous sequence.
    ///
    /// ```swift
    /// for await color in sky.messages {
    ///     print("The sky is \(color)")
    /// }
    /// ```
    ///
    /// The sequence ends when the object dies or stops being observed; cancelling the task that
    /// iterates (or dropping the sequence) ends the observation. Messages wait in an unbounded
    /// buffer until the loop takes them, so none is lost; use ``messages(bufferingPolicy:fileID:line:)`` to
    /// keep only the newest ones instead. Messages must be `Sendable`, since the loop may run in
    /// another isolation domain than the sender.
    public var messages: AsyncStream<Message> {
        messages(bufferingPolicy: .unbounded)
    }

    /// The messages this object sends from now on, as an asynchronous sequence with the given
    /// buffering policy for messages the loop has not taken yet.
    ///
    /// ```swift
    /// for await progress in download.messages(bufferingPolicy: .bufferingNewest(1)) { … }
    /// ```
    public func messages(
        bufferingPolicy: AsyncStream<Message>.Continuation.BufferingPolicy,
        fileID: StaticString = #fileID, line: UInt = #line
    ) -> AsyncStream<Message> {
        observationStream(bufferingPolicy: bufferingPolicy) { receiver, continuation in
            _ = messenger.core.connect(
                receiver: receiver, site: DeclarationSite(fileID: fileID, line: line)
            ) { message, _ in
                continuation.yield(message)
            }
        }
    }
}

extension Variable where Value: Sendable {
    /// The variable's current value followed by every later value, as an asynchronous sequence.
    ///
    /// ```swift
    /// for await count in cart.itemCount.values {
    ///     badge.text = "\(count)"
    /// }
    /// ```
    ///
    /// The first element is the value at the moment the sequence was created; no change after
    /// that moment is missed. Ends like ``ObservableObject/messages``.
    public var values: AsyncStream<Value> {
        values(bufferingPolicy: .unbounded)
    }

    /// The variable's current value followed by every later value, with the given buffering
    /// policy.
    public func values(
        bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy,
        fileID: StaticString = #fileID, line: UInt = #line
    ) -> AsyncStream<Value> {
        observationStream(bufferingPolicy: bufferingPolicy) { receiver, continuation in
            _ = connect(
                receiver: receiver, site: DeclarationSite(fileID: fileID, line: line),
                initial: { continuation.yield($0) }
            ) { update, _ in
                continuation.yield(update.new)
            }
        }
    }
}

/// An `AsyncStream` fed by one observation that `connect` starts with the given receiver: the
/// stream finishes when the observed side ends the observation, and the observation ends when
/// the stream terminates (cancelled or dropped), because only the stream holds the receiver.
private func observationStream<Element>(
    bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy,
    connect: (Receiver, AsyncStream<Element>.Continuation) -> Void
) -> AsyncStream<Element> {
    let (stream, continuation) = AsyncStream.makeStream(
        of: Element.self, bufferingPolicy: bufferingPolicy)
    let yielder = UncheckedSendable(continuation)
    let receiver = Receiver { yielder.value.finish() }
    connect(receiver, continuation)
    let owner = UncheckedSendable(receiver)
    continuation.onTermination = { _ in _ = owner }
    return stream
}
