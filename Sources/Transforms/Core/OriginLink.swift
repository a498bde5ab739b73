import Messaging
import Synchronization

/// The link from a stand-alone transform to its origin: it observes the current origin and passes
/// every message, with its author, to `forward`. Replacing the origin re-wires: no message sent
/// after the replacement is lost.
///
/// The link holds its origin strongly (as SwiftObserver's transforms do), or weakly for ``Weak``.
/// The origin's messenger holds only the connection's handler, which captures the transform's
/// messenger core and never the transform, so dropping a transform frees it.
///
/// The link of a ``Map`` or a ``Filter`` can also take part in stage fusion (see `StageFusion`):
/// its transform may lend its stage to the transform downstream, and the link's connection may
/// then carry the composed stages of a whole chain, or route messages sent directly into its
/// origin to the chain's root.
@usableFromInline
package final class OriginLink<Origin: ObservableObject>: FusionLink, ConnectionCountObserver,
    @unchecked Sendable
{
    // `lock` protects the origin references, `connection` and `currentGate`. `forward` and
    // `lending` are immutable; `run` is guarded by `StageFusion`'s lock.
    private let lock = Lock()
    @exclusivity(unchecked) private var strongOrigin: Origin?
    @exclusivity(unchecked) private weak var weakOrigin: Origin?
    @exclusivity(unchecked) private var connection: LinkedConnection<Origin.Message>?
    @exclusivity(unchecked) private var currentGate = LinkGate()
    private let holdsWeakly: Bool
    private let site: DeclarationSite
    private let forward: (Origin.Message, AnyAuthor) -> Void
    let lending: StageLending?
    var run: FusedRun?

    @usableFromInline
    package init(
        origin: Origin?, weakly: Bool = false, site: DeclarationSite,
        lending: StageLending? = nil,
        forward: @escaping (Origin.Message, AnyAuthor) -> Void
    ) {
        holdsWeakly = weakly
        self.site = site
        self.forward = forward
        self.lending = lending
        if weakly { weakOrigin = origin } else { strongOrigin = origin }
        lending?.core.setConnectionCountObserver(self)
        if let origin {
            let connection = makeConnection(
                on: origin.messenger.core, gate: currentGate, receive: forward)
            self.connection = connection
            origin.messenger.core.connect(connection)
        }
    }

    deinit {
        currentGate.close()
        connection?.detachFromMessenger()
    }

    /// Whether this transform can lend its stage depends on who observes it.
    @usableFromInline package func connectionCountChanged() {
        StageFusion.settle(self)
    }

    /// The current origin (nil only for a weak link whose origin died or was set to nil).
    package var origin: Origin? {
        get { lock.withLock { holdsWeakly ? weakOrigin : strongOrigin } }
        set {
            // The origin it already observes: nothing to re-wire.
            let unchanged = lock.withLock {
                newValue === (holdsWeakly ? weakOrigin : strongOrigin)
                    && connection?.isActive == true
            }
            guard !unchanged else { return }
            let gate = LinkGate()
            let newConnection = newValue.map {
                makeConnection(on: $0.messenger.core, gate: gate, receive: forward)
            }
            // What is replaced is released after unlocking: the last reference to an object may
            // run a `deinit` that reaches back here.
            let (oldConnection, oldOrigin, oldGate) = lock.withLock {
                let old = (connection, strongOrigin, currentGate)
                if holdsWeakly { weakOrigin = newValue } else { strongOrigin = newValue }
                connection = newConnection
                currentGate = gate
                return old
            }
            if let newValue, let newConnection {
                newValue.messenger.core.connect(newConnection)
                // Another thread may have set the origin again in between, and detached this
                // connection before it was connected: then it must go now.
                if lock.withLock({ connection !== newConnection }) {
                    newConnection.detachFromMessenger()
                }
            }
            oldGate.close()
            oldConnection?.detachFromMessenger()
            _ = oldOrigin
            if lending != nil { StageFusion.settle(self) }
        }
    }

    private func makeConnection(
        on core: MessengerCore<Origin.Message>, gate: LinkGate,
        receive: @escaping (Origin.Message, AnyAuthor) -> Void
    ) -> LinkedConnection<Origin.Message> {
        LinkedConnection(
            core: core, site: site, owner: self, receive: receive,
            whenEndedByObservedSide: { gate.close() })
    }

    // MARK: Stage fusion (called by `StageFusion`)

    var gate: LinkGate { lock.withLock { currentGate } }

    func originLink(keeping bag: KeepAlive) -> (any FusionLink)? {
        guard !holdsWeakly, let origin = lock.withLock({ strongOrigin }) else { return nil }
        bag.keep(origin)
        let link = (origin as? any StageLendingTransform)?.fusionLink
        return link?.lending == nil ? nil : link
    }

    var originTurns: (any DeliveryTurns)? {
        lock.withLock { connection?.isActive == true ? connection?.core : nil }
    }

    var forwardSink: AnyObject { StageSink(forward) }

    /// Messages sent directly into the origin, while the origin lends its stage to this link's
    /// transform: they go through this link's part of the chain in turn with the chain's root.
    var routeSink: AnyObject {
        StageSink { [weak self] (message: Origin.Message, author: AnyAuthor) in
            self?.receiveDirectly(message, from: author)
        }
    }

    func installWhileDelivering(
        _ sink: AnyObject, on core: any DeliveryTurns, keeping bag: KeepAlive
    ) -> Bool {
        lock.withLock {
            guard let old = connection, old.core === core else { return false }
            let new = makeConnection(
                on: old.core, gate: currentGate,
                receive: unsafeDowncast(sink, to: StageSink<Origin.Message>.self).receive)
            guard old.core.replaceWhileDelivering(old, with: new) else {
                bag.keep(new)
                return false
            }
            bag.keep(old)
            connection = new
            return true
        }
    }

    /// A message sent directly into the origin (or handed back to its turn): through the
    /// chain in turn with the chain's root while this link's transform is fused into one, else
    /// through this link's own stage, in turn with the origin's deliveries.
    ///
    /// The message was sent into the origin of the connection whose gate is `routedGate` (the
    /// current one when it arrives): once that observation ended (stopped, or the origin
    /// replaced), it goes nowhere.
    private func receiveDirectly(
        _ message: Origin.Message, from author: AnyAuthor, through routedGate: LinkGate? = nil
    ) {
        let (gate, origin) = lock.withLock { (currentGate, connection?.core) }
        let routedGate = routedGate ?? gate
        guard routedGate.isOpen else { return }
        guard let run = StageFusion.run(of: self) else {
            forward(message, author)
            return
        }
        run.root.performInTurn { [self] in
            guard routedGate.isOpen else { return }
            if let input = StageFusion.input(of: self, in: run) {
                unsafeDowncast(input, to: StageSink<Origin.Message>.self).receive(message, author)
            } else if let origin {
                // The run dissolved meanwhile: this link's stage is back in its origin's turn.
                origin.performInTurn { [self] in
                    receiveDirectly(message, from: author, through: routedGate)
                }
            }
        }
    }
}

/// Whether a link's observation of its current origin stands: closed once the link lets go of
/// it or the observed side ends it. A fused chain checks the gate of every link it passes, so
/// that a stop reaches it at once.
@usableFromInline
package final class LinkGate: Sendable {
    @usableFromInline let closed = Atomic<Bool>(false)

    init() {}

    @inlinable
    var isOpen: Bool { !closed.load(ordering: .acquiring) }

    func close() { closed.store(true, ordering: .releasing) }
}
