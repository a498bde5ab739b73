import Messaging

/// A stand-alone transform that forwards the messages of whichever observable object its
/// origin's latest message selects, re-wiring whenever the selection changes. `flatMapLatest`
/// and `switchToLatest()` create one.
///
/// ```swift
/// let currentUser = Var<User?>(nil)
/// let userName = currentUser.flatMapLatest { $0.new?.name }   // name: Var<String>
/// observer.observe(userName) { update in print(update.new) }
/// currentUser.value = ann      // re-wires to ann.name and sends its current value
/// ann.name.value = "Annie"     // forwarded
/// ```
///
/// - Selecting `nil` stops forwarding until a later message selects an object ("unreachable").
/// - Switching to an ``ObservableCache`` also sends its latest message (authored by the author of
///   the origin's message), because the state the observer sees has changed.
/// - If the origin is an ``ObservableCache``, the transform wires itself to the object its
///   current latest message selects as soon as it is created (without sending anything).
///
/// It holds its origin and the current inner object strongly.
public final class SwitchToLatest<Origin: ObservableObject, Inner: ObservableObject>:
    Messenger<Inner.Message>
{
    @usableFromInline let latest: LatestInner<Inner>
    @usableFromInline let link: OriginLink<Origin>

    @inlinable
    init(_ origin: Origin, site: DeclarationSite, select: @escaping (Origin.Message) -> Inner?) {
        let core = MessengerCore<Inner.Message>()
        let latest = LatestInner<Inner>(site: site) { message, author in
            core.send(message, from: author)
        }
        self.latest = latest
        link = OriginLink(origin: origin, site: site) { message, author in
            latest.switchTo(select(message), author: author)
        }
        // Over a cache, wire to what its current message selects, read once the origin is
        // observed: a change after that arrives as a message.
        if origin is any ObservableCache {
            latest.start { latestMessageIfCache(of: origin).flatMap(select) }
        }
        super.init(core: core)
    }

    /// The object whose messages select the inner object. Setting it re-wires.
    public var origin: Origin {
        get { link.origin! }
        set { link.origin = newValue }
    }

    /// The inner object whose messages are forwarded now, or nil ("unreachable").
    public var inner: Inner? { latest.inner }
}

extension ObservableObject {
    /// A stand-alone transform that forwards the messages of the object that `select` picks from
    /// this object's latest message, re-wiring whenever a message picks another object.
    ///
    /// ```swift
    /// let zipCode = user.flatMapLatest { $0.new?.address }
    /// ```
    @inlinable
    public func flatMapLatest<Inner: ObservableObject>(
        fileID: StaticString = #fileID, line: UInt = #line,
        _ select: @escaping (Message) -> Inner?
    ) -> SwitchToLatest<Self, Inner> {
        SwitchToLatest(self, site: DeclarationSite(fileID: fileID, line: line), select: select)
    }

    /// A stand-alone transform over an object whose messages are observable objects (or nil): it
    /// forwards the messages of the latest one.
    @inlinable
    public func switchToLatest<Inner: ObservableObject>(
        fileID: StaticString = #fileID, line: UInt = #line
    ) -> SwitchToLatest<Self, Inner> where Message == Inner? {
        flatMapLatest(fileID: fileID, line: line) { $0 }
    }
}

extension ObservationChain {
    /// Forwards the messages of the object that `select` picks from each message, re-wiring
    /// whenever a message picks another object (see ``SwitchToLatest``). The inner observation
    /// ends with this observation.
    ///
    /// ```swift
    /// observer.observe(currentUser).flatMapLatest { $0.new?.name }.new().receive { name in }
    /// ```
    @inlinable
    public func flatMapLatest<Inner: ObservableObject>(
        _ select: @escaping (Message) -> Inner?
    ) -> ObservationChain<Origin, Inner.Message> {
        let site = self.site
        let current = self.current
        return appending(startingStage: { downstream, whenStarted in
            let latest = LatestInner<Inner>(site: site, forward: downstream)
            // Over a cache, wire to the current selection as soon as the origin is observed, as
            // the stand-alone form does.
            whenStarted.append { latest.start { current().flatMap(select) } }
            return { message, author in latest.switchTo(select(message), author: author) }
        })
    }

    /// Forwards the messages of the latest observable object in the chain (see
    /// ``flatMapLatest(_:)``).
    @inlinable
    public func switchToLatest<Inner: ObservableObject>() -> ObservationChain<Origin, Inner.Message>
    where Message == Inner? {
        flatMapLatest { $0 }
    }
}

// Thread-safe by construction (its links and messenger core own locks); it is `Sendable` when
// what it holds and sends is.
extension SwitchToLatest: @unchecked Sendable
where Origin: Sendable, Inner: Sendable, Inner.Message: Sendable {}
