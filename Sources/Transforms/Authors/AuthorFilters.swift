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

    /// A stand-alone transform that sends only the messages authored by `author`. It holds
    /// `author` weakly; once the author is gone (or if it is `nil`), nothing passes.
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

    /// A stand-alone transform that sends only the messages not authored by `author`. It holds
    /// `author` weakly; once the author is gone (or if it is `nil`), everything passes.
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

    /// Lets only the messages through that `author` wrote (held weakly). Once the author is gone,
    /// or if it is `nil`, nothing passes.
    @inlinable
    public func from(_ author: AnyAuthor?) -> ObservationChain<Origin, Message> {
        appendingFilter(AuthorRules.from(author))
    }

    /// Receives only the messages that `author` wrote (held weakly).
    @inlinable
    public func from(_ author: AnyAuthor?, receive: @escaping (Message) -> Void) {
        from(author).receive(receive)
    }

    /// Receives only the messages that `author` wrote (held weakly), with their authors.
    @inlinable
    public func from(_ author: AnyAuthor?, receive: @escaping (Message, AnyAuthor) -> Void) {
        from(author).receive(receive)
    }

    /// Lets only the messages through that `author` did not write (held weakly): the way to
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

    /// Receives only the messages that `author` did not write (held weakly).
    @inlinable
    public func notFrom(_ author: AnyAuthor?, receive: @escaping (Message) -> Void) {
        notFrom(author).receive(receive)
    }

    /// Receives only the messages that `author` did not write (held weakly), with their authors.
    @inlinable
    public func notFrom(_ author: AnyAuthor?, receive: @escaping (Message, AnyAuthor) -> Void) {
        notFrom(author).receive(receive)
    }
}

/// The author predicates behind `from` and `notFrom`, shared by both forms. They capture the
/// author weakly so that an observation never keeps an author alive.
@usableFromInline
enum AuthorRules {
    // Both compare addresses first and load the weak reference only when they match: a weak
    // load on every delivery would be the slowest part of a shared-state observation. The weak
    // reference only guards against a new object that reuses a dead author's address.

    // They take the message too (and ignore it), so that an ad hoc chain uses them as its
    // filter stage directly, without one more closure call per message.

    // A `nil` author (SwiftObserver takes optional ones) wrote nothing: `from(nil)` lets
    // nothing through, `notFrom(nil)` everything.

    @inlinable
    static func from<Message>(_ author: AnyAuthor?) -> (Message, AnyAuthor) -> Bool {
        guard let author else { return { _, _ in false } }
        let identity = ObjectIdentifier(author)
        return { [weak author] _, candidate in
            ObjectIdentifier(candidate) == identity && author != nil
        }
    }

    @inlinable
    static func notFrom<Message>(_ author: AnyAuthor?) -> (Message, AnyAuthor) -> Bool {
        guard let author else { return { _, _ in true } }
        let identity = ObjectIdentifier(author)
        return { [weak author] _, candidate in
            ObjectIdentifier(candidate) != identity || author == nil
        }
    }
}
