import Messaging

extension ObservableObject {
    /// A stand-alone transform that replaces `nil` messages with `defaultMessage`.
    ///
    /// ```swift
    /// let points = Messenger<Int?>()
    /// let pointsToShow = points.unwrap(0)   // sends Int, 0 for nil
    /// ```
    @inlinable
    public func unwrap<Wrapped>(
        _ defaultMessage: Wrapped, fileID: StaticString = #fileID, line: UInt = #line
    ) -> Map<Self, Wrapped> where Message == Wrapped? {
        map(fileID: fileID, line: line) { $0 ?? defaultMessage }
    }
}

extension ObservationChain {
    /// Replaces `nil` messages with `defaultMessage`.
    ///
    /// ```swift
    /// observer.observe(title).new().unwrap("Untitled").receive { title in }
    /// ```
    @inlinable
    public func unwrap<Wrapped>(
        _ defaultMessage: Wrapped
    ) -> ObservationChain<Origin, Wrapped> where Message == Wrapped? {
        map { $0 ?? defaultMessage }
    }

    /// Replaces `nil` messages with `defaultMessage` and receives the result.
    @inlinable
    public func unwrap<Wrapped>(
        _ defaultMessage: Wrapped, receive: @escaping (Wrapped) -> Void
    ) where Message == Wrapped? {
        unwrap(defaultMessage).receive(receive)
    }

    /// Replaces `nil` messages with `defaultMessage` and receives the result with its author.
    @inlinable
    public func unwrap<Wrapped>(
        _ defaultMessage: Wrapped, receive: @escaping (Wrapped, AnyAuthor) -> Void
    ) where Message == Wrapped? {
        unwrap(defaultMessage).receive(receive)
    }
}
