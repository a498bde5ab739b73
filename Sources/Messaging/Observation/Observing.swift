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

    /// Starts observing `observed`; `receive` is called with every message it sends from now on,
    /// and `whenObservedDies` once `observed` dies (EBN's dealloc protocol), on the thread that
    /// let go of it last, just after ``isActive`` turned false. It is not called after
    /// ``stop()`` or once this `Observing` is gone.
    ///
    /// ```swift
    /// observing = Observing(document, whenObservedDies: { [weak self] in self?.close() }) {
    ///     [weak self] change in self?.show(change)
    /// }
    /// ```
    public convenience init(
        _ observed: Observed, fileID: StaticString = #fileID, line: UInt = #line,
        whenObservedDies: @escaping () -> Void, receive: @escaping (Observed.Message) -> Void
    ) {
        self.init(site: DeclarationSite(fileID: fileID, line: line)) { receiver, site in
            _ = observed.messenger.core.connectWatchingDeath(
                receiver: receiver, site: site, handler: .message(receive), died: whenObservedDies)
        }
    }

    private convenience init(
        _ observed: Observed, site: DeclarationSite, handler: Handler<Observed.Message>
    ) {
        self.init(site: site) { receiver, site in
            _ = observed.messenger.core.connect(receiver: receiver, site: site, handler: handler)
        }
    }

    /// Makes the receiver and lets `start` start the observation, owned by it.
    private init(
        site: DeclarationSite, start: (_ receiver: Receiver, _ site: DeclarationSite) -> Void
    ) {
        self.site = site
        start(receiver, site)
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

extension Observing where Observed: ObservableCache {
    /// Starts observing `observed` with `options`: with ``ObservationOptions/initial``, `receive`
    /// gets its ``ObservableCache/latestMessage`` at once (a variable's current value as
    /// `Update(value, value)`; HTBKVObservation's "in sync at once"), then every message it
    /// sends from now on.
    ///
    /// ```swift
    /// observing = Observing(title, options: .initial) { [weak self] update in
    ///     self?.text = update.new
    /// }
    /// ```
    public convenience init(
        _ observed: Observed, options: ObservationOptions, fileID: StaticString = #fileID,
        line: UInt = #line, receive: @escaping (Observed.Message) -> Void
    ) {
        self.init(
            observed, options: options, site: DeclarationSite(fileID: fileID, line: line),
            handler: .message(receive))
    }

    /// Starts observing `observed` with `options`, receiving each message's author too (the
    /// first message's author is `observed`).
    public convenience init(
        _ observed: Observed, options: ObservationOptions, fileID: StaticString = #fileID,
        line: UInt = #line, receive: @escaping (Observed.Message, AnyAuthor) -> Void
    ) {
        self.init(
            observed, options: options, site: DeclarationSite(fileID: fileID, line: line),
            handler: .messageAndAuthor(receive))
    }

    private convenience init(
        _ observed: Observed, options: ObservationOptions, site: DeclarationSite,
        handler: Handler<Observed.Message>
    ) {
        self.init(site: site) { receiver, site in
            _ = observed.connect(
                options: options, receiver: receiver, site: site, handler: handler)
        }
    }
}
