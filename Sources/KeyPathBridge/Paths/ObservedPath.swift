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
/// runs while you hold it, ``stop()`` ends it, and it ends by itself when the root dies (it
/// sends a last update to `nil`, authored by the path, and then every observation of the path
/// ends too; ``isActive`` turns false as soon as the root is gone, before that update). It
/// holds its root and the path's objects weakly. Hold the `ObservedPath` as long as you
/// observe it. Thread-safe: changes along the path are handled one at a time, in the order
/// they happen.
public final class ObservedPath<Root: AnyObject, Value>: Messenger<Update<Value?>>, ObservableCache
{
    private let tracker: PathTracker<Value>
    /// The ad hoc observation (`observer.observe(root, …)`) this path was made for, if it was:
    /// that observation is filed under the root. Weak: the observation holds the path. Set
    /// once, before the path is shared.
    nonisolated(unsafe) private(set) weak var adHocObservation: ConnectionBase?

    /// Starts tracking `path` from `root`.
    ///
    /// A component of a string-built path that does not fit an object the path reaches is
    /// reported through ``PathDiagnostics`` (``init(_:path:fileID:line:)`` throws it instead).
    public convenience init(
        _ root: Root, _ path: PropertyPath<Root, Value>, fileID: StaticString = #fileID,
        line: UInt = #line
    ) {
        self.init(
            root, path, site: DeclarationSite(fileID: fileID, line: line),
            collectingProblems: false)
    }

    /// Starts tracking `path` from `root`. With `collectingProblems`, a component that does not
    /// fit an object reached by the initial wiring is kept for ``wiringProblem`` (for the
    /// caller to throw), not reported.
    init(
        _ root: Root, _ path: PropertyPath<Root, Value>, site: DeclarationSite,
        collectingProblems: Bool
    ) {
        let core = MessengerCore<Update<Value?>>()
        tracker = PathTracker(
            root: root, components: path.components, site: site, output: core,
            collectingProblems: collectingProblems)
        super.init(core: core)
        tracker.wiring.setAuthor(self)
    }

    deinit {
        tracker.stop()
    }

    /// The path's end value, or `nil` while it is unreachable.
    public var value: Value? { tracker.current }

    /// Records the ad hoc observation the path is made for (before the path is shared).
    func belongs(to observation: ConnectionBase) {
        adHocObservation = observation
    }

    /// The running ad hoc observation of this path that `receiver` owns, if any.
    func adHocObservation(ownedBy receiver: Receiver) -> ConnectionBase? {
        guard let observation = adHocObservation, observation.isActive,
            observation.isOwned(by: receiver)
        else { return nil }
        return observation
    }

    /// Ends `observer`'s observations of this path: those of the path as an object, and the ad
    /// hoc observation that returned it (`observer.observe(root, …)`, filed under the root).
    /// (Called on a value whose type is `ObservedPath`; generic code that sees only an
    /// ``ObservableObject`` calls the protocol's method, which does not see the ad hoc one.)
    ///
    /// ```swift
    /// let zip = viewModel.observe(cache, \.$currentUser, \.$address, \.$zipCode) { _ in }
    /// zip.stopBeingObserved(by: viewModel)
    /// ```
    public func stopBeingObserved(by observer: any Observer) {
        observer.stopObserving(self)
    }

    /// The first component that did not fit an object when the path was first wired (a string
    /// path's), if any.
    var wiringProblem: PathError? { tracker.wiring.initialProblem }

    /// Whether every object along the path is there.
    public var isReachable: Bool { value != nil }

    /// Whether the path is still observed: neither stopped nor ended by the root's death.
    public var isActive: Bool { tracker.isActive }

    /// Stops observing the path: no more updates; ``value`` keeps the last end value. Every
    /// observation of the path ends too, once what was sent before reached it (so the ad hoc
    /// observation that returned this path ends, and frees it). Calling it again is harmless.
    public func stop() {
        tracker.stop()
        core.disconnectAllAfterDeliveries()
    }

    /// Sets the property at the end of the path, on behalf of `author`; false if the path is
    /// unreachable. (Bindings write through this.)
    func write(_ value: Value, as author: AnyAuthor) -> Bool {
        tracker.write(value, as: author)
    }

