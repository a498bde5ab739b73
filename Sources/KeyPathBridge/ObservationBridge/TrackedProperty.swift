import Observation
import Transforms

extension PathComponent {
    /// A component for a property of an `@Observable` object, observed with
    /// `withObservationTracking`, re-armed at each delivery on `scheduler`.
    init<Object: AnyObject & Observable, Value>(
        tracking keyPath: KeyPath<Object, Value>, on scheduler: any Scheduler
    ) {
        let name = ComponentName(keyPath)
        let shape = ObjectShape(Value.self)
        nameBox = name
        attach = { object, _, _, leadsOn, changed in
            // The typed `PropertyPath` only ever passes an `Object` here.
            let object = unsafeDowncast(object, to: Object.self)
            name.learn { TrackedProperty<Object, Value>.name(of: keyPath, in: object) }
            let property = TrackedProperty(object, keyPath, scheduler: scheduler, shape: shape) {
                value, author in
                changed(value, leadsOn ? shape.object(in: value) : nil, author)
            }
            property.arm()
            return property
        }
    }
}

/// One property of one `@Observable` object, as a path observes it.
///
/// Swift's Observation calls `onChange` once, *before* the property is set, and must then be
/// armed again. So a change schedules a delivery on the scheduler; the delivery re-arms the
/// tracking and reads the value in one `withObservationTracking`, after the set, and passes it on.
/// Changes made before a scheduled delivery runs arrive as one, with the latest value.
final class TrackedProperty<Object: AnyObject & Observable, Value>: TrackedPropertyBase,
    @unchecked Sendable
{
    // The object is read, and the tracking armed, on the scheduler (and where the path attaches).
    private weak var object: Object?
    private let keyPath: KeyPath<Object, Value>
    private let changed: (Value, AnyAuthor) -> Void
    private let changeRule = ChangeRule<Value>()
    // Guarded by `lock`.
    private let lock = Lock()
    @exclusivity(unchecked) private var isEnded = false
    /// The author of a write about to be delivered (a binding's): the next delivery is theirs.
    @exclusivity(unchecked) private weak var pendingAuthor: AnyAuthor?

    private let shape: ObjectShape

    init(
        _ object: Object, _ keyPath: KeyPath<Object, Value>, scheduler: any Scheduler,
        shape: ObjectShape, changed: @escaping (Value, AnyAuthor) -> Void
    ) {
        self.object = object
        self.keyPath = keyPath
        self.shape = shape
        self.changed = changed
        super.init(scheduler: scheduler)
    }

    /// The property's value now; nil once the object is gone.
    private var currentValue: Value? {
        object.map { $0[keyPath: keyPath] }
    }

    override func read() -> Any? { currentValue }
    override func next() -> AnyObject? { currentValue.flatMap(shape.object(in:)) }

    /// Reads the value and arms the tracking for its next change; nil (and not armed) once the
    /// object is gone or the link ended.
    @discardableResult
    func arm() -> (object: Object, value: Value)? {
        guard let object, !lock.withLock({ isEnded }) else { return nil }
        let value = withObservationTracking {
            object[keyPath: keyPath]
        } onChange: { [weak base = self as TrackedPropertyBase] in
            base?.willChange()
        }
        return (object, value)
    }

    /// Stops delivering. A tracking armed already stays registered with the object until its
    /// next change, which then finds nothing to do.
    override func end() {
        lock.withLock { isEnded = true }
    }

    /// Sets the property (a binding's write); false if the key path is read-only, the value has
    /// another type or the object is gone. The delivery of the change is authored by `author`.
    override func write(_ value: Any, as author: AnyAuthor) -> Bool {
        guard let object, let value = value as? Value,
            let writable = keyPath as? ReferenceWritableKeyPath<Object, Value>
        else { return false }
        if changeRule.isChange(from: object[keyPath: keyPath], to: value) {
            lock.withLock { pendingAuthor = author }
        }
        object[keyPath: writable] = value
        return true
    }

    override func didChange() {
        guard let (object, value) = arm() else { return }
        let author = lock.withLock { () -> AnyAuthor? in
            defer { pendingAuthor = nil }
            return pendingAuthor
        }
        changed(value, author ?? object)
    }

    /// The name of the property `keyPath` leads to, for logs: Observation's key paths lead to
    /// computed properties, so this looks for the one stored `_name` of the value's type (or
    /// holding the very object the property holds).
    static func name(of keyPath: KeyPath<Object, Value>, in object: Object) -> String? {
        let stored = Mirror(reflecting: object).children.compactMap {
            child -> (name: String, value: Any)? in
            guard let label = child.label, label.hasPrefix("_"), !label.hasPrefix("_$"),
                child.value is Value
            else { return nil }
            return (String(label.dropFirst()), child.value)
        }
        if stored.count == 1 { return stored[0].name }
        guard let held = PathLink.object(in: object[keyPath: keyPath]) else { return nil }
        return stored.first { PathLink.object(in: $0.value) === held }?.name
    }
}

/// The part of a ``TrackedProperty`` that Observation's `onChange` and the scheduler call (not
/// generic, so that those `@Sendable` closures capture no metatype).
class TrackedPropertyBase: PathLink, @unchecked Sendable {
    private let scheduler: any Scheduler

    init(scheduler: any Scheduler) {
        self.scheduler = scheduler
    }

    /// Called by Observation before the property is set, on the setter's thread.
    final func willChange() {
        scheduler.schedule { [weak self] in self?.didChange() }
    }

    /// A scheduled delivery: the set is done; read the new value, re-arm, pass it on.
    func didChange() {}
}
