import Transforms

/// A live observation of a ``PropertyPath`` from a root object: an observable object whose value
/// is the path's end value, or `nil` while the path is unreachable.
///
/// ```swift
/// let zipCode = ObservedPath(cache, PropertyPath(\.$currentUser).appending(\.$address).appending(\.$zipCode))
/// observer.observe(zipCode) { update in print(update.old ?? "-", "→", update.new ?? "-") }
/// cache.currentUser = ann           // re-wires to ann's address; sends her zip code
/// ann.address?.zipCode = "10115"    // sends the change
/// ann.address = nil                 // unreachable: sends Update("10115", nil)
/// ```
///
/// It sends an ``Update`` whenever the end value changes, whether a property at the end changed
/// or an object along the path was replaced (then it re-wires: it observes the new object's
/// properties and lets go of the old one's). Replacing an intermediate object with one that leads
/// to an equal end value sends nothing (values compare as a ``Variable``'s do). Each update is
/// authored by the author of the change that caused it. Starting sends nothing; `latestMessage`
/// and ``value`` give the current end value.
///
/// When `Value` is itself optional, ``value`` is doubly optional: `nil` is "unreachable",
/// `.some(nil)` is "reachable, and the value is nil".
///
/// It is also the observation of the path as an object (as ``Observing`` is for one object): it
/// runs while you hold it, ``stop()`` ends it, and it ends by itself when the root dies
/// (``isActive`` then turns false, after an update to `nil`, authored by the path; then every
/// observation of the path ends too). It holds its root and the path's objects weakly.
/// Hold the `ObservedPath` as long as you observe it. Thread-safe: changes along the path are
/// handled one at a time, in the order they happen.
public final class ObservedPath<Root: AnyObject, Value>: Messenger<Update<Value?>>, ObservableCache
{
    private let tracker: PathTracker<Value>

    /// Starts tracking `path` from `root`.
    public init(
        _ root: Root, _ path: PropertyPath<Root, Value>, fileID: StaticString = #fileID,
        line: UInt = #line
    ) {
        let core = MessengerCore<Update<Value?>>()
        tracker = PathTracker(
            root: root, components: path.components,
            site: DeclarationSite(fileID: fileID, line: line), output: core)
        super.init(core: core)
        tracker.setAuthor(self)
    }

    deinit {
        tracker.stop()
    }

    /// The path's end value, or `nil` while it is unreachable.
    public var value: Value? { tracker.current }

    /// Whether every object along the path is there.
    public var isReachable: Bool { value != nil }

    /// Whether the path is still observed: neither stopped nor ended by the root's death.
    public var isActive: Bool { tracker.isActive }

    /// Stops observing the path: no more updates; ``value`` keeps the last end value. Calling it
    /// again is harmless.
    public func stop() {
        tracker.stop()
    }

    /// Sets the property at the end of the path, on behalf of `author`; false if the path is
    /// unreachable. (Bindings write through this.)
    func write(_ value: Value, as author: AnyAuthor) -> Bool {
        tracker.write(value, as: author)
    }

    /// Calls `handler` whenever the path re-wires to another property at its end (another object
    /// holds it now). Bindings use it to bring a new target in sync at once.
    func whenEndPropertyChanges(_ handler: @escaping () -> Void) {
        tracker.setEndPropertyHandler(handler)
    }

    /// Calls `handler` once the path ends: when it is stopped (or dropped), or when its root
    /// dies (after the last update, if any). Debug watches use it to end themselves.
    func whenEnded(_ handler: @escaping () -> Void) {
        tracker.setEndHandler(handler)
    }

    /// An update whose `old` and `new` are both the current end value.
    public var latestMessage: Update<Value?> {
        let current = value
        return Update(current, current)
    }
}

// Thread-safe by construction (the tracker serializes changes; the messenger core owns a lock).
extension ObservedPath: @unchecked Sendable where Value: Sendable {}

