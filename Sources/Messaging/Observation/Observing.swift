/// One observation as an object, in the style of THObserver and HTBKVObservation: it runs as long
/// as you hold it, with no observer object needed.
///
/// ```swift
/// final class TitleLabel {
///     var text = ""
///     private var observing: Observing<Var<String>>?
///
///     func show(_ title: Var<String>) {
///         observing = Observing(title) { [weak self] update in self?.text = update.new }
///     }
/// }
/// ```
///
/// It does not keep the observed object alive. The observation ends when you call ``stop()``,
/// when the `Observing` dies, or when the observed object's messenger dies (``isActive`` then
/// turns false).
public final class Observing<Observed: ObservableObject>: @unchecked Sendable {
    // Immutable after init; `Connection` is itself thread-safe. Holding no reference to the
    // observed object (not even a weak one, which would slow every retain of it) is what keeps
    // it free to die.
    private let connection: Connection<Observed.Message>

    /// Starts observing `observed`; `receive` is called with every message it sends from now on.
    public convenience init(
        _ observed: Observed, fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Observed.Message) -> Void
    ) {
        self.init(observed, fileID: fileID, line: line) { message, _ in receive(message) }
    }

    /// Starts observing `observed`; `receive` is called with every message it sends from now on,
    /// together with the message's author.
    public init(
        _ observed: Observed, fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Observed.Message, AnyAuthor) -> Void
    ) {
        connection = observed.messenger.core.connect(
            receiver: nil, site: DeclarationSite(fileID: fileID, line: line), receive: receive)
    }

    deinit {
        connection.detachFromMessenger()
    }

    /// Whether the observation still runs: neither stopped nor ended by the observed object's
    /// death.
    public var isActive: Bool { connection.isActive }

    /// Where the observation was declared.
    public var site: DeclarationSite { connection.site }

    /// Ends the observation. No message is delivered to it after `stop()` returns, except one
    /// whose delivery had already begun on another thread. Calling it again is harmless.
    public func stop() {
        connection.detachFromMessenger()
    }
}
