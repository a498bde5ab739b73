import Messaging

/// The one implementation of "switch to latest", shared by the stand-alone ``SwitchToLatest``
/// and the ad hoc `flatMapLatest`: it observes one inner object at a time and forwards its
/// messages; switching observes the new inner object before letting go of the old one.
///
/// When the new inner object is an ``ObservableCache``, switching also forwards its
/// ``ObservableCache/latestMessage``: re-wiring to another object is a change of state that the
/// observer must hear about (this is what a key path does when an intermediate object changes).
@usableFromInline
final class LatestInner<Inner: ObservableObject>: @unchecked Sendable {
    // Both immutable; `OriginLink` is thread-safe.
    private let link: OriginLink<Inner>
    private let forward: (Inner.Message, AnyAuthor) -> Void

    @usableFromInline
    init(site: DeclarationSite, forward: @escaping (Inner.Message, AnyAuthor) -> Void) {
        self.forward = forward
        link = OriginLink(origin: nil, site: site, forward: forward)
    }

    /// The inner object observed now.
    var inner: Inner? { link.origin }

    /// Observes `inner` instead of the current inner object (nil: none, "unreachable").
    @usableFromInline
    func switchTo(_ inner: Inner?, author: AnyAuthor) {
        link.origin = inner
        if let inner, let latest = latestMessageIfCache(of: inner) { forward(latest, author) }
    }

    /// Observes `inner` without forwarding anything (the initial wiring).
    @usableFromInline
    func start(with inner: Inner?) {
        link.origin = inner
    }
}

/// Pulls the latest message out of an object that may be an ``ObservableCache``.
@usableFromInline
func latestMessageIfCache<Object: ObservableObject>(of object: Object) -> Object.Message? {
    func latest<Cache: ObservableCache>(of cache: Cache) -> Any { cache.latestMessage }
    guard let cache = object as? any ObservableCache else { return nil }
    return latest(of: cache) as? Object.Message
}
