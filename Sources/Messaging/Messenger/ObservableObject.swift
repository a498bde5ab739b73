/// The author of a message: any object. Observers use authors to tell their own changes from
/// other people's.
///
/// ```swift
/// sharedText.set("draft", as: self)       // self is the author
/// observer.observe(sharedText) { update, author in
///     if author !== self { reload() }
/// }
/// ```
public typealias AnyAuthor = AnyObject

/// An object that observers can observe: it has a ``Messenger`` through which it sends messages.
///
/// ```swift
/// final class Sky: ObservableObject {
///     let messenger = Messenger<Color>()
/// }
///
/// dog.observe(sky) { color in print("The sky is \(color)") }
/// sky.send(.blue)
/// // Prints "The sky is blue"
/// ```
///
/// ``Messenger`` is itself an observable object (its messenger is itself), and so are its
/// subclasses such as ``Variable``.
///
/// Delivery rules (each is pinned down by a test):
/// - Starting an observation sends nothing.
/// - Messages are delivered in the order they were sent, also when a handler sends again: such a
///   re-entrant message is queued until the current one has reached every observer.
/// - Observers are called in the order they started observing.
/// - An observation receives exactly the messages accepted after it started, and nothing after it
///   stopped.
///
/// Threads: every method may be called from any thread. A messenger delivers one message at a
/// time. Handlers run on the thread that called `send`; if another thread is already delivering
/// this messenger's messages, that thread delivers the new message after the current ones and
/// `send` returns at once; but a delivering thread does only its share of other threads' work
/// (32 queued messages), after which a sender that delivers nothing itself waits to take over,
/// for as long as the delivering thread makes progress (see "What a send may wait for" in
/// Docs/Messaging.md). (A thread that starts or
/// ends an observation, and so triggers the observation-state handler, likewise delivers
/// whatever was queued meanwhile.) Swift cannot check that a handler's isolation matches the sending thread:
/// mutate an object from the isolation its observers expect (for example the main actor), or
/// hop with the Transforms layer's `receive(on:)`.
public protocol ObservableObject<Message>: AnyObject {
    /// The type of the messages this object sends.
    associatedtype Message
    /// The messenger that delivers this object's messages to its observers.
    var messenger: Messenger<Message> { get }
}

extension ObservableObject {
    /// Sends a message to every observer, with this object as its author.
    ///
    /// ```swift
    /// sky.send(.blue)   // observers receive .blue, authored by sky
    /// ```
    ///
    /// - Complexity: O(*n*) for *n* observers; no allocation when no other send is in progress.
    @inlinable
    public func send(_ message: Message) {
        messenger.core.send(message, from: self)
    }

    /// Sends a message to every observer on behalf of `author`, or of this object if `author`
    /// is `nil` (SwiftObserver's optional author).
    ///
    /// ```swift
    /// document.send(.edited, from: editor)
    /// document.send(.saved, from: nil)   // authored by document
    /// ```
    @inlinable
    public func send(_ message: Message, from author: AnyAuthor?) {
        messenger.core.send(message, from: author ?? self)
    }

    /// Ends every observation of this object by `observer`. Harmless if there is none.
    ///
    /// ```swift
    /// document.stopBeingObserved(by: closedEditor)
    /// ```
    ///
    /// - Complexity: Amortized O(1) expected per observation ended, however many other
    ///   observations the observer or this object has.
    @inlinable
    public func stopBeingObserved(by observer: any Observer) {
        observer.receiver.storage.endObservations(of: messenger.core)
    }

    /// Ends every observation of this object. A watch of its death
    /// (``Observer/observeDeath(of:fileID:line:_:)``) stays: it is told when the object dies.
    ///
    /// - Complexity: O(*n*), where *n* is the number of observations of this object.
    public func stopBeingObserved() {
        messenger.core.disconnectAll()
    }

    /// The number of observations of this object that are running.
    public var observationCount: Int { messenger.core.observationCount }

    /// Whether at least one observation of this object is running.
    public var isObserved: Bool { observationCount > 0 }

    /// The declaration sites of the running observations of this object, in the order they
    /// started. Meant for debugging: "who observes this?".
    public var observationSites: [DeclarationSite] { messenger.core.observationSites }

    /// Calls `handler` whenever the object becomes observed (its first observation starts) or
    /// unobserved (its last observation ends), replacing any previous handler.
    ///
    /// Use it to start work only while someone wants the result:
    ///
    /// ```swift
    /// weather.whenObservationStateChanges { [weak weather] isObserved in
    ///     isObserved ? weather?.startUpdating() : weather?.stopUpdating()
    /// }
    /// ```
    ///
    /// The object keeps the handler, so capture the object weakly. The handler is called outside
    /// any lock, one call at a time and in order with the object's messages (it runs like a
    /// message delivery, see "Threads" in ``ObservableObject``). It is not called when the object
    /// dies.
    public func whenObservationStateChanges(_ handler: @escaping (_ isObserved: Bool) -> Void) {
        messenger.core.setObservationStateHandler(handler)
    }
}

/// An observable object that can produce its latest (or current) message on demand.
///
/// ``Variable`` is a cache whose latest message is an ``Update`` with both `old` and `new` set to
/// the current value. A custom observable object can be a cache too:
///
/// ```swift
/// final class Model: Messenger<String>, ObservableCache {
///     var latestMessage: String { state }
///     var state = "initial state" {
///         didSet { if state != oldValue { send(state) } }
///     }
/// }
/// ```
public protocol ObservableCache: ObservableObject {
    /// The message that describes the current state, typically the last one sent.
    var latestMessage: Message { get }

    /// Sends ``latestMessage`` to every observer, with this object as its author.
    func send()
}

extension ObservableCache {
    /// Sends ``latestMessage`` to every observer, with this object as its author.
    public func send() {
        send(latestMessage)
    }
}
