import Messaging

// SwiftObserver's names for Herald's stand-alone transforms, so that code written for it reads
// on (Docs/Messaging.md, "Coming from SwiftObserver").

/// SwiftObserver's name for a ``Map``: `Mapper(origin) { transform }`.
public typealias Mapper<Origin: ObservableObject, Mapped> = Map<Origin, Mapped>

/// SwiftObserver's name for the ``Filter`` that unwraps optional messages: `Unwrapper(origin)`.
public typealias Unwrapper<Origin: ObservableObject, Unwrapped> = Filter<Origin, Unwrapped>

/// SwiftObserver's name for the ``Cache`` of optional messages, which stays singly optional:
/// `CacheOnOptionalMessage(codes)` over `Int?` messages has `latestMessage: Int?`. Herald's
/// `Cache(codes)` and `codes.cache()` make the same object.
public typealias CacheOnOptionalMessage<Origin: ObservableObject, Unwrapped> =
    Cache<Origin, Unwrapped>

/// SwiftObserver's name for an ad hoc chain of transforms on an observation (an
/// ``ObservationChain``: `observer.observe(origin).map { … }`).
public typealias ObservationTransformer<Origin: ObservableObject, Message> =
    ObservationChain<Origin, Message>

// SwiftObserver's labels for the closures that end an ad hoc chain (Herald's are `receive:`, or
// none). Disfavored, so that a trailing closure picks Herald's form and stays unambiguous.
extension ObservationChain {
    /// SwiftObserver's spelling of `map(_:receive:)`.
    @inlinable @_disfavoredOverload
    public func map<Mapped>(
        _ transform: @escaping (Message) -> Mapped, receiveMapped: @escaping (Mapped) -> Void
    ) {
        map(transform).receive(receiveMapped)
    }

    /// SwiftObserver's spelling of `map(_:receive:)`, with authors.
    @inlinable @_disfavoredOverload
    public func map<Mapped>(
        _ transform: @escaping (Message) -> Mapped,
        receiveMapped: @escaping (Mapped, AnyAuthor) -> Void
    ) {
        map(transform).receive(receiveMapped)
    }

    /// SwiftObserver's spelling of `filter(_:receive:)`.
    @inlinable @_disfavoredOverload
    public func filter(
        _ isIncluded: @escaping (Message) -> Bool, receiveFiltered: @escaping (Message) -> Void
    ) {
        filter(isIncluded).receive(receiveFiltered)
    }

    /// SwiftObserver's spelling of `filter(_:receive:)`, with authors.
    @inlinable @_disfavoredOverload
    public func filter(
        _ isIncluded: @escaping (Message) -> Bool,
        receiveFiltered: @escaping (Message, AnyAuthor) -> Void
    ) {
        filter(isIncluded).receive(receiveFiltered)
    }

    /// SwiftObserver's spelling of `new(_:)`.
    @inlinable @_disfavoredOverload
    public func new<Value>(receiveNew: @escaping (Value) -> Void) where Message == Update<Value> {
        new().receive(receiveNew)
    }

    /// SwiftObserver's spelling of `new(_:)`, with authors.
    @inlinable @_disfavoredOverload
    public func new<Value>(
        receiveNew: @escaping (Value, AnyAuthor) -> Void
    ) where Message == Update<Value> {
        new().receive(receiveNew)
    }

    /// SwiftObserver's spelling of `unwrap(_:)`.
    @inlinable @_disfavoredOverload
    public func unwrap<Wrapped>(
        receiveUnwrapped: @escaping (Wrapped) -> Void
    ) where Message == Wrapped? {
        unwrap().receive(receiveUnwrapped)
    }

    /// SwiftObserver's spelling of `unwrap(_:)`, with authors.
    @inlinable @_disfavoredOverload
    public func unwrap<Wrapped>(
        receiveUnwrapped: @escaping (Wrapped, AnyAuthor) -> Void
    ) where Message == Wrapped? {
        unwrap().receive(receiveUnwrapped)
    }

    /// SwiftObserver's spelling of `unwrap(_:receive:)`.
    @inlinable @_disfavoredOverload
    public func unwrap<Wrapped>(
        _ defaultMessage: Wrapped, receiveUnwrapped: @escaping (Wrapped) -> Void
    ) where Message == Wrapped? {
        unwrap(defaultMessage).receive(receiveUnwrapped)
    }

    /// SwiftObserver's spelling of `unwrap(_:receive:)`, with authors.
    @inlinable @_disfavoredOverload
    public func unwrap<Wrapped>(
        _ defaultMessage: Wrapped, receiveUnwrapped: @escaping (Wrapped, AnyAuthor) -> Void
    ) where Message == Wrapped? {
        unwrap(defaultMessage).receive(receiveUnwrapped)
    }
}

extension ObservationChain {
    /// SwiftObserver's spelling of `filterAuthor(_:receive:)`.
    @inlinable @_disfavoredOverload
    public func filterAuthor(
        _ isIncluded: @escaping (AnyAuthor) -> Bool, receiveFiltered: @escaping (Message) -> Void
    ) {
        filterAuthor(isIncluded).receive(receiveFiltered)
    }

    /// SwiftObserver's spelling of `filterAuthor(_:receive:)`, with authors.
    @inlinable @_disfavoredOverload
    public func filterAuthor(
        _ isIncluded: @escaping (AnyAuthor) -> Bool,
        receiveFiltered: @escaping (Message, AnyAuthor) -> Void
    ) {
        filterAuthor(isIncluded).receive(receiveFiltered)
    }

    /// SwiftObserver's spelling of `from(_:receive:)`.
    @inlinable @_disfavoredOverload
    public func from(_ author: AnyAuthor?, receiveSelected: @escaping (Message) -> Void) {
        from(author).receive(receiveSelected)
    }

    /// SwiftObserver's spelling of `from(_:receive:)`, with authors.
    @inlinable @_disfavoredOverload
    public func from(
        _ author: AnyAuthor?, receiveSelected: @escaping (Message, AnyAuthor) -> Void
    ) {
        from(author).receive(receiveSelected)
    }

    /// SwiftObserver's spelling of `notFrom(_:receive:)`.
    @inlinable @_disfavoredOverload
    public func notFrom(_ author: AnyAuthor?, receiveExcluded: @escaping (Message) -> Void) {
        notFrom(author).receive(receiveExcluded)
    }

    /// SwiftObserver's spelling of `notFrom(_:receive:)`, with authors.
    @inlinable @_disfavoredOverload
    public func notFrom(
        _ author: AnyAuthor?, receiveExcluded: @escaping (Message, AnyAuthor) -> Void
    ) {
        notFrom(author).receive(receiveExcluded)
    }
}

extension ObservationChain where Message: Equatable {
    /// SwiftObserver's spelling of `select(_:receive:)`.
    @inlinable @_disfavoredOverload
    public func select(_ message: Message, receiveSelected: @escaping () -> Void) {
        select(message).receive { _ in receiveSelected() }
    }

    /// SwiftObserver's spelling of `select(_:receive:)`, with the author.
    @inlinable @_disfavoredOverload
    public func select(_ message: Message, receiveSelected: @escaping (AnyAuthor) -> Void) {
        select(message).receive { _, author in receiveSelected(author) }
    }
}
