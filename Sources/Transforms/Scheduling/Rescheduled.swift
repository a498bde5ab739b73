import Messaging

/// A stand-alone transform that delivers its origin's messages later, through a scheduler:
/// `coalesce(on:)` and `receive(on:)` create one.
///
/// You must hold it; it holds its origin strongly. Authors pass through.
public final class Rescheduled<Origin: ObservableObject>: Messenger<Origin.Message> {
    @usableFromInline let link: OriginLink<Origin>

    @usableFromInline
    init(_ origin: Origin, site: DeclarationSite, stage: Stage<Origin.Message, Origin.Message>) {
        let core = MessengerCore<Origin.Message>()
        link = OriginLink(
            origin: origin, site: site,
            forward: stage { message, author in core.send(message, from: author) })
        super.init(core: core)
    }

    /// The observable object whose messages are rescheduled. Setting it re-wires.
    public var origin: Origin {
        get { link.origin! }
        set { link.origin = newValue }
    }
}

/// Ends the scheduled work of a stage when the observation that owns it ends: the stage's input
/// closure holds the owner; the scheduled work holds only the `isCancelled` flag.
@usableFromInline
final class ScheduledStageOwner: @unchecked Sendable {
    @usableFromInline let cancellation: Cancellation
    @usableFromInline init(_ cancellation: Cancellation) { self.cancellation = cancellation }
    deinit { cancellation.cancel() }
}

/// A thread-safe one-way flag.
@usableFromInline
final class Cancellation: @unchecked Sendable {
    private let lock = Lock()
    @exclusivity(unchecked) private var cancelled = false
    @usableFromInline init() {}
    @usableFromInline var isCancelled: Bool { lock.withLock { cancelled } }
    func cancel() { lock.withLock { cancelled = true } }
}

// Thread-safe by construction (its links and messenger core own locks); it is `Sendable` when
// what it holds and sends is.
extension Rescheduled: @unchecked Sendable where Origin: Sendable, Origin.Message: Sendable {}
