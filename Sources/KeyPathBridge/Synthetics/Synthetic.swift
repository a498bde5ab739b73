import Synchronization
import Transforms

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A synthetic property: a property of a class whose value a function computes from other
/// properties, declared where the property is. The value is cached, and invalidated when
/// anything it was computed from changes.
///
/// ```swift
/// final class Person {
///     @ObservableVar var first = "Ada"
///     @ObservableVar var last = "Lovelace"
///     @Synthetic({ (person: Person) in person.first + " " + person.last })
///     var fullName: String
/// }
/// let ada = Person()
/// ada.fullName        // "Ada Lovelace": computed now, cached
/// ada.fullName        // the cached value: the function does not run
/// ada.last = "Byron"  // invalidates fullName; nothing is computed yet
/// ada.fullName        // "Ada Byron"
/// ```
///
/// **Dependencies.** Every Herald property the function reads is a dependency: variables
/// (`@ObservableVar` or `Var`), observable collections (any read: `count`, an element, the
/// elements), other synthetic properties, on any object. They are collected again on each
/// evaluation, so a branch not taken is not a dependency. Paths can be declared too
/// (`dependsOn:`), for what the function reads outside Herald.
///
/// **Lazy while unobserved.** The function runs only when the value is read while invalid.
/// Valid and invalid are tracked apart from the value, so a valid `nil` is a value.
///
/// **Observed means eager.** An observed synthetic property (observed directly, through `$name`,
/// or as an intermediate of an observed path) is evaluated when its first observer comes and
/// again as soon as it is invalidated, and sends an ``Update`` only when its value changed. A
/// recomputation that yields an equal value sends nothing and makes nothing downstream
/// recompute. When its last observer goes, it is lazy again.
///
/// **Glitch-free.** In a diamond (two synthetic properties over one source, a third over both)
/// each computes at most once per change of the source, and no observer, of anything, sees a
/// mix of old and new values: a change marks what depends on it before it is delivered to
/// anyone, and observed synthetic properties are brought up to date, and their observers told,
/// after the outermost change on the thread has marked everything.
///
/// **Hybrid.** Setting the property stores that value as valid, without calling the function,
/// until the next invalidation.
///
/// **Cycles.** A property that ends up depending on itself stops the process with a message
/// naming the properties of the cycle, from the thread that closed it. So does a function that
/// writes a property it read.
///
/// **Threads.** Reads, sets and invalidations are safe from any thread. A thread that reads
/// the property outside any evaluation while another thread computes it waits for that thread
/// (blocked, not spinning) and gets its result. A thread inside an evaluation never waits: it
/// computes the property itself, so two computations may overlap, and only a result computed
/// from a state nothing changed since is stored. No lock is held while the function runs.
///
/// Use it as a property wrapper of a class, or make one at run time with
/// `init(owner:name:dependsOn:tracksObservation:_:)`; one made with another initializer and never
/// declared with `@Synthetic` has no owner, and stops the process when read. The guide
/// (`Docs/SyntheticProperties.md`) has the details and the limits.
///
/// The property's storage (`$fullName`) is the observable property itself: observe it, use it in
/// paths (`\.$fullName`), bindings (as a source), coalesced observations and ``Inspector``; call
/// ``invalidate()`` on it.
@propertyWrapper
public final class Synthetic<Owner: AnyObject, Value>: Messenger<Update<Value>>, ObservableProperty,
    SettableProperty
{
    @usableFromInline let compute: (Owner) -> Value
    @usableFromInline let changeRule: ChangeRule<Value>
    /// The paths the property is declared to depend on, and their observations (made when the
    /// owner is known).
    let declared: [SyntheticDependency<Owner>]
    // Guarded by the core's lock.
    @usableFromInline @exclusivity(unchecked) var state = SyntheticState()
    /// The cached value (valid or not), if there is one.
    @usableFromInline @exclusivity(unchecked) var cached: Value?
    /// The value the observers last heard of, while observed.
    @usableFromInline @exclusivity(unchecked) var told: Value?
    /// The owner, once known (not kept alive).
    @usableFromInline @exclusivity(unchecked) var owner = OwnerReference<Owner>()
    /// The property's name, once known: given (`Synthetic(owner:name:_:)`, ``Inspector``) or
    /// found when first needed (see `resolvedName`).
    @exclusivity(unchecked) var name: String?
    /// The key path the first access passed (the setter, `$name`), if it passed one: the name of
    /// last resort.
    @exclusivity(unchecked) var nameKeyPath: AnyKeyPath?
    /// The thread binding the owner, while it observes the declared paths.
    @usableFromInline @exclusivity(unchecked) var binding: ObjectIdentifier?
    /// Whether the owner is bound and the declared paths observed (`isBound`, under the lock).
    @exclusivity(unchecked) var bound = false
    /// Whether a value was computed while the declared paths were being observed, which a change
    /// along them may have missed (see `bind(to:named:)`).
    @usableFromInline @exclusivity(unchecked) var computedDuringBinding = false
    /// Whether each evaluation tracks what the function reads of `@Observable` objects (see
    /// `init(dependsOn:tracksObservation:_:)`). Here, beside the flags above, it takes no
    /// word of its own.
    @usableFromInline let tracksObservation: Bool
    /// While binding: how many declared paths are still to be observed after the one being
    /// observed now.
    @usableFromInline @exclusivity(unchecked) var pathsLeftToObserve = 0
    /// Who set the value that the observers are to be told of next (a hybrid set).
    @usableFromInline @exclusivity(unchecked) var setter: AnyAuthor?
    /// How many sets stored a value (wrapping): a tell sends only if none did since it took
    /// its author (see `tellObservers()`).
    @usableFromInline @exclusivity(unchecked) var storedSets: UInt64 = 0
    @exclusivity(unchecked) var declaredObservations: [AnyObject] = []
    /// Its evaluations' frame, which keeps what the last one read (see `EvaluationFrame`).
    @usableFromInline let frame = EvaluationFrame()
    /// `tellObservers()`, specialized (see `init(compute:changeRule:dependencies:tell:)`).
    @usableFromInline let tell: (AnyObject) -> Void
    @usableFromInline let isBound = Atomic<Bool>(false)
    /// What the property reports its `tracked` reads and changes to Swift's Observation
    /// through (its flag lives in `state`: see `SyntheticState.isTracked`).
    @usableFromInline let observation = ObservationReport()
    /// How many times the function ran (for tests and benchmarks), counted as each run ends.
    /// Guarded by the core's lock, whose critical section after the run is there anyway (an
    /// atomic counter cost an atomic operation per run).
    @usableFromInline @exclusivity(unchecked) var evaluations = 0

    /// A synthetic property whose value `compute` computes from the owner.
    ///
    /// ```swift
    /// @Synthetic({ (person: Person) in person.first + " " + person.last })
    /// var fullName: String
    /// ```
    ///
    /// - Parameters:
    ///   - dependencies: paths from the owner to depend on besides what `compute` reads: a
    ///     change along them invalidates the property. They may be unreachable at first.
    ///   - tracksObservation: whether the property also depends on the properties of Swift's
    ///     `@Observable` objects that `compute` reads, as it does on Herald's (see
    ///     Docs/SyntheticProperties.md, "Properties of @Observable objects"). Off by default:
    ///     tracking them costs every evaluation a `withObservationTracking`.
    ///   - compute: computes the value from the owner (passed in, so that it need not be
    ///     captured).
    ///
    /// ```swift
    /// @Synthetic(tracksObservation: true, { (row: Row) in row.settings.unit })
    /// var unit: String   // `settings` is an @Observable object
    /// ```
    @inlinable
    public convenience init(
        dependsOn dependencies: [SyntheticDependency<Owner>] = [],
        tracksObservation: Bool = false,
        _ compute: @escaping (Owner) -> Value
    ) {
        self.init(
            compute: compute, changeRule: ChangeRule(), dependencies: dependencies,
            tracksObservation: tracksObservation,
            tell: { unsafeDowncast($0, to: Synthetic.self).tellObservers() })
    }

    /// A synthetic property whose value `compute` computes from the owner. (For `Equatable`
    /// values the comparison is then specialized in your module; the rule is the same.)
    @inlinable
    public convenience init(
        dependsOn dependencies: [SyntheticDependency<Owner>] = [],
        tracksObservation: Bool = false,
        _ compute: @escaping (Owner) -> Value
    ) where Value: Equatable & SendableMetatype {
        self.init(
            compute: compute, changeRule: ChangeRule(equatable: Value.self),
            dependencies: dependencies, tracksObservation: tracksObservation,
            tell: { unsafeDowncast($0, to: Synthetic.self).tellObservers() })
    }

    /// The designated initializer. `tell` is ``tellObservers()``, made in the public
    /// initializers (inlined where the property is declared) so that it runs specialized for
    /// the property's types: called through ``PropagationWork`` it would run the generic code,
    /// which looks up type metadata as it goes.
    @usableFromInline
    init(
        compute: @escaping (Owner) -> Value, changeRule: ChangeRule<Value>,
        dependencies: [SyntheticDependency<Owner>], tracksObservation: Bool,
        tell: @escaping (AnyObject) -> Void
    ) {
        self.compute = compute
        self.tracksObservation = tracksObservation
        self.changeRule = changeRule
        declared = dependencies
        self.tell = tell
        super.init()
        frame.dependent = self
        core.setConnectionCountObserver(self)
    }

    /// A synthetic property that one loader function serves together with others: the loader
    /// gets the owner and the property's `key` (EBN's custom loaders, for a dictionary-backed
    /// model that exposes typed properties).
    ///
    /// ```swift
    /// final class Contact {
    ///     let fields = ObservableDictionary<String, String>()
    ///     @Synthetic("name", loader: Contact.field) var name: String?
    ///     @Synthetic("email", loader: Contact.field) var email: String?
    ///     static func field(_ contact: Contact, _ key: String) -> String? { contact.fields[key] }
    /// }
    /// ```
    @inlinable
    public convenience init(
        _ key: String, dependsOn dependencies: [SyntheticDependency<Owner>] = [],
        tracksObservation: Bool = false, loader: @escaping (Owner, String) -> Value
    ) {
        self.init(dependsOn: dependencies, tracksObservation: tracksObservation) {
            loader($0, key)
        }
    }

    /// A synthetic property made at run time for `owner` (one of many in an array, say),
    /// rather than declared with `@Synthetic`: it behaves as a declared one.
    ///
    /// ```swift
    /// let totals = (0..<3).map { row in
    ///     Synthetic(owner: sheet, name: "total\(row)") { $0.cells[row].reduce(0, +) }
    /// }
    /// ```
    @inlinable
    public convenience init(
        owner: Owner, name: String, dependsOn dependencies: [SyntheticDependency<Owner>] = [],
        tracksObservation: Bool = false, _ compute: @escaping (Owner) -> Value
    ) {
        self.init(dependsOn: dependencies, tracksObservation: tracksObservation, compute)
        bind(to: owner, named: name)
    }

    /// A synthetic property made at run time for `owner` (see
    /// `init(owner:name:dependsOn:tracksObservation:_:)`), comparing values with `==`.
    @inlinable
    public convenience init(
        owner: Owner, name: String, dependsOn dependencies: [SyntheticDependency<Owner>] = [],
        tracksObservation: Bool = false, _ compute: @escaping (Owner) -> Value
    ) where Value: Equatable & SendableMetatype {
        self.init(dependsOn: dependencies, tracksObservation: tracksObservation, compute)
        bind(to: owner, named: name)
    }

    /// Not available: a synthetic property belongs to an instance of a class, which it reads
    /// through the enclosing instance.
    @available(*, unavailable, message: "@Synthetic is for properties of classes")
    public var wrappedValue: Value {
        get { fatalError() }
        // swift-format-ignore
        set { fatalError() }
    }

    /// The synthetic property itself: an ``ObservableProperty``.
    public var projectedValue: Synthetic<Owner, Value> { self }

    /// The value, read through the owner (`person.fullName`); setting stores a value (hybrid).
    @inlinable
    public static subscript(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Synthetic<Owner, Value>>
    ) -> Value {
        get {
            // Retained for the read: the function it may run is the owner's code, which could
            // replace the storage (`_name`) meanwhile.
            let property = owner[keyPath: storageKeyPath]
            // No key path is used here, so none is made on each read: the name is found when
            // it is needed.
            if _slowPath(!property.isBound.load(ordering: .acquiring)) {
                property.bindSlowly(to: owner, name: nil)
            }
            return property.value(readThrough: owner)
        }
        set {
            let property = owner[keyPath: storageKeyPath]
            property.bind(to: owner, name: wrappedKeyPath)
            property.set(newValue, as: property)
        }
    }

    /// The property itself, read through the owner (`person.$fullName`).
    @inlinable
    public static subscript(
        _enclosingInstance owner: Owner,
        projected projectedKeyPath: KeyPath<Owner, Synthetic<Owner, Value>>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Synthetic<Owner, Value>>
    ) -> Synthetic<Owner, Value> {
        let property = owner[keyPath: storageKeyPath]
        property.bind(to: owner, name: projectedKeyPath)
        return property
    }

    // MARK: Changing

    /// Invalidates the value: the next read computes it again (at once if it is observed), and
    /// what depends on it is invalidated too.
    ///
    /// ```swift
    /// person.$fullName.invalidate()
    /// ```
    public func invalidate() {
        markInvalid()
        DependencyTracking.propagateQueuedWork()
    }

    /// Invalidates the value and what depends on it, and queues what is observed, running
    /// nothing.
    func markInvalid() {
        DependencyTracking.markDependent(self, definitely: true)
    }

    /// Stores `value` as the valid value without calling the function (a hybrid property), until
    /// the next invalidation; observers get an update, authored by `author`, if it changed.
    ///
    /// ```swift
    /// person.fullName = "Lord Byron"   // the same, authored by the property
    /// ```
    public func set(_ value: Value, as author: AnyAuthor) {
        let rule = changeRule
        var replaced: AnyAuthor? = nil
        let action = core.lock.withLock { () -> SyntheticState.MarkAction in
            let changed = cached.map { rule.isChange(from: $0, to: value) } ?? true
            // A set stands: a value computed during a binding before it no longer counts.
            computedDuringBinding = false
            let (store, action, overStale) = state.set(changed: changed)
            if overStale { SyntheticState.setsOverStale.add(1, ordering: .releasing) }
            if store {
                cached = value
                storedSets &+= 1
                // Only an update told next names the setter (see `sourceChanged`). The one it
                // replaces is released after unlocking.
                replaced = setter
                setter = state.isObserved ? author : nil
            }
            return action
        }
        _ = consume replaced
        if action.enqueue { DependencyTracking.enqueue(self) }
        if let dependents = action.dependents {
            DependencyTracking.mark(dependents, definitely: false, changing: ObjectIdentifier(self))
        }
        DependencyTracking.propagateQueuedWork()
    }

    /// Whether going from `old` to `new` is a change: `!=` for `Equatable` values, `!==` for
    /// objects, always for other values.
    public func isChange(from old: Value, to new: Value) -> Bool {
        changeRule.isChange(from: old, to: new)
    }

    /// The property's name (`fullName`), once its owner is known.
    public var debugName: String? { resolvedName() }

    // MARK: Observed means eager

    /// An observation started or ended (see `ConnectionCountObserver`).
    @usableFromInline package func connectionCountChanged() {
        // The count and the state in one step: two threads starting and ending observations
        // must not leave the state saying the opposite of the count.
        let becameObserved = core.lock.withLock { () -> Bool in
            let observed = core.observationCountWhileLocked > 0
            if !observed { told = nil }
            return state.setObserved(observed)
        }
        guard becameObserved else { return }
        // Evaluated now, and not as a dependency of an evaluation that started observing.
        let value = DependencyTracking.withoutFrames { refreshedValue() }
        let (mustPropagate, tracked) = core.lock.withLock { () -> (Bool, Bool) in
            // The observers start from this value (the one a first reader gets), even if an
            // invalidation meanwhile kept it from being stored: then they hear of the next.
            guard state.startTelling() else { return (false, false) }
            told = value
            // A tracking may have read an older value: the pass that compares with `told`
            // would not report this one.
            return (state.mustPropagateAfterStart(), state.isTracked)
        }
        if _slowPath(tracked) { observation.reportChange() }
        if mustPropagate {
            DependencyTracking.enqueue(self)
            DependencyTracking.propagateQueuedWork()
        }
    }

    /// Brings an observed property up to date and tells its observers (in a propagation pass),
    /// on behalf of the property, unless the value told is one a hybrid set stored for another.
    @inlinable
    func tellObservers() {
        // The owner, held for the evaluation (which then need not load it): a propagation has
        // no reader waiting for a value, so if the owner died before a value was ever stored
        // (each evaluation so far invalidated while it ran), there is nothing to tell, where a
        // read would stop the process for want of a value.
        let (stillObserved, owner, hasValue, tracked) = core.lock.withLock {
            () -> (Bool, Owner?, Bool, Bool) in
            state.isQueued = false
            // Unobserved, it is queued only for a `tracked` read: tell Observation it may have
            // changed (its next read computes it).
            let tracked = !state.isObserved && state.isTracked
            return (state.isObserved, self.owner.object, state.hasValue, tracked)
        }
        if _slowPath(tracked) { observation.reportChange() }
        // Its last observer left since it was queued: it is lazy again.
        guard stillObserved, owner != nil || hasValue else { return }
        // Its last evaluation computed a property aside that another thread held: wait for that
        // one first (this thread holds nothing here), or this would only do the same again.
        if let owed = DependencyTracking.takeOwedWait() as? any SyntheticNode {
            owed.waitForHolder()
        }
        var version: UInt64 = 0
        var isCurrent = true
        _ = refresh(readThrough: owner, version: &version, isCurrent: &isCurrent)
        withExtendedLifetime(owner) {}
        let (setter, setsBefore) = core.lock.withLock { () -> (AnyAuthor?, UInt64) in
            defer { self.setter = nil }
            return (self.setter, storedSets)
        }
        #if DEBUG
            SyntheticTestHooks.beforeSending?()
        #endif
        var changed = false
        defer { if _slowPath(changed) { observation.reportChange() } }
        core.send(from: setter ?? self) { () -> Update<Value>? in
            // A set stored a value since the author was taken: the value is the setter's, and
            // the set's own tell (queued by the set, or queued already and not begun, as the
            // queued flag was cleared above) sends it, authored by the setter, whichever
            // thread's tell takes the lock first.
            guard storedSets == setsBefore else { return nil }
            let (may, hasTold) = state.mayTell()
            guard may, let current = cached else { return nil }
            guard hasTold, let old = told else {
                told = current
                return nil
            }
            guard changeRule.isChange(from: old, to: current) else { return nil }
            told = current
            changed = state.isTracked
            return Update(old, current)
        }
    }

    deinit {
        frame.forgetSources(of: ObjectIdentifier(self))
    }
}

// The state and values are guarded by the core's lock; sharing the property shares its values,
// so it is `Sendable` when they are.
extension Synthetic: @unchecked Sendable where Value: Sendable {}

extension Synthetic: ConnectionCountObserver {}