/// The engine behind ``ObservedPath``: it keeps one observation per attached component and
/// re-wires the components after one whose object changed.
///
/// Changes from the components' observations (which may arrive on any thread, for different
/// components at once) are funnelled through an internal messenger, so they are handled one at a
/// time, outside any lock (attaching may start observations and run their observation-state
/// handlers), in acceptance order; the end value is then sent through the output messenger.
final class PathTracker<Value>: @unchecked Sendable {
    // `links` and `stopped` are guarded by `lock`; changes to them are made only by the handling
    // of `changes` (serialized by that messenger) and by `stop()`. `current` is guarded by the
    // output core's lock, so that a new end value and its update are accepted in one step.
    private let lock = Lock()
    @exclusivity(unchecked) private var links: [AttachedLink] = []
    /// Numbers links; used only while attaching (in `init` or while handling a change).
    private var linkCount: UInt64 = 0
    @exclusivity(unchecked) private var stopped = false
    @exclusivity(unchecked) private var endPropertyHandler: (() -> Void)?
    @exclusivity(unchecked) private var endHandler: (() -> Void)?
    /// The path object (the ``ObservedPath``), the author of the last update when the root dies.
    @exclusivity(unchecked) private weak var pathObject: AnyObject?
    private weak var root: AnyObject?
    private let components: [PathComponent]
    private let site: DeclarationSite
    private let output: MessengerCore<Update<Value?>>
    private let changes = MessengerCore<PathChange>()
    /// Owns the observation of the root's property, to hear when the root (and so that
    /// observation) dies: then the path is evaluated again from the root.
    private let rootReceiver: Receiver
    private static var rootDied: Int { -1 }
    /// A typed path's rule is its end type's; a string path's end value is `Any`, compared by
    /// what it holds, so that equal values never fire there either.
    private let changeRule =
        Value.self == Any.self ? ChangeRule<Value?>.comparingHeldValues : ChangeRule<Value?>()
    @exclusivity(unchecked) private var end: Value?

    init(
        root: AnyObject, components: [PathComponent], site: DeclarationSite,
        output: MessengerCore<Update<Value?>>
    ) {
        self.root = root
        self.components = components
        self.site = site
        self.output = output
        rootReceiver = Receiver { [changes, output] in
            let rootDied = PathChange(level: Self.rootDied, link: 0, value: nil, next: nil)
            changes.send(rootDied, from: output)
        }
        // The connection's closure holds the tracker, and `changes` holds the connection:
        // `stop()` breaks that cycle.
        _ = changes.connect(receiver: nil, site: site) { change, author in
            self.handle(change, from: author)
        }
        // Wire the whole path now; nothing is sent for the starting state.
        let (attached, endValue) = attach(from: 0, object: root)
        lock.withLock { links = attached }
        output.lock.withLock { end = endValue }
    }

    /// The current end value (nil: unreachable).
    var current: Value? { output.lock.withLock { end } }

    /// Whether the tracker still runs: not stopped, and the root is alive.
    var isActive: Bool {
        lock.withLock { !stopped } && root != nil
    }

    /// Sets the property at the end of the path; false if it is unreachable.
    func write(_ value: Value, as author: AnyAuthor) -> Bool {
        let end = lock.withLock { links.count == components.count ? links.last?.link : nil }
        return end?.write(value, as: author) ?? false
    }

    /// Sets the path object (once, right after it is made).
    func setAuthor(_ path: AnyObject) {
        lock.withLock { pathObject = path }
    }

    func setEndPropertyHandler(_ handler: @escaping () -> Void) {
        _ = exchange(\.endPropertyHandler, with: handler)  // the old one is released unlocked
    }

    func setEndHandler(_ handler: @escaping () -> Void) {
        _ = exchange(\.endHandler, with: handler)
    }

    /// Takes the end handler (it runs once).
    private func takeEndHandler() -> (() -> Void)? {
        exchange(\.endHandler, with: nil)
    }

    /// Replaces a handler under the lock and returns the old one, for the caller to call or
    /// release after unlocking.
    private func exchange(
        _ handler: ReferenceWritableKeyPath<PathTracker, (() -> Void)?>,
        with new: (() -> Void)?
    ) -> (() -> Void)? {
        lock.withLock {
            defer { self[keyPath: handler] = new }
            return self[keyPath: handler]
        }
    }

    /// Ends every observation; safe to call while a change is being handled.
    func stop() {
        let detached = lock.withLock {
            stopped = true
            defer { links = [] }
            return links
        }
        for attached in detached { attached.link.end() }
        // Releases the connection, and with it the tracker, once no delivery of a change runs:
        // a delivery keeps its snapshot of the connections alive until it ends.
        changes.disconnectAll()
        takeEndHandler()?()
    }

