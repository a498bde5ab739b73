import Messaging

/// A stand-alone transform that sends the messages of its origin whose author passes a test.
/// `filterAuthor`, `from` and `notFrom` create one, and so does its initializer (SwiftObserver's
/// shape).
///
/// ```swift
/// let friendMessages = AuthorFilter(messenger) { author in friends.contains { $0 === author } }
/// let joesMessages = messenger.from(joe)
/// ```
///
/// It is a type of its own, not a ``Filter``: a closure that fits both a message and an author
/// (any closure over class-typed messages, or `{ _ in true }`) then means one thing in each
/// type. You must hold it: observing it does not keep it alive. It holds its ``origin``
/// strongly; replace the origin to re-wire it. Authors pass through unchanged.
public final class AuthorFilter<Origin: ObservableObject>: Messenger<Origin.Message> {
    // Immutable after init; `OriginLink` is thread-safe.
    @usableFromInline let link: OriginLink<Origin>

    @inlinable
    init(
        _ origin: Origin, site: DeclarationSite,
        keep: @escaping (Origin.Message, AnyAuthor) -> Bool
    ) {
        let core = MessengerCore<Origin.Message>()
        link = OriginLink(origin: origin, site: site) { message, author in
            if keep(message, author) { core.send(message, from: author) }
        }
        super.init(core: core)
    }

    /// A stand-alone transform that sends only `origin`'s messages whose author passes
    /// `isIncluded` (`origin.filterAuthor { }` is the same).
    ///
    /// ```swift
    /// let joesMessages = AuthorFilter(messenger) { $0 === joe }
    /// ```
    @inlinable
    public convenience init(
        _ origin: Origin, fileID: StaticString = #fileID, line: UInt = #line,
        _ isIncluded: @escaping (AnyAuthor) -> Bool
    ) {
        self.init(origin, site: DeclarationSite(fileID: fileID, line: line)) { _, author in
            isIncluded(author)
        }
    }

    /// The observable object whose messages this transform filters. Setting it re-wires the
    /// transform to the new origin.
    public var origin: Origin {
        get { link.origin! }
        set { link.origin = newValue }
    }
}

// Thread-safe by construction (its link and messenger core own locks); it is `Sendable` when
// what it holds and sends is.
extension AuthorFilter: @unchecked Sendable where Origin: Sendable, Origin.Message: Sendable {}
