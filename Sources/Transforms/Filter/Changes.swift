import Messaging

extension ObservableObject {
    /// A stand-alone transform that drops updates whose `old` and `new` are equal, such as the
    /// ones ``ObservableCache/send()`` sends on a variable.
    ///
    /// ```swift
    /// let realChanges = number.changes()
    /// ```
    @inlinable
    public func changes<Value: Equatable>(
        fileID: StaticString = #fileID, line: UInt = #line
    ) -> Filter<Self, Update<Value>> where Message == Update<Value> {
        filter(fileID: fileID, line: line) { $0.old != $0.new }
    }
}

extension ObservationChain {
    /// Drops updates whose `old` and `new` are equal.
    @inlinable
    public func changes<Value: Equatable>() -> ObservationChain<Origin, Update<Value>>
    where Message == Update<Value> {
        filter { $0.old != $0.new }
    }

    /// Receives only updates whose `old` and `new` differ.
    @inlinable
    public func changes<Value: Equatable>(
        _ receive: @escaping (Update<Value>) -> Void
    ) where Message == Update<Value> {
        changes().receive(receive)
    }
}
