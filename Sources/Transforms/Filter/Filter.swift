import Messaging

/// A stand-alone transform that sends some of its origin's messages, possibly of another type.
/// `filter`, `select`, `unwrap()` and `changes()` create one, and so do its initializers
/// (SwiftObserver's shapes).
///
/// ```swift
/// let messenger = Messenger<String>()
/// let shortMessages = messenger.filter { $0.count < 10 }
/// let sameThing = Filter(messenger) { $0.count < 10 }
/// let presentCodes = Filter(optionalCodes)   // no closure: unwraps, as `unwrap()` does
/// ```
///
/// You must hold a stand-alone transform: observing it does not keep it alive. It holds its
/// ``origin`` strongly; replace the origin to re-wire it. Authors pass through unchanged.
public final class Filter<Origin: ObservableObject, Message>: Messenger<Message> {
    // Immutable after init; `OriginLink` is thread-safe.
    @usableFromInline let link: OriginLink<Origin>

    @inlinable
    init(
        _ origin: Origin, site: DeclarationSite,
        transform: @escaping (Origin.Message, AnyAuthor) -> Message?
    ) {
        let core = MessengerCore<Message>()
        let lending = StageLending(core: core) { downstream, gate in
            // The closure itself, not the sink: calling a captured closure costs no retain.
            let downstream = unsafeDowncast(downstream, to: StageSink<Message>.self).receive
            return StageSink<Origin.Message> { message, author in
                if gate.isOpen, let transformed = transform(message, author) {
                    downstream(transformed, author)
                }
            }
        }
        link = OriginLink(origin: origin, site: site, lending: lending) { message, author in
            if let transformed = transform(message, author) { core.send(transformed, from: author) }
        }
        super.init(core: core)
    }

    /// The observable object whose messages this transform filters. Setting it re-wires the
    /// transform to the new origin (setting the origin it observes already changes nothing).
    public var origin: Origin {
        get { link.origin! }
        set { link.origin = newValue }
    }
}

extension Filter where Message == Origin.Message {
    /// A stand-alone transform that sends only `origin`'s messages for which `isIncluded` is
    /// true (SwiftObserver's shape; `origin.filter { }` is the same).
    ///
    /// ```swift
    /// let bigNumbers = Filter(numbers) { $0 > 9 }
    /// ```
    @inlinable
    public convenience init(
        _ origin: Origin, fileID: StaticString = #fileID, line: UInt = #line,
        _ isIncluded: @escaping (Message) -> Bool
    ) {
        self.init(origin, site: DeclarationSite(fileID: fileID, line: line)) { message, _ in
            isIncluded(message) ? message : nil
        }
    }
}

extension ObservableObject {
    /// A stand-alone transform that sends only the messages for which `isIncluded` is true.
    ///
    /// ```swift
    /// let bigNumbers = numbers.filter { $0 > 9 }
    /// ```
    @inlinable
    public func filter(
        fileID: StaticString = #fileID, line: UInt = #line,
        _ isIncluded: @escaping (Message) -> Bool
    ) -> Filter<Self, Message> {
        Filter(self, site: DeclarationSite(fileID: fileID, line: line)) { message, _ in
            isIncluded(message) ? message : nil
        }
    }
}

extension ObservationChain {
    /// Lets only the messages through for which `isIncluded` is true.
    ///
    /// ```swift
    /// observer.observe(numbers).filter { $0 > 9 }.receive { bigNumber in }
    /// ```
    @inlinable
    public func filter(
        _ isIncluded: @escaping (Message) -> Bool
    ) -> ObservationChain<Origin, Message> {
        appendingFilter { message, _ in isIncluded(message) }
    }

    /// Receives only the messages for which `isIncluded` is true.
    @inlinable
    public func filter(
        _ isIncluded: @escaping (Message) -> Bool, receive: @escaping (Message) -> Void
    ) {
        filter(isIncluded).receive(receive)
    }

    /// Receives only the messages for which `isIncluded` is true, with their authors.
    @inlinable
    public func filter(
        _ isIncluded: @escaping (Message) -> Bool,
        receive: @escaping (Message, AnyAuthor) -> Void
    ) {
        filter(isIncluded).receive(receive)
    }
}

extension Filter: StageLendingTransform {
    var fusionLink: any FusionLink { link }
}

// Thread-safe by construction (its links and messenger core own locks); it is `Sendable` when
// what it holds and sends is.
extension Filter: @unchecked Sendable where Origin: Sendable, Message: Sendable {}
