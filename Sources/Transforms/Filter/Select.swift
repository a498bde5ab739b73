import Messaging

extension ObservableObject where Message: Equatable {
    /// A stand-alone transform that sends `Void` whenever the origin sends `message`.
    ///
    /// ```swift
    /// let messenger = Messenger<String>()
    /// let myNotifier = messenger.select("my notification")
    /// observer.observe(myNotifier) { print("someone sent my notification") }
    /// ```
    @inlinable
    public func select(
        _ message: Message, fileID: StaticString = #fileID, line: UInt = #line
    ) -> Filter<Self, Void> {
        Filter(self, site: DeclarationSite(fileID: fileID, line: line)) { received, _ in
            received == message ? () : nil
        }
    }
}

extension ObservationChain where Message: Equatable {
    /// Lets only `message` through, as `Void`.
    @inlinable
    public func select(_ message: Message) -> ObservationChain<Origin, Void> {
        appending { received, _ in received == message ? () : nil }
    }

    /// Receives a call whenever `message` is sent.
    ///
    /// ```swift
    /// observer.observe(messenger).select("ping") { print("pinged") }
    /// ```
    @inlinable
    public func select(_ message: Message, receive: @escaping () -> Void) {
        select(message).receive { _ in receive() }
    }

    /// Receives a call with the author whenever `message` is sent.
    @inlinable
    public func select(_ message: Message, receive: @escaping (AnyAuthor) -> Void) {
        select(message).receive { _, author in receive(author) }
    }
}
