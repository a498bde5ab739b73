import Messaging

/// The one implementation of "switch to latest", shared by the stand-alone ``SwitchToLatest``
/// and the ad hoc `flatMapLatest`, on Herald's re-wiring engine (``SwitchEngine``): it observes
/// one inner object at a time and forwards its messages.
///
/// Selections and inner messages are handled one at a time, in order, so `forward` never runs
/// concurrently with itself, and a message of an inner object that was replaced meanwhile is
/// dropped. When the new inner object is an ``ObservableCache``, switching also forwards its
/// ``ObservableCache/latestMessage``, read in the same step as its observation starts:
/// re-wiring to another object is a change of state that the observer must hear about (this is
/// what a key path does when an intermediate object changes).
@usableFromInline
package final class LatestInner<Inner: ObservableObject>: SwitchEngineClient, @unchecked Sendable {
    @usableFromInline
    package enum Event {
        /// Observe this inner object (nil: none, "unreachable"); forward its latest message if
        /// `announce` and it has one.
        case select(Inner?, announce: Bool)
        /// Select what this returns, from the origin's state read now, without announcing it
        /// (the initial wiring).
        case start(() -> Inner?)
        /// A message of the inner object.
        case message(Inner.Message)
    }

    @usableFromInline package let switchEngine = SwitchEngine<Event>(levels: 1)
    private let site: DeclarationSite
    private let forward: (Inner.Message, AnyAuthor) -> Void
    // `lock` guards `current`, which `inner` reads from any thread; only the handling of events
    // (one at a time) changes it.
    private let lock = Lock()
    @exclusivity(unchecked) private var current: (inner: Inner, connection: ConnectionBase)?
    /// Whether a selection was handled: the initial wiring (`.start`) then has nothing to add,
    /// since a selection carries newer state. Touched only while handling events.
    private var hasSelected = false

    @usableFromInline
    package init(site: DeclarationSite, forward: @escaping (Inner.Message, AnyAuthor) -> Void) {
        self.site = site
        self.forward = forward
        switchEngine.start(for: self, site: site)
    }

    deinit {
        current?.connection.detachFromMessenger()
    }

    /// The inner object observed now.
    var inner: Inner? { lock.withLock { current?.inner } }

    /// Observes `inner` instead of the current inner object (nil: none, "unreachable"), and
    /// forwards its latest message, on behalf of `author`, if it is a cache.
    @usableFromInline
    package func switchTo(_ inner: Inner?, author: AnyAuthor) {
        switchEngine.send(.select(inner, announce: true), from: author)
    }

    /// The initial wiring: observes the object that `select` returns, called in turn with the
    /// other events, so it reads the origin's state after the origin's observation started
    /// (whatever changes it later arrives as a message). Forwards nothing.
    @usableFromInline
    package func start(selecting select: @escaping () -> Inner?) {
        switchEngine.send(.start(select), from: self)
    }

    @usableFromInline package func handle(_ event: Event, from author: AnyAuthor) {
        switch event {
        case .message(let message):
            forward(message, author)
        case .select(let inner, let announce):
            hasSelected = true
            rewire(to: inner, announcing: announce, from: author)
        case .start(let select):
            // A message of the origin that arrived first (sent as the observation started, by
            // the origin's 0→1 hook, say) selected from newer state than the start reads.
            guard !hasSelected else { return }
            rewire(to: select(), announcing: false, from: author)
        }
    }

    private func rewire(to inner: Inner?, announcing announce: Bool, from author: AnyAuthor) {
        var started: (inner: Inner, connection: ConnectionBase)?
        var latest: Inner.Message?
        if let inner {
            let tag = switchEngine.tag(level: 0)
            let engine = switchEngine
            let (connection, read) = inner.connectReadingLatest(site: site) { message, author in
                #if DEBUG
                    SwitchTestHooks.beforeForwarding?()
                #endif
                engine.send(.message(message), tag: tag, from: author)
            }
            started = (inner, connection)
            latest = read
        } else {
            switchEngine.invalidate(from: 0)
        }
        // The replaced inner object and connection are released after unlocking.
        let replaced = lock.withLock {
            defer { current = started }
            return current
        }
        replaced?.connection.detachFromMessenger()
        if announce, let latest { forward(latest, author) }
    }
}
