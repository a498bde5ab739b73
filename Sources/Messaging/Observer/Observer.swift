/// An object that observes observable objects. All it needs is a ``Receiver``.
///
/// ```swift
/// final class Dog: Observer {
///     let receiver = Receiver()
///
///     init(sky: Sky) {
///         observe(sky) { [weak self] color in self?.bark(at: color) }
///     }
/// }
/// ```
///
/// Observations end by themselves when either the observer or the observed object dies. A
/// handler that captures its observer strongly keeps the observer alive as long as the observed
/// object lives; capture it weakly.
public protocol Observer: AnyObject {
    /// The receiver that owns this observer's observations. Hold it strongly, as a `let`.
    var receiver: Receiver { get }
}

extension Observer {
    /// Starts observing `observable`: `receive` is called with every message it sends from now on.
    ///
    /// ```swift
    /// observer.observe(number) { update in print(update.new) }
    /// ```
    ///
    /// Starting an observation sends nothing. Observing the same object twice starts two
    /// observations. `fileID` and `line` record where the observation was declared for debugging.
    @inlinable
    public func observe<Observed: ObservableObject>(
        _ observable: Observed, fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Observed.Message) -> Void
    ) {
        _ = observable.messenger.core.connect(
            receiver: receiver, site: DeclarationSite(fileID: fileID, line: line),
            handler: .message(receive))
    }

    /// Starts observing `observable`: `receive` is called with every message it sends from now
    /// on, together with the message's author.
    ///
    /// ```swift
    /// observer.observe(sharedText) { update, author in
    ///     guard author !== self else { return }   // ignore my own edits
    ///     print(update.new)
    /// }
    /// ```
    @inlinable
    public func observe<Observed: ObservableObject>(
        _ observable: Observed, fileID: StaticString = #fileID, line: UInt = #line,
        receive: @escaping (Observed.Message, AnyAuthor) -> Void
    ) {
        _ = observable.messenger.core.connect(
            receiver: receiver, site: DeclarationSite(fileID: fileID, line: line), receive: receive)
    }

    /// Starts observing `cache` with `options`: with ``ObservationOptions/initial``, `receive`
    /// gets the cache's ``ObservableCache/latestMessage`` at once (a variable's current value as
    /// `Update(value, value)`), then every message it sends from now on.
    ///
    /// ```swift
    /// observer.observe(title, options: .initial) { update in label.text = update.new }
    /// ```
    ///
    /// The first message reaches this observation only, authored by `cache`, before any
    /// message sent after the start (see ``ObservationOptions/initial`` for when it arrives).
    /// Without options this is `observe(_:receive:)`.
    public func observe<Observed: ObservableCache>(
        _ cache: Observed, options: ObservationOptions, fileID: StaticString = #fileID,
        line: UInt = #line, receive: @escaping (Observed.Message) -> Void
    ) {
        observe(
            cache, options: options, site: DeclarationSite(fileID: fileID, line: line),
            handler: .message(receive))
    }

    /// Starts observing `cache` with `options`, receiving each message's author too (see the
    /// form without authors). The first message's author is `cache`.
    public func observe<Observed: ObservableCache>(
        _ cache: Observed, options: ObservationOptions, fileID: StaticString = #fileID,
        line: UInt = #line, receive: @escaping (Observed.Message, AnyAuthor) -> Void
    ) {
        observe(
            cache, options: options, site: DeclarationSite(fileID: fileID, line: line),
            handler: .messageAndAuthor(receive))
    }

    private func observe<Observed: ObservableCache>(
        _ cache: Observed, options: ObservationOptions, site: DeclarationSite,
        handler: Handler<Observed.Message>
    ) {
        _ = cache.connect(options: options, receiver: receiver, site: site, handler: handler)
    }

    /// Calls `handler` once `observable` dies (EBN's dealloc protocol): when its messenger is
    /// freed, on the thread that let go of it last.
    ///
    /// ```swift
    /// viewModel.observeDeath(of: document) { [weak viewModel] in viewModel?.close() }
    /// ```
    ///
    /// It is an observation of `observable` that receives no messages: it counts in
    /// ``ObservableObject/observationCount`` and ``ObservableObject/observationSites``, and it
    /// ends like any other, without calling `handler`, when this observer dies or stops
    /// observing `observable` first. When the observed side ends its observations
    /// (``ObservableObject/stopBeingObserved()``, a path that stops), the watch stays until the
    /// object dies. (A model class that is not observable itself dies with its observable
    /// properties: watch one of those.)
    public func observeDeath<Observed: ObservableObject>(
        of observable: Observed, fileID: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping () -> Void
    ) {
        _ = observable.messenger.core.connectWatchingDeath(
            receiver: receiver, site: DeclarationSite(fileID: fileID, line: line), handler: nil,
            died: handler)
    }

    /// Whether this observer has at least one running observation of `observable`.
    ///
    /// ```swift
    /// if !dog.isObserving(owner) { dog.observe(owner) { print($0) } }
    /// ```
    ///
    /// - Complexity: O(1) expected per observation of `observable` by this observer, however
    ///   many other observations it has.
    @inlinable
    public func isObserving<Observed: ObservableObject>(_ observable: Observed) -> Bool {
        receiver.storage.isConnected(to: observable.messenger.core)
    }

    /// Ends every observation of `observable` by this observer. Harmless if there is none, or if
    /// `observable` is nil.
    ///
    /// ```swift
    /// for item in removedItems { viewModel.stopObserving(item) }
    /// ```
    ///
    /// - Complexity: Amortized O(1) expected per observation ended, however many other
    ///   observations the observer or `observable` has.
    @inlinable
    public func stopObserving<Observed: ObservableObject>(_ observable: Observed?) {
        guard let observable else { return }
        receiver.storage.endObservations(of: observable.messenger.core)
    }

    /// Ends every observation this observer is doing.
    ///
    /// - Complexity: Amortized O(1) expected per observation ended.
    public func stopObserving() {
        receiver.storage.endAllObservations()
    }
}