    /// The end property's value as it is now, or nil if the path is unreachable: unlike
    /// ``value``, it includes a change whose update the path has not delivered yet. (Bindings
    /// read through this, so that they never copy an older value over a newer one.)
    var liveValue: Value? { tracker.wiring.readEnd().map { $0 as! Value } }

    /// Calls `handler` whenever the path re-wires to another property at its end (another object
    /// holds it now). Bindings use it to bring a new target in sync at once.
    func whenEndPropertyChanges(_ handler: @escaping () -> Void) {
        tracker.wiring.setEndPropertyHandler(handler)
    }

    /// Calls `handler` once the path ends: when it is stopped (or dropped), or when its root
    /// dies (after the last update, if any). Debug watches use it to end themselves.
    func whenEnded(_ handler: @escaping () -> Void) {
        tracker.wiring.setEndHandler(handler)
    }

    /// Whether the path ended: it was stopped, or it ended with its root (unlike
    /// ``isActive``, which turns false as soon as the root dies, before the last update).
    var hasEnded: Bool { tracker.wiring.hasStopped }

    /// Whether the path tracks its root's first property through Observation: an
    /// `@Observable` root, which cannot tell of its death.
    var tracksItsRoot: Bool { tracker.wiring.tracksItsRoot }

    /// Ends the path (after its last update, to unreachable) if its root died and cannot tell
    /// of it (an `@Observable` root). Debug watches use it to end those.
    func endIfUntoldRootDied() {
        tracker.wiring.endIfUntoldRootDied()
    }

    /// An update whose `old` and `new` are both the current end value.
    public var latestMessage: Update<Value?> {
        let current = value
        return Update(current, current)
    }
}

// Thread-safe by construction (the tracker serializes changes; the messenger core owns a lock).
extension ObservedPath: @unchecked Sendable where Value: Sendable {}

/// The typed end of a path behind ``ObservedPath``: the end value, compared with the end type's
/// change rule and sent through the output messenger. The wiring itself (``PathWiring``) is not
/// generic, so handling a change looks up no generic metadata; only publishing an end value is
/// typed.
@usableFromInline
final class PathTracker<Value>: PathEnd, @unchecked Sendable {
    @usableFromInline let wiring: PathWiring
    @usableFromInline let output: MessengerCore<Update<Value?>>
    /// For end values whose end property has no rule of its own: a typed path's end type's
    /// rule (for `Value?`, so a reachable nil is not unreachable); nil for a string path, and
    /// for a typed path to `Any`, an existential or another type whose rule would count every
    /// value as a change: their values compare by what they hold.
    private let typedRule: ChangeRule<Value?>? =
        comparesHeldValues ? nil : ChangeRule<Value?>()

    /// Whether end values compare by what they hold, as a string path's do: `Value` (or what
    /// its optionals wrap) is neither `Equatable` nor an object reference — `Any`, an
    /// existential such as `any CustomStringConvertible`, another type — whose own rule would
    /// count every value as a change. (For a type that is neither, what it holds is such a
    /// value, and compares the same way.)
    @usableFromInline static var comparesHeldValues: Bool {
        var type: Any.Type = Value.self
        while let optional = type as? any _OptionalType.Type { type = optional._wrappedType }
        return !(type is any Equatable.Type) && !(type is AnyObject.Type)
    }
    /// A string path's end value is `Any`, compared by what it holds (after reachability), so
    /// that equal values never fire there either.
    private static var heldValueRule: ChangeRule<Any> { .comparingHeldValues }
    /// Guarded by the output core's lock, so that a new end value and its update are accepted
    /// in one step.
    @usableFromInline @exclusivity(unchecked) var end: Value?
    /// The end value when it is the object a trailing `*` observes (before any of its
    /// properties changed), held weakly: a path holds its root, and every object it goes
    /// through, weakly. `end` is nil meanwhile. Guarded as `end` is.
    @exclusivity(unchecked) private weak var endObject: AnyObject?
    @exclusivity(unchecked) private var endIsObject = false

