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
/// turns false); then its handler, and whatever the handler captured, is freed.
public final class Observing<Observed: ObservableObject>: Sendable {
    // The observation is owned by a receiver of its own, like an observer's: when it ends from
    // either side, the connection (and the handler, with whatever it captured) is freed.
    private let receiver = Receiver()
    /// Where the observation was declared.
    public let site: DeclarationSite

    /// Starts observing `observed`; `receive` is called with every message it sends from now on.
    public convenience init(
        _ observed: Observed, fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Observed.Message) -> Void
    ) {
        self.init(
            observed, site: DeclarationSite(fileID: fileID, line: line), handler: .message(receive))
    }

    /// Starts observing `observed`; `receive` is called with every message it sends from now on,
    /// together with the message's author.
    public convenience init(
        _ observed: Observed, fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Observed.Message, AnyAuthor) -> Void
    ) {
        self.init(
            observed, site: DeclarationSite(fileID: fileID, line: line),
            handler: .messageAndAuthor(receive))
    }

    private init(_ observed: Observed, site: DeclarationSite, handler: Handler<Observed.Message>) {
        self.site = site
        _ = observed.messenger.core.connect(receiver: receiver, site: site, handler: handler)
    }

    /// Whether the observation still runs: neither stopped nor ended by the observed object's
    /// death.
    public var isActive: Bool { receiver.storage.hasConnections }

    /// Ends the observation and frees its handler. No message is delivered to it after `stop()`
    /// returns, except one whose delivery had already begun on another thread. Calling it again
    /// is harmless.
    public func stop() {
        receiver.storage.endAllObservations()
    }
}
