import Messaging

extension Filter {
    /// A stand-alone transform that sends the messages of `origin` that are not `nil`,
    /// unwrapped (SwiftObserver's `Unwrapper`; `origin.unwrap()` is the same).
    ///
    /// ```swift
    /// let codes = Unwrapper(errorCodes)   // errorCodes sends Int?; codes sends Int
    /// ```
    @inlinable
    public convenience init(_ origin: Origin, fileID: StaticString = #fileID, line: UInt = #line)
    where Origin.Message == Message? {
        self.init(origin, site: DeclarationSite(fileID: fileID, line: line)) { message, _ in
            message
        }
    }
}

extension ObservableObject {
    /// A stand-alone transform that sends the non-`nil` messages, unwrapped, and drops `nil`.
    ///
    /// ```swift
    /// let errorCodes = Messenger<Int?>()
    /// let errorAlert = errorCodes.unwrap()   // sends Int
    /// ```
    @inlinable
    public func unwrap<Wrapped>(
        fileID: StaticString = #fileID, line: UInt = #line
    ) -> Filter<Self, Wrapped> where Message == Wrapped? {
        Filter(self, site: DeclarationSite(fileID: fileID, line: line)) { message, _ in message }
    }
}

extension ObservationChain {
    /// Lets the non-`nil` messages through, unwrapped.
    @inlinable
    public func unwrap<Wrapped>() -> ObservationChain<Origin, Wrapped> where Message == Wrapped? {
        appending { message, _ in message }
    }

    /// Receives the non-`nil` messages, unwrapped.
    ///
    /// ```swift
    /// observer.observe(numbers).map { Int($0) }.unwrap { number in print(number) }
    /// ```
    @inlinable
    public func unwrap<Wrapped>(_ receive: @escaping (Wrapped) -> Void) where Message == Wrapped? {
        unwrap().receive(receive)
    }

    /// Receives the non-`nil` messages, unwrapped, with their authors.
    @inlinable
    public func unwrap<Wrapped>(
        _ receive: @escaping (Wrapped, AnyAuthor) -> Void
    ) where Message == Wrapped? {
        unwrap().receive(receive)
    }
}
