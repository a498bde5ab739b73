import Messaging

/// Herald's one re-wiring engine, behind `flatMapLatest` / `switchToLatest` and key paths.
///
/// A client observes a chain of levels, one object at a time per level; when what a level holds
/// changes, the client re-wires the levels after it. (`flatMapLatest` has one level, the inner
/// object; a key path has one per property.) The engine gives every client the same three
/// guarantees:
/// - **One event at a time.** Every event — the initial wiring, a re-wire, a message from a wired
///   object — goes through one private messenger, so the client's `handle(_:from:)` runs for one
///   event at a time, in acceptance order, outside any lock, on whichever thread delivers. An
///   event sent while another is handled waits its turn (the handler may send events itself).
///   So what the client sends downstream is serial too.
/// - **Stale events are dropped.** The client tags each connection it makes with
///   ``tag(level:)``; a new tag at a level makes every tag of that level and of the levels after
///   it stale, and an event sent with a stale tag is dropped when its turn comes. So a message
///   that an object sent just before it was replaced is never handled after the replacement.
/// - **Atomic starts.** Connections read the state they start from in the same step as they
///   start (`ObservableObject.connectReadingLatest`, `Variable.connect(…initial:…)`), so no
///   change falls between the read and the first message.
///
/// The engine holds its client weakly: a client ends with its last owner, and its `deinit` ends
/// its connections.
@usableFromInline
package final class SwitchEngine<Event>: @unchecked Sendable {
    /// The generation of one connection: the level it observes and a number that a re-wire of
    /// that level, or of one before it, makes stale.
    @usableFromInline
    package struct Tag: Sendable {
        @usableFromInline let level: Int
        @usableFromInline let generation: UInt64

        @inlinable init(level: Int, generation: UInt64) {
            self.level = level
            self.generation = generation
        }

        /// For events that no re-wire makes stale (a request to re-wire, the initial wiring).
        @inlinable package static var untagged: Tag { Tag(level: -1, generation: 0) }
    }

    @usableFromInline
    struct Step {
        @usableFromInline let tag: Tag
        @usableFromInline let event: Event

        @inlinable init(tag: Tag, event: Event) {
            self.tag = tag
            self.event = event
        }
    }

    // The engine's methods are inlinable, so that they are specialized for the client's event
    // type where the client is compiled (unspecialized, every event would look up the generic
    // metadata of the queue's types).
    @usableFromInline let queue = MessengerCore<Step>()
    // Touched only by the handling of events, which is serial (see the type's comment).
    @usableFromInline @exclusivity(unchecked) var generations: [UInt64]
    @usableFromInline @exclusivity(unchecked) var lastGeneration: UInt64 = 0

    /// An engine for a chain of `levels` levels.
    @inlinable package init(levels: Int) {
        generations = Array(repeating: 0, count: levels)
    }

    deinit {
        queue.disconnectAll()
    }

    /// Starts handling events for `client`, which holds this engine.
    @inlinable package func start<Client: SwitchEngineClient>(
        for client: Client, site: DeclarationSite
    )
    where Client.Event == Event {
        _ = queue.connect(receiver: nil, site: site) { [weak client] step, author in
            guard let client else { return }
            let engine = client.switchEngine
            guard engine.isCurrent(step.tag) else { return }
            client.handle(step.event, from: author)
        }
    }

    /// Sends an event to be handled in turn, on behalf of `author`; dropped then if `tag` is
    /// stale. Any thread.
    @inlinable package func send(_ event: Event, tag: Tag = .untagged, from author: AnyAuthor) {
        queue.send(Step(tag: tag, event: event), from: author)
    }

    /// A new tag for a connection at `level`, which makes every earlier tag of this level and of
    /// the levels after it stale. Only while handling an event (or before the engine is shared).
    @inlinable package func tag(level: Int) -> Tag {
        lastGeneration &+= 1
        generations[level] = lastGeneration
        for later in (level + 1)..<generations.count { generations[later] = 0 }
        return Tag(level: level, generation: lastGeneration)
    }

    /// Makes every tag of `level` and of the levels after it stale (the chain ends before
    /// `level`). Only while handling an event.
    @inlinable package func invalidate(from level: Int) {
        for later in level..<generations.count { generations[later] = 0 }
    }

    /// Stops handling events: none is handled after this returns, except one whose handling
    /// had already begun. Any thread.
    @inlinable package func stop() {
        queue.disconnectAll()
    }

    /// Lets the calling thread handle an event itself, now, instead of sending it: true if no
    /// event is being handled and none waits. Then the caller handles it as the engine would
    /// (checking its tag with ``isCurrent(_:)``), events sent meanwhile wait their turn, and the
    /// caller must call ``endHandlingDirectly()``. False: send the event instead. Any thread.
    ///
    /// Handling on the sending thread keeps every guarantee of the type (events stay serial and
    /// in acceptance order, and stale ones are dropped) and saves the hop through the queue.
    @inlinable package func beginHandlingDirectly() -> Bool {
        queue.beginDeliveringDirectly()
    }

    /// Ends what ``beginHandlingDirectly()`` began, after handling the events sent meanwhile.
    @inlinable package func endHandlingDirectly() {
        queue.endDeliveringDirectly()
    }

    /// Whether an event sent with `tag` is still to be handled. Only while handling an event.
    @inlinable package func isCurrent(_ tag: Tag) -> Bool {
        tag.level < 0 || generations[tag.level] == tag.generation
    }
}

/// What a client of a ``SwitchEngine`` provides.
@usableFromInline
package protocol SwitchEngineClient: AnyObject {
    associatedtype Event
    /// The engine, held by the client.
    var switchEngine: SwitchEngine<Event> { get }
    /// Handles one event whose tag is current: one at a time, outside any lock.
    func handle(_ event: Event, from author: AnyAuthor)
}

#if DEBUG
    /// Test hooks of the switching engine, task-local so that tests running in parallel do not
    /// see each other's.
    package enum SwitchTestHooks {
        /// Runs on the thread that delivers an inner object's message, after the inner
        /// observation accepted it and before it is handed to the engine.
        @TaskLocal package static var beforeForwarding: (@Sendable () -> Void)?
    }
#endif