    /// Attaches the components from `level` on, starting at `object`; returns the links and the
    /// end value (nil where the path became unreachable).
    private func attach(from level: Int, object: AnyObject?) -> (
        [AttachedLink], Value?
    ) {
        var attached: [AttachedLink] = []
        var object = object
        for index in level..<components.count {
            guard let current = object else { return (attached, nil) }
            let receiver = index == 0 ? rootReceiver : nil
            linkCount &+= 1
            let id = linkCount
            let isEnd = index == components.count - 1
            let changed: PathLink.Changed = { [changes] value, next, author in
                changes.send(
                    PathChange(level: index, link: id, value: value, next: next), from: author)
            }
            guard let link = components[index].attach(current, receiver, site, !isEnd, changed)
            else { return (attached, nil) }
            attached.append(AttachedLink(id: id, link: link))
            if isEnd {
                return (attached, link.read().map { $0 as! Value })
            }
            object = link.next()
        }
        return (attached, nil)
    }

    /// Handles a change (one at a time, outside any lock). A manual trigger
    /// (``Inspector/trigger(_:)-(String)``) of a property along the path sends the end value even
    /// though it did not change.
    private func handle(_ change: PathChange, from author: AnyAuthor) {
        let level = change.level
        if level == Self.rootDied {
            // The update this causes has no author of its own: the path is its author.
            let path = lock.withLock { pathObject } ?? author
            if let root {
                // Not a death: the root's property stopped being observed. Observe it again.
                rewire(after: -1, object: root, from: path, forced: false)
                return
            }
            // The root died: a last update to unreachable, then the path is over, and so is
            // every observation of it (which frees an ad hoc observation's path, handler and
            // all), once that update reached them, even if another delivery runs.
            rewire(after: -1, object: nil, from: path, forced: false)
            stop()
            output.disconnectAllAfterDeliveries()
            return
        }
        let isCurrent = lock.withLock {
            !stopped && level < links.count && links[level].id == change.link
        }
        guard isCurrent else { return }  // stopped, or a stale change from a replaced link
        let forced = author === ManualTrigger.author
        if level == components.count - 1 {
            publish(change.value.map { $0 as! Value }, from: author, forced: forced)
        } else {
            // An object along the path changed: re-wire everything after it.
            rewire(after: level, object: change.next, from: author, forced: forced)
        }
    }

    /// Replaces the links after `level` by new ones starting at `object`, then publishes the end
    /// value.
    private func rewire(
        after level: Int, object: AnyObject?, from author: AnyAuthor, forced: Bool
    ) {
        let (attached, endValue) = attach(from: level + 1, object: object)
        let (detached, installed, endHandler) = lock.withLock {
            () -> ([AttachedLink], Bool, (() -> Void)?) in
            guard !stopped, level < links.count else { return (attached, false, nil) }
            let detached = Array(links[(level + 1)...])
            links.replaceSubrange((level + 1)..., with: attached)
            let reachesEnd = links.count == components.count
            return (detached, true, reachesEnd ? endPropertyHandler : nil)
        }
        for old in detached { old.link.end() }
        guard installed else { return }
        publish(endValue, from: author, forced: forced)
        endHandler?()
    }

    /// Sends an update if the end value changed (or if `forced`).
    private func publish(_ newEnd: Value?, from author: AnyAuthor, forced: Bool) {
        output.send(from: author) { () -> Update<Value?>? in
            let old = end
            guard forced || changeRule.isChange(from: old, to: newEnd) else { return nil }
            end = newEnd
            return Update(old, newEnd)
        }
    }
}

/// A change for a path's tracker to handle: the level whose property changed, the link that
/// observed it (a change from a link that was replaced meanwhile is stale), the new value, and
/// the object in it when the path goes on from that property.
struct PathChange {
    let level: Int
    let link: UInt64
    let value: Any?
    let next: AnyObject?
}

/// A link attached by a path's tracker, with the number that tells it from the links that
/// replaced it.
struct AttachedLink {
    let id: UInt64
    let link: PathLink
}
