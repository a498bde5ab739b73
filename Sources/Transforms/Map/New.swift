import Messaging

extension ObservableObject {
    /// A stand-alone transform that sends only the `new` value of every ``Update``.
    ///
    /// ```swift
    /// let errorCode = Var(0)              // sends Update<Int>
    /// let newErrorCode = errorCode.new()  // sends Int; a cache, like its origin
    /// ```
    @inlinable
    public func new<Value>(
        fileID: StaticString = #fileID, line: UInt = #line
    ) -> Map<Self, Value> where Message == Update<Value> {
        map(fileID: fileID, line: line) { $0.new }
    }
}

extension ObservationChain {
    /// Keeps only the `new` value of every ``Update``.
    ///
    /// ```swift
    /// observer.observe(number).new().receive { value in print(value) }
    /// ```
    @inlinable
    public func new<Value>() -> ObservationChain<Origin, Value> where Message == Update<Value> {
        map { $0.new }
    }

    /// Receives only the `new` value of every ``Update``.
    @inlinable
    public func new<Value>(_ receive: @escaping (Value) -> Void) where Message == Update<Value> {
        new().receive(receive)
    }

    /// Receives only the `new` value of every ``Update``, with its author.
    @inlinable
    public func new<Value>(
        _ receive: @escaping (Value, AnyAuthor) -> Void
    ) where Message == Update<Value> {
        new().receive(receive)
    }
}
