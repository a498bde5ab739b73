import Messaging

/// A stand-alone transform that remembers the latest message of its origin: an
/// ``ObservableCache`` whose message is the origin's, made optional (but never doubly optional).
///
/// ```swift
/// let errors = Messenger<String>()
/// let lastError = errors.cache()        // an ObservableCache of String?
/// errors.send("disk full")
/// lastError.latestMessage               // "disk full"
/// ```
///
/// ``latestMessage`` is `nil` until the origin sends. Only the origin's messages update it;
/// sending through the cache itself does not. A cache exists only stand-alone (there is nothing
/// to remember in an ad hoc chain).
public final class Cache<Origin: ObservableObject, Cached>: Messenger<Cached?>, ObservableCache {
    /// The latest message; guarded by the messenger core's lock so that remembering a message
    /// and accepting it for delivery are one step.
    @usableFromInline
    final class Storage: @unchecked Sendable {
        @usableFromInline var latest: Cached?
        @usableFromInline init() {}
    }

    @usableFromInline let storage: Storage
    @usableFromInline let link: OriginLink<Origin>

    @inlinable
    init(_ origin: Origin, site: DeclarationSite, wrap: @escaping (Origin.Message) -> Cached?) {
        let core = MessengerCore<Cached?>()
        let storage = Storage()
        self.storage = storage
        link = OriginLink(origin: origin, site: site) { message, author in
            var replaced: Cached?  // released after unlocking, like everything a lock replaces
            core.send(from: author) {
                let wrapped = wrap(message)
                replaced = storage.latest
                storage.latest = wrapped
                return wrapped
            }
            _ = replaced
        }
        super.init(core: core)
    }

    /// The origin's latest message, or `nil` before it sent one.
    public var latestMessage: Cached? {
        core.lock.withLock { storage.latest }
    }

    /// The observable object whose messages this cache remembers. Setting it re-wires the cache
    /// (the remembered message stays until the new origin sends).
    public var origin: Origin {
        get { link.origin! }
        set { link.origin = newValue }
    }
}

extension Cache {
    /// A stand-alone cache of `origin`'s latest message (SwiftObserver's shape;
    /// `origin.cache()` is the same).
    ///
    /// ```swift
    /// let latestColor = Cache(sky)   // latestMessage: Color?
    /// ```
    @inlinable
    public convenience init(_ origin: Origin, fileID: StaticString = #fileID, line: UInt = #line)
    where Origin.Message == Cached {
        self.init(origin, site: DeclarationSite(fileID: fileID, line: line)) { .some($0) }
    }

    /// A stand-alone cache of `origin`'s latest optional message, which stays singly optional
    /// (`origin.cache()` is the same).
    @inlinable
    public convenience init(_ origin: Origin, fileID: StaticString = #fileID, line: UInt = #line)
    where Origin.Message == Cached? {
        self.init(origin, site: DeclarationSite(fileID: fileID, line: line)) { $0 }
    }
}

extension ObservableObject {
    /// A stand-alone cache of this object's latest message.
    ///
    /// ```swift
    /// let latestColor = sky.cache()   // latestMessage: Color?
    /// ```
    @inlinable
    public func cache<Cached>(
        fileID: StaticString = #fileID, line: UInt = #line
    ) -> Cache<Self, Cached> where Message == Cached {
        // Generic (like the optional overload below) so that, for optional messages, the compiler
        // prefers the more specific overload and the cache stays singly optional.
        Cache(self, site: DeclarationSite(fileID: fileID, line: line)) { .some($0) }
    }

    /// A stand-alone cache of this object's latest optional message; its message stays singly
    /// optional.
    ///
    /// ```swift
    /// let latestCode = errorCodes.cache()   // errorCodes sends Int?; latestMessage: Int?
    /// ```
    @inlinable
    public func cache<Wrapped>(
        fileID: StaticString = #fileID, line: UInt = #line
    ) -> Cache<Self, Wrapped> where Message == Wrapped? {
        Cache(self, site: DeclarationSite(fileID: fileID, line: line)) { $0 }
    }
}

// Thread-safe by construction (its links and messenger core own locks); it is `Sendable` when
// what it holds and sends is.
extension Cache: @unchecked Sendable where Origin: Sendable, Cached: Sendable {}
