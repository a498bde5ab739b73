import Observation
import Transforms

/// The Observation tracking of one property of one `@Observable` object, shared by every path
/// link attached to that property, so that at most one `withObservationTracking` registration
/// is ever pending for it.
///
/// A registration stays in the object's registrar until the property next changes; if every
/// re-wiring armed its own, a path re-wired back and forth to the same object would pile them
/// up. So the tracking is armed once, reports a change to its links, and is armed again by the
/// first link's delivery. While armed, the registration holds the tracking (and the registry
/// finds it again); after that, the links do.
final class PropertyTracking<Object: AnyObject & Observable, Value>: TrackingBase,
    @unchecked Sendable
{
    private weak var object: Object?
    private let keyPath: KeyPath<Object, Value>

    private init(_ object: Object, _ keyPath: KeyPath<Object, Value>) {
        self.object = object
        self.keyPath = keyPath
    }

    /// The tracking of `keyPath` on `object`, shared with the links attached to it already.
    static func shared(_ object: Object, _ keyPath: KeyPath<Object, Value>) -> PropertyTracking {
        let key = TrackingKey(object: ObjectIdentifier(object), keyPath: keyPath)
        return TrackingRegistry.shared.tracking(for: key) { existing in
            // An entry whose object died (its address may be reused) does not count.
            if let existing = existing as? PropertyTracking, existing.object === object {
                return existing
            }
            return PropertyTracking(object, keyPath)
        }
    }

    /// The property's value; nil once the object is gone.
    var value: Value? {
        object.map { $0[keyPath: keyPath] }
    }

    /// Sets the property; false if the key path is read-only or the object is gone.
    func set(_ value: Value) -> Bool {
        guard let object, let writable = keyPath as? ReferenceWritableKeyPath<Object, Value>
        else { return false }
        object[keyPath: writable] = value
        return true
    }

    /// Arms the tracking unless it is armed, and reads the value; nil once the object is gone.
    func armAndRead() -> (object: Object, value: Value)? {
        guard let object else { return nil }
        guard claimArming() else { return (object, object[keyPath: keyPath]) }
        return (object, arm(object))
    }

    /// Starts reporting changes to `link` and returns the value it starts from (nil once the
    /// object is gone). Arms the tracking unless it is armed, so re-wiring back and forth costs
    /// no registration. An unarmed tracking may mean a change is being made right now (its
    /// `onChange` came, the value is not stored yet): then the value read here is the old one
    /// and the new registration will not hear of that change, so the link also gets a delivery,
    /// which reads the value again after the set.
    func add(_ link: TrackedLink) -> Value? {
        register(link)
        guard let object else { return nil }
        guard claimArming() else { return object[keyPath: keyPath] }
        let value = arm(object)
        link.willChange()
        return value
    }

    private func arm(_ object: Object) -> Value {
        withObservationTracking {
            object[keyPath: keyPath]
        } onChange: { [self = self as TrackingBase] in
            self.willChange()
        }
    }
}

/// The non-generic part of a ``PropertyTracking``: its links and whether it is armed.
class TrackingBase: @unchecked Sendable {
    /// A link, held weakly, and its identity (to find it without loading the reference: a load
    /// under the lock could release the last reference there and run a `deinit`).
    private struct Entry {
        let id: ObjectIdentifier
        let link: WeakObject
    }

    // Guarded by `lock`.
    private let lock = Lock()
    @exclusivity(unchecked) private var isArmed = false
    @exclusivity(unchecked) private var links: [Entry] = []

    /// Starts reporting changes to `link`.
    final func register(_ link: TrackedLink) {
        lock.withLock { links.append(Entry(id: ObjectIdentifier(link), link: WeakObject(link))) }
    }

    /// Stops reporting changes to `link`.
    final func remove(_ link: TrackedLink) {
        let id = ObjectIdentifier(link)
        lock.withLock { links.removeAll { $0.id == id } }
    }

    /// Whether the caller is to arm the tracking (it was not armed; now it counts as armed).
    final func claimArming() -> Bool {
        lock.withLock {
            defer { isArmed = true }
            return !isArmed
        }
    }

    /// Called by Observation before the property is set: the registration is used up; every
    /// link schedules a delivery.
    final func willChange() {
        // The strong references taken here are released after unlocking; links that died are
        // dropped (found through those references, without loading them twice).
        let current = lock.withLock {
            isArmed = false
            let loaded = links.map { $0.link.object }
            links = zip(links, loaded).filter { $0.1 != nil }.map(\.0)
            return loaded
        }
        for case let link as TrackedLink in current { link.willChange() }
    }
}

/// Identifies a tracked property: the object and the key path.
struct TrackingKey: Hashable, @unchecked Sendable {
    let object: ObjectIdentifier
    let keyPath: AnyKeyPath
}

/// The trackings that are alive, found by object and key path (held weakly).
final class TrackingRegistry: @unchecked Sendable {
    static let shared = TrackingRegistry()

    private let lock = Lock()
    @exclusivity(unchecked) private var trackings: [TrackingKey: WeakObject] = [:]
    /// Dead entries are swept when the registry has doubled since the last sweep.
    @exclusivity(unchecked) private var sweepAt = 64

    /// The tracking for `key`: `resolve` gets the live entry, if any, and returns the one to use
    /// (it must not call user code).
    func tracking<Tracking: TrackingBase>(
        for key: TrackingKey, resolve: (AnyObject?) -> Tracking
    ) -> Tracking {
        lock.withLock {
            let tracking = resolve(trackings[key]?.object)
            trackings[key] = WeakObject(tracking)
            if trackings.count >= sweepAt {
                trackings = trackings.filter { $0.value.object != nil }
                sweepAt = max(64, trackings.count * 2)
            }
            return tracking
        }
    }
}
