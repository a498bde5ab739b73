/// How an observation starts, for the options KVO users rely on.
///
/// ```swift
/// observer.observe(title, options: .initial) { update in label.text = update.new }
/// // the handler ran at once with Update(title.value, title.value)
/// ```
///
/// Without options, starting an observation sends nothing.
public struct ObservationOptions: OptionSet, Sendable, Hashable {
    /// The options' bits.
    public let rawValue: Int

    /// The options whose bits `rawValue` has.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Receive the state the observation starts from at once (KVO's `.initial`): an
    /// ``ObservableCache``'s ``ObservableCache/latestMessage`` (a variable's is
    /// `Update(value, value)`), or a path's current end value. It reaches this observation only,
    /// authored by the observed object, before every message sent after the start. It arrives
    /// before `observe` returns, unless the object is delivering a message at that moment (the
    /// observation started from one of its handlers, or on another thread): then it follows that
    /// delivery.
    public static let initial = ObservationOptions(rawValue: 1 << 0)
}
