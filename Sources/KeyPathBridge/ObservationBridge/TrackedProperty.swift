import Observation
import Transforms

extension PathComponent {
    /// A component for a property of an `@Observable` object, observed with Swift's
    /// Observation; changes are delivered on `scheduler` (see ``TrackedProperty``).
    init<Object: AnyObject & Observable, Value>(
        tracking keyPath: KeyPath<Object, Value>, on scheduler: any MessageScheduler
    ) {
        precondition(
            !(scheduler is ImmediateMessageScheduler),
            "Herald: a tracked @Observable property cannot deliver on .immediate: Observation "
                + "reports a change before the property is set, so the new value can only be "
                + "read later. Use the main queue (the default) or another asynchronous scheduler.")
        let name = ComponentName.shared(keyPath)
        let shape = ObjectShape(Value.self)
        nameBox = name
        isOwnedByReceiver = false
        attach = { object, _, _, _, leadsOn, changed in
            // The typed `PropertyPath` only ever passes an `Object` here.
            let object = unsafeDowncast(object, to: Object.self)
            let learnName = { (object: Object) in
                name.learn { TrackedProperty<Object, Value>.name(of: keyPath, in: object) }
            }
            learnName(object)
            return TrackedProperty.attached(
                to: PropertyTracking.shared(object, keyPath), scheduler: scheduler, shape: shape,
                learnName: learnName
            ) { value, author in
                changed(value, leadsOn ? shape.object(in: value) : nil, author)
            }
        }
    }
}

/// A path's link to one property of one `@Observable` object.
///
/// Swift's Observation calls `onChange` once, *before* the property is set, and must then be
/// armed again. So a change (reported by the property's shared ``PropertyTracking``) schedules a
/// delivery on the link's scheduler; the delivery re-arms the tracking, reads the value (the set
/// is done by then) and passes it on. Changes made before a scheduled delivery runs arrive as
/// one, with the latest value.
final class TrackedProperty<Object: AnyObject & Observable, Value>: TrackedLink,
    @unchecked Sendable
{
    private let tracking: PropertyTracking<Object, Value>
    private let changed: (Value, AnyAuthor) -> Void
    /// Looks for the property's name for logs if it is not known yet (a property that held nil
    /// at first is named once it holds an object).
    private let learnName: (Object) -> Void
    private let shape: ObjectShape
    private let changeRule = ChangeRule<Value>()
    // Guarded by `lock`.
    private let lock = Lock()
    @exclusivity(unchecked) private var isEnded = false
    /// The value last passed on (or attached with): a delivery that reads the same value passes
    /// nothing on.
    @exclusivity(unchecked) private var lastValue: Value?
    /// A binding's write about to be delivered: its author is the author of the delivery if
    /// the delivered value is still the one it wrote.
    @exclusivity(unchecked) private var pendingWrite: (author: WeakObject, value: Value)?
    private init(
        _ tracking: PropertyTracking<Object, Value>, scheduler: any MessageScheduler,
        shape: ObjectShape,
        learnName: @escaping (Object) -> Void, changed: @escaping (Value, AnyAuthor) -> Void
    ) {
        self.tracking = tracking
        self.shape = shape
        self.learnName = learnName
        self.changed = changed
        super.init(scheduler: scheduler)
    }

    /// Attaches the link to its tracking; returns the link.
    static func attached(
        to tracking: PropertyTracking<Object, Value>, scheduler: any MessageScheduler,
        shape: ObjectShape,
        learnName: @escaping (Object) -> Void, changed: @escaping (Value, AnyAuthor) -> Void
    ) -> TrackedProperty {
        let link = TrackedProperty(
            tracking, scheduler: scheduler, shape: shape, learnName: learnName, changed: changed)
        let value = tracking.add(link)
        link.lock.withLock { link.lastValue = value }
        return link
    }

    /// The value the link was attached with (the path reads it only then, to wire itself).
    private var attachedValue: Value? { lock.withLock { lastValue } }

    override func read() -> Any? { attachedValue }
    override func next() -> AnyObject? { attachedValue.flatMap(shape.object(in:)) }

    /// Stops delivering, including deliveries already scheduled.
    override func end() {
        lock.withLock { isEnded = true }
        tracking.remove(self)
    }

    /// Sets the property (a binding's write); false if the key path is read-only, the value has
    /// another type or the object is gone. The delivery of the change is authored by `author`
    /// unless the property was set again meanwhile.
    override func write(_ value: Any, as author: AnyAuthor) -> Bool {
        guard let value = value as? Value, let current = tracking.value else { return false }
        if changeRule.isChange(from: current, to: value) {
            lock.withLock { pendingWrite = (WeakObject(author), value) }
        }
        return tracking.set(value)
    }

    /// A scheduled delivery: the set is done; re-arm, read the new value, pass it on.
    override func deliver() {
        guard !lock.withLock({ isEnded }), let (object, value) = tracking.armAndRead() else {
            return
        }
        let (isChange, write) = lock.withLock {
            defer {
                pendingWrite = nil
                lastValue = value
            }
            return (
                lastValue.map { changeRule.isChange(from: $0, to: value) } ?? true, pendingWrite
            )
        }
        guard isChange else { return }
        var author: AnyAuthor = object
        if let write, let writer = write.author.object,
            !changeRule.isChange(from: write.value, to: value)
        {
            author = writer
        }
        learnName(object)
        changed(value, author)
    }

    /// The name of the property `keyPath` leads to, for logs. Observation's key paths lead to
    /// computed properties, whose key paths carry no name; a property holding an object is
    /// recognized by the identical object in the stored `_name` behind it. Otherwise no name
    /// (the log shows the value type); while the property holds nil, ask again later.
    static func name(of keyPath: KeyPath<Object, Value>, in object: Object) -> ComponentName.Search
    {
        let held: AnyObject
        switch PathLink.content(of: object[keyPath: keyPath]) {
        case .object(let object): held = object
        case .none: return .later
        case .value: return .none  // nothing to recognize it by, ever
        }
        let matches = Mirror(reflecting: object).children.compactMap { child -> String? in
            guard let label = child.label, label.hasPrefix("_"), !label.hasPrefix("_$"),
                PathLink.object(in: child.value) === held
            else { return nil }
            return String(label.dropFirst())
        }
        return matches.count == 1 ? .found(matches[0]) : .none
    }
}

/// The part of a ``TrackedProperty`` that its ``PropertyTracking`` and the scheduler call (not
/// generic, so that those `@Sendable` closures capture no metatype).
class TrackedLink: PathLink, @unchecked Sendable {
    private let scheduler: any MessageScheduler

    init(scheduler: any MessageScheduler) {
        self.scheduler = scheduler
    }

    /// The property is about to change: deliver on the scheduler, after the set.
    final func willChange() {
        scheduler.schedule { [weak self] in self?.deliver() }
    }

    /// A scheduled delivery.
    func deliver() {}
}

/// A weak reference, for lists and tuples. (Not the public `Weak` transform.)
struct WeakObject {
    weak var object: AnyObject?

    init(_ object: AnyObject) {
        self.object = object
    }
}
