/// A short name for ``Variable``.
public typealias Var = Variable

/// An observable value: it sends an ``Update`` with the old and new value whenever its value
/// changes.
///
/// ```swift
/// let number = Var(23)
/// observer.observe(number) { update in print("\(update.old) → \(update.new)") }
/// number.value = 42
/// // Prints "23 → 42"
/// number <- 42      // not a change: sends nothing
/// ```
///
/// What counts as a change: `!=` for `Equatable` values, `!==` for class references (also
/// optional ones, so `Var<User?>` works for a model class that is not `Equatable`); any other
/// value always counts as changed.
///
/// Handlers run after the change: a handler that reads ``value`` sees the new value. Updates are
/// delivered in the order the changes happened, also when a handler sets the variable again, so
/// each update's `old` is the previous update's `new`.
///
/// Thread safety: ``value`` may be read and set from any thread; see ``ObservableObject`` for
/// where handlers run. `Value`'s `==` is called while the variable is locked, so it must not
/// access the variable itself.
public final class Variable<Value>: Messenger<Update<Value>>, ObservableCache {
    // Guarded by the core's lock, together with the messenger state, so that a change and the
    // acceptance of its update are one atomic step.
    @usableFromInline @exclusivity(unchecked) var storedValue: Value
    /// The rule that decides whether a new value is a change (package-visible: a key path that
    /// ends at this variable compares its end values by it).
    @usableFromInline package let changeRule: ChangeRule<Value>
    /// What the variable reports to Swift's Observation (guarded by the core's lock).
    @usableFromInline let observation = ObservationReport()

    /// Creates a variable holding `value`.
    public init(_ value: Value) {
        storedValue = value
        changeRule = ChangeRule()
        super.init()
    }

    /// Creates a variable holding `value`. (For `Equatable` values the change check is then
    /// specialized in your module; the rule is the same.)
    @inlinable
    public init(_ value: Value) where Value: Equatable & SendableMetatype {
        storedValue = value
        changeRule = ChangeRule(equatable: Value.self)
        super.init()
    }

    /// Creates a variable holding `nil`.
    ///
    /// ```swift
    /// let text = Var<String?>()   // text.value == nil
    /// ```
    public convenience init<Wrapped>() where Value == Wrapped? {
        self.init(nil)
    }

    /// The current value. Setting it sends an update, authored by the variable, if the value
    /// changed.
    @inlinable
    public var value: Value {
        get {
            DependencyTracking.recordRead(of: core)
            return core.lock.withLock { storedValue }
        }
        set { set(newValue, as: self) }
    }

    /// The current value, read so that Swift's Observation sees the read: inside
    /// `withObservationTracking` (and so in a SwiftUI view's body), the tracking's `onChange`
    /// runs after the variable's next change.
    ///
    /// ```swift
    /// Text(model.$title.tracked)   // the view renders again when title changes
    /// ```
    ///
    /// Only reads through `tracked` are reported: a plain ``value`` read costs nothing extra,
    /// and a set of a variable never read through `tracked` costs one load (see Docs/Apps.md,
    /// "SwiftUI and Observation").
    @inlinable
    public var tracked: Value {
        // Reported first: a change after the value is read then finds the handle made.
        observation.reportRead()
        return value
    }

    /// Sets the value on behalf of `author`, who becomes the author of the update message.
    ///
    /// ```swift
    /// sharedText.set("my new text", as: self)
    /// ```
    ///
    /// - Complexity: O(*n*) for *n* observers; no allocation when no other send is in progress.
    @inlinable
    public func set(_ newValue: Value, as author: AnyAuthor) {
        core.send(from: author, reportingTo: observation) { () -> Update<Value>? in
            let oldValue = storedValue
            guard changeRule.isChange(from: oldValue, to: newValue) else { return nil }
            storedValue = newValue
            return Update(oldValue, newValue)
        }
    }

    /// Whether going from `old` to `new` is a change, which the variable sends: `!=` for
    /// `Equatable` values, `!==` for objects, always for other values.
    ///
    /// ```swift
    /// Var(1).isChange(from: 1, to: 1)   // false
    /// ```
    public func isChange(from old: Value, to new: Value) -> Bool {
        changeRule.isChange(from: old, to: new)
    }

    /// Starts an observation and passes the value it starts from to `initial`, atomically: every
    /// later change arrives as a message. `initial` runs under the lock and must not call user
    /// code.
    ///
    /// With a `group`, the receiver files the observation under the object whose identity that
    /// is (a key path's root; see `MessengerCore.connect(receiver:site:groupedUnder:…)`).
    package func connect(
        receiver: Receiver?, site: DeclarationSite, groupedUnder group: ObjectIdentifier? = nil,
        initial: (Value) -> Void, receive: @escaping (Update<Value>, AnyAuthor) -> Void
    ) -> Connection<Update<Value>> {
        core.connect(
            receiver: receiver, site: site, groupedUnder: group,
            atStart: { initial(storedValue) }, handler: .messageAndAuthor(receive))
    }

    /// An update whose `old` and `new` are both the current value.
    public var latestMessage: Update<Value> {
        let current = value
        return Update(current, current)
    }

    /// Sends an update whose `old` and `new` are both the current value ("here is the current
    /// state"), authored by the variable. Reading the value and accepting the update are one
    /// atomic step, so the update never interrupts the chain of concurrent changes.
    public func send() {
        sendCurrentValue(from: self)
    }

    /// Sends an update whose `old` and `new` are both the current value, on behalf of `author`
    /// (read and accepted in one atomic step, like ``send()``).
    package func sendCurrentValue(from author: AnyAuthor) {
        core.send(from: author) { Update(storedValue, storedValue) }
    }
}

// The stored value and the messenger state are protected by the core's lock; sharing the
// variable shares its values, so it is `Sendable` when they are.
extension Variable: @unchecked Sendable where Value: Sendable {}

infix operator <- : AssignmentPrecedence

/// Sets a variable's value: `number <- 42` is `number.value = 42`.
public func <- <Value>(variable: Variable<Value>, value: Value) {
    variable.value = value
}

/// Sets an optional variable's value if there is a variable: `model?.count <- 42` sets
/// nothing when `model` is `nil`.
public func <- <Value>(variable: Variable<Value>?, value: Value) {
    variable?.value = value
}

extension Variable: CustomStringConvertible {
    /// The description of the current value.
    public var description: String { String(describing: value) }
}

extension Variable: Equatable where Value: Equatable {
    /// Two variables are equal when their current values are.
    public static func == (lhs: Variable, rhs: Variable) -> Bool { lhs.value == rhs.value }
}

extension Variable: Comparable where Value: Comparable {
    /// Compares the current values.
    public static func < (lhs: Variable, rhs: Variable) -> Bool { lhs.value < rhs.value }
}
