import Messaging

/// A stand-alone transform that turns every message of its origin into another message. `map`,
/// `new()` and `unwrap(_:)` with a default create one.
///
/// ```swift
/// let title = Var<String?>("Draft")
/// let titleLength = title.new().unwrap("Untitled").map { $0.count }
/// observer.observe(titleLength) { length in print(length) }
/// title.value = nil   // Prints "8"
/// ```
///
/// You must hold a stand-alone transform: observing it does not keep it alive. It holds its
/// ``origin`` strongly; replace the origin to re-wire it (no message is sent on replacement).
/// Authors pass through unchanged. Over an ``ObservableCache``, a `Map` is a cache too: its
/// ``latestMessage`` is the transformed origin's.
public final class Map<Origin: ObservableObject, Message>: Messenger<Message> {
    // Immutable after init; `OriginLink` is thread-safe.
    @usableFromInline let transform: (Origin.Message) -> Message
    @usableFromInline let link: OriginLink<Origin>

    @inlinable
    init(
        _ origin: Origin, site: DeclarationSite,
        transform: @escaping (Origin.Message) -> Message
    ) {
        let core = MessengerCore<Message>()
        self.transform = transform
        let lending = StageLending(core: core) { downstream, gate in
            // The closure itself, not the sink: calling a captured closure costs no retain.
            let downstream = unsafeDowncast(downstream, to: StageSink<Message>.self).receive
            return StageSink<Origin.Message> { message, author in
                if gate.isOpen { downstream(transform(message), author) }
            }
        }
        link = OriginLink(origin: origin, site: site, lending: lending) { message, author in
            core.send(transform(message), from: author)
        }
        super.init(core: core)
    }

    /// A stand-alone transform that sends `transform` of each message of `origin`
    /// (SwiftObserver's `Mapper`; `origin.map { }` is the same).
    ///
    /// ```swift
    /// let lengths = Map(texts) { $0.count }
    /// ```
    @inlinable
    public convenience init(
        _ origin: Origin, fileID: StaticString = #fileID, line: UInt = #line,
        _ transform: @escaping (Origin.Message) -> Message
    ) {
        self.init(origin, site: DeclarationSite(fileID: fileID, line: line), transform: transform)
    }

    /// The observable object whose messages this transform maps. Setting it re-wires the
    /// transform to the new origin (setting the origin it observes already changes nothing).
    ///
    /// ```swift
    /// let titleLength = Var("Dummy Title").new().map { $0.count }
    /// titleLength.origin.origin = realTitle
    /// ```
    public var origin: Origin {
        get { link.origin! }
        set { link.origin = newValue }
    }
}

extension Map: ObservableCache where Origin: ObservableCache {
    /// The origin's latest message, transformed.
    public var latestMessage: Message { transform(origin.latestMessage) }
}

extension ObservableObject {
    /// A stand-alone transform that sends `transform(message)` for every message.
    ///
    /// ```swift
    /// let messenger = Messenger<String>()
    /// let stringToInt = messenger.map { Int($0) }   // sends Int?
    /// ```
    @inlinable
    public func map<Mapped>(
        fileID: StaticString = #fileID, line: UInt = #line,
        _ transform: @escaping (Message) -> Mapped
    ) -> Map<Self, Mapped> {
        Map(self, site: DeclarationSite(fileID: fileID, line: line), transform: transform)
    }
}

extension ObservationChain {
    /// Maps every message of the chain.
    ///
    /// ```swift
    /// observer.observe(sky).map { $0 == .blue }.receive { isBlue in }
    /// ```
    @inlinable
    public func map<Mapped>(
        _ transform: @escaping (Message) -> Mapped
    ) -> ObservationChain<Origin, Mapped> {
        appendingMap(transform)
    }

    /// Maps every message of the chain and receives the result.
    ///
    /// ```swift
    /// observer.observe(title).map({ $0.new.count }) { length in print(length) }
    /// ```
    @inlinable
    public func map<Mapped>(
        _ transform: @escaping (Message) -> Mapped, receive: @escaping (Mapped) -> Void
    ) {
        map(transform).receive(receive)
    }

    /// Maps every message of the chain and receives the result with its author.
    @inlinable
    public func map<Mapped>(
        _ transform: @escaping (Message) -> Mapped,
        receive: @escaping (Mapped, AnyAuthor) -> Void
    ) {
        map(transform).receive(receive)
    }
}

extension Map: StageLendingTransform {
    var fusionLink: any FusionLink { link }
}

// Thread-safe by construction (its links and messenger core own locks); it is `Sendable` when
// what it holds and sends is.
extension Map: @unchecked Sendable where Origin: Sendable, Message: Sendable {}
