import Messaging

extension ObservableObject {
    /// A stand-alone transform that sends only the messages whose author passes `isIncluded`.
    ///
    /// ```swift
    /// let friendMessages = messenger.filterAuthor { friends.contains($0) }
    /// ```
    @inlinable
    public func filterAuthor(
        fileID: StaticString = #fileID, line: UInt = #line,
        _ isIncluded: @escaping (AnyAuthor) -> Bool
    ) -> AuthorFilter<Self> {
        AuthorFilter(self, site: DeclarationSite(fileID: fileID, line: line)) { _, author in
            isIncluded(author)
        }
    }

    /// A stand-alone transform that sends only the messages authored by `author`. It does not
    /// keep `author` alive; once the author is gone (or if it is `nil`), nothing passes.
    ///
    /// ```swift
    /// let joesMessages = messenger.from(joe)
    /// ```
    @inlinable
    public func from(
        _ author: AnyAuthor?, fileID: StaticString = #fileID, line: UInt = #line
    ) -> AuthorFilter<Self> {
        AuthorFilter(
            self, site: DeclarationSite(fileID: fileID, line: line), keep: AuthorRules.from(author))
    }

    /// A stand-alone transform that sends only the messages not authored by `author`. It does
    /// not keep `author` alive; once the author is gone (or if it is `nil`), everything passes.
    ///
    /// ```swift
    /// let humanMessages = messenger.notFrom(hal9000)
    /// ```
    @inlinable
    public func notFrom(
        _ author: AnyAuthor?, fileID: StaticString = #fileID, line: UInt = #line
    ) -> AuthorFilter<Self> {
        AuthorFilter(
            self, site: DeclarationSite(fileID: fileID, line: line),
            keep: AuthorRules.notFrom(author))
    }
}

extension ObservationChain {
    /// Lets only the messages through whose author passes `isIncluded`.
    @inlinable
    public func filterAuthor(
        _ isIncluded: @escaping (AnyAuthor) -> Bool
    ) -> ObservationChain<Origin, Message> {
        appendingFilter { _, author in isIncluded(author) }
    }

    /// Receives only the messages whose author passes `isIncluded`.
    @inlinable
    public func filterAuthor(
        _ isIncluded: @escaping (AnyAuthor) -> Bool, receive: @escaping (Message) -> Void
    ) {
        filterAuthor(isIncluded).receive(receive)
    }

    /// Receives only the messages whose author passes `isIncluded`, with their authors.
    @inlinable
    public func filterAuthor(
        _ isIncluded: @escaping (AnyAuthor) -> Bool,
        receive: @escaping (Message, AnyAuthor) -> Void
    ) {
        filterAuthor(isIncluded).receive(receive)
    }

    /// Lets only the messages through that `author` wrote (not kept alive by the observation). Once
    /// the author is gone, or if it is `nil`, nothing passes.
    @inlinable
    public func from(_ author: AnyAuthor?) -> ObservationChain<Origin, Message> {
        appendingFilter(AuthorRules.from(author))
    }

    // The receiving forms test the author in the closure that receives, so that a message
    // costs one closure call before the handler, not three (filter stage, rule, handler
    // adapter).

    /// Receives only the messages that `author` wrote (not kept alive by the observation).
    @inlinable
    public func from(_ author: AnyAuthor?, receive: @escaping (Message) -> Void) {
        let identity = AuthorIdentity(author)
        self.receive { message, candidate in
            if identity.wrote(candidate) { receive(message) }
        }
    }

    /// Receives only the messages that `author` wrote, with their authors.
    @inlinable
    public func from(_ author: AnyAuthor?, receive: @escaping (Message, AnyAuthor) -> Void) {
        let identity = AuthorIdentity(author)
        self.receive { message, candidate in
            if identity.wrote(candidate) { receive(message, candidate) }
        }
    }

    /// Lets only the messages through that `author` did not write (not kept alive): the way to
    /// ignore your own changes to shared state. Once the author is gone, or if it is `nil`,
    /// everything passes.
    ///
    /// ```swift
    /// observe(sharedText).notFrom(self) { update in reload() }
    /// sharedText.set("my edit", as: self)   // not received by self
    /// ```
    @inlinable
    public func notFrom(_ author: AnyAuthor?) -> ObservationChain<Origin, Message> {
        appendingFilter(AuthorRules.notFrom(author))
    }

    /// Receives only the messages that `author` did not write (not kept alive by the
    /// observation).
    @inlinable
    public func notFrom(_ author: AnyAuthor?, receive: @escaping (Message) -> Void) {
        let identity = AuthorIdentity(author)
        self.receive { message, candidate in
            if !identity.wrote(candidate) { receive(message) }
        }
    }

    /// Receives only the messages that `author` did not write, with their authors.
    @inlinable
    public func notFrom(_ author: AnyAuthor?, receive: @escaping (Message, AnyAuthor) -> Void) {
        let identity = AuthorIdentity(author)
        self.receive { message, candidate in
            if !identity.wrote(candidate) { receive(message, candidate) }
        }
    }
}

/// The author predicates behind `from` and `notFrom`, shared by every form. They never keep an
/// author alive (see ``AuthorIdentity``).
@usableFromInline
enum AuthorRules {
    // They take the message too (and ignore it), so that an ad hoc chain uses them as its
    // filter stage directly, without one more closure call per message.

    // A `nil` author (SwiftObserver takes optional ones) wrote nothing: `from(nil)` lets
    // nothing through, `notFrom(nil)` everything.

    @inlinable
    static func from<Message>(_ author: AnyAuthor?) -> (Message, AnyAuthor) -> Bool {
        let identity = AuthorIdentity(author)
        return { _, candidate in identity.wrote(candidate) }
    }

    @inlinable
    static func notFrom<Message>(_ author: AnyAuthor?) -> (Message, AnyAuthor) -> Bool {
        let identity = AuthorIdentity(author)
        return { _, candidate in !identity.wrote(candidate) }
    }
}

/// An author, known by its address, that the identity keeps from being reused by another object
/// without keeping the author alive: it holds the author `unowned`, which lets the author die
/// (its `deinit` runs as usual) but keeps its memory allocated until this identity is freed. So a
/// message whose author has the same address is by this author, and once the author died no
/// message has its address. One comparison per message, and no weak reference: a weak one would
/// cost a load on every match, and give the author a side table, which makes every retain and
/// release of the author slower wherever it is used (every `set(_:as:)` retains its author).
@usableFromInline
final class AuthorIdentity: @unchecked Sendable {
    /// The author's address; nil for no author (then nobody is it).
    @usableFromInline let address: ObjectIdentifier?
    /// Keeps the address from being reused; never read.
    private unowned let author: AnyObject?

    @usableFromInline
    init(_ author: AnyAuthor?) {
        address = author.map(ObjectIdentifier.init)
        self.author = author
    }

    /// Whether `candidate` is this author.
    @inlinable @inline(__always)
    func wrote(_ candidate: AnyAuthor) -> Bool {
        ObjectIdentifier(candidate) == address
    }
}
