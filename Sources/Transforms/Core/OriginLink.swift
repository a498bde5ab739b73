import Messaging

/// The link from a stand-alone transform to its origin: it observes the current origin and passes
/// every message, with its author, to `forward`. Replacing the origin re-wires: the new origin is
/// observed before the old one is let go, so no message sent after the replacement is lost.
///
/// The link holds its origin strongly (as SwiftObserver's transforms do), or weakly for ``Weak``.
/// The origin's messenger holds only the `forward` closure, which captures the transform's
/// messenger core and never the transform, so dropping a transform frees it.
@usableFromInline
package final class OriginLink<Origin: ObservableObject>: @unchecked Sendable {
    // `lock` protects the origin references and `connection`. `forward` is immutable.
    private let lock = Lock()
    @exclusivity(unchecked) private var strongOrigin: Origin?
    @exclusivity(unchecked) private weak var weakOrigin: Origin?
    @exclusivity(unchecked) private var connection: Connection<Origin.Message>?
    private let holdsWeakly: Bool
    private let site: DeclarationSite
    private let forward: (Origin.Message, AnyAuthor) -> Void

    @usableFromInline
    package init(
        origin: Origin?, weakly: Bool = false, site: DeclarationSite,
        forward: @escaping (Origin.Message, AnyAuthor) -> Void
    ) {
        holdsWeakly = weakly
        self.site = site
        self.forward = forward
        if weakly { weakOrigin = origin } else { strongOrigin = origin }
        connection = origin?.messenger.core.connect(receiver: nil, site: site, receive: forward)
    }

    deinit {
        connection?.detachFromMessenger()
    }

    /// The current origin (nil only for a weak link whose origin died or was set to nil).
    package var origin: Origin? {
        get { lock.withLock { holdsWeakly ? weakOrigin : strongOrigin } }
        set {
            let newConnection = newValue?.messenger.core.connect(
                receiver: nil, site: site, receive: forward)
            // The replaced origin and connection are released after unlocking: the last
            // reference to an object may run a `deinit` that reaches back here.
            let (oldConnection, oldOrigin) = lock.withLock {
                let old = (connection, strongOrigin)
                if holdsWeakly { weakOrigin = newValue } else { strongOrigin = newValue }
                connection = newConnection
                return old
            }
            oldConnection?.detachFromMessenger()
            _ = oldOrigin
        }
    }
}