    init(
        root: AnyObject, components: [PathComponent], site: DeclarationSite,
        output: MessengerCore<Update<Value?>>, collectingProblems: Bool
    ) {
        self.output = output
        wiring = PathWiring(root: root, components: components, site: site)
        wiring.start(end: self, author: output, collectingProblems: collectingProblems)
    }

    /// The current end value (nil: unreachable).
    var current: Value? { output.lock.withLock { stored } }

    /// The current end value, read while the output core's lock is held.
    var currentWhileLocked: Value? { stored }

    /// The end value as stored, under the output's lock. (Only a string path's `*` stores an
    /// object weakly, and its end is never published directly.)
    private var stored: Value? {
        guard endIsObject else { return end }
        return endObject.map { $0 as! Value }
    }

    /// Stores a new end value under the output's lock: weakly where it is the object that
    /// `endLink` observes.
    private func store(_ value: Value?, from endLink: PathLink?) {
        if let endLink, let object = endLink.observedObject(in: value) {
            endObject = object
            endIsObject = true
            end = nil
        } else {
            endObject = nil
            endIsObject = false
            end = value
        }
    }

    var isActive: Bool { wiring.isActive }

    func stop() { wiring.stop() }

    /// Sets the property at the end of the path; false if it is unreachable.
    func write(_ value: Value, as author: AnyAuthor) -> Bool {
        wiring.write(value, as: author)
    }

    func start(with value: Any?, from endLink: PathLink?) {
        let value = value.map { $0 as! Value }
        output.lock.withLock { store(value, from: endLink) }
    }

    /// Sends an update if the end value changed (or if `forced`): reachability first, then the
    /// end property's own rule (`rule`'s), or else the end type's.
    func publish(_ value: Any?, from author: AnyAuthor, forced: Bool, rule: PathLink?) {
        let newEnd = value.map { $0 as! Value }
        output.send(from: author) { () -> Update<Value?>? in
            let old = stored
            guard forced || isChange(from: old, to: newEnd, rule: rule) else { return nil }
            store(newEnd, from: rule)
            return Update(old, newEnd)
        }
    }

    /// Sends an update if the end value changed (nil: unreachable), for a change of the end
    /// property that the wiring lets this thread handle directly
    /// (``PathWiring/beginDirectChange(tag:from:)``): the end property is a variable or a
    /// collection's part, whose `rule` is the end type's. Inlinable, so that it is specialized
    /// where the path is declared, with the code that calls it.
    @inlinable
    func publishDirectly(_ new: Value?, from author: AnyAuthor, rule: ChangeRule<Value>) {
        output.send(from: author) { () -> Update<Value?>? in
            let old = end
            // Reachability first: from unreachable, any value is a change, and back.
            switch (old, new) {
            case (nil, nil): return nil
            case (let old?, let new?): if !rule.isChange(from: old, to: new) { return nil }
            default: break
            }
            end = new
            return Update(old, new)
        }
    }

    /// Under the output's lock (a rule may be user code that must not touch the path).
    private func isChange(from old: Value?, to new: Value?, rule: PathLink?) -> Bool {
        if let rule, rule.hasOwnRule {
            guard let old, let new else { return (old == nil) != (new == nil) }
            if let isChange = rule.isChange(from: old, to: new) { return isChange }
        }
        if let typedRule { return typedRule.isChange(from: old, to: new) }
        guard let old, let new else { return (old == nil) != (new == nil) }
        return Self.heldValueRule.isChange(from: old, to: new)
    }

    func finish() {
        output.disconnectAllAfterDeliveries()
    }

    func publishBranch(_ value: Any?, old: Any?, from author: AnyAuthor) {
        let newEnd = value.map { $0 as! Value }
        let oldEnd = old.map { $0 as! Value }
        output.send(from: author) { () -> Update<Value?>? in
            store(newEnd, from: nil)
            return Update(oldEnd, newEnd)
        }
    }
}

extension ObservedPath: LockedLatestMessage {
    /// The end value as an update, read while the output's lock is held: a `flatMapLatest` that
    /// switches to this path reads it in the same step as it starts observing.
    package var latestMessageWhileLocked: Update<Value?> {
        let current = tracker.currentWhileLocked
        return Update(current, current)
    }
}
