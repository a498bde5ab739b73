import Messaging

/// A stand-alone observable object that sends the latest messages of all its sources together,
/// as a tuple, whenever any of them sends. ``combine(_:fileID:line:)`` creates one.
///
/// ```swift
/// let first = Var("Ada"), last = Var("Lovelace")
/// let fullName = combine(first.new(), last.new()) { "\($0) \($1)" }
/// observer.observe(fullName) { name in print(name) }
/// last.value = "Byron"   // Prints "Ada Byron"
/// ```
///
/// The sources are caches (``Variable``s, `new()` over variables, ``Cache``s…), so each part of
/// the tuple is the source's ``ObservableCache/latestMessage`` at the time of sending; handlers
/// run after the change, so the source that changed already shows its new state. Each message is
/// authored by the author of the source message that caused it. A `CombineLatest` is itself a cache. It
/// holds its sources strongly; hold the combine itself.
public final class CombineLatest<each Source: ObservableCache>: Messenger<
    (repeat (each Source).Message)
>,
ObservableCache
{
    /// Holds the sources for the connections' closures, which must not capture the combine.
    private final class Sources: @unchecked Sendable {
        let values: (repeat each Source)
        init(_ values: repeat each Source) { self.values = (repeat each values) }
        var latest: (repeat (each Source).Message) { (repeat (each values).latestMessage) }
    }

    private let storage: Sources
    private let connections: [ConnectionBase]

    /// Combines `sources`.
    public init(
        _ sources: repeat each Source, fileID: StaticString = #fileID, line: UInt = #line
    ) {
        let core = MessengerCore<(repeat (each Source).Message)>()
        let storage = Sources(repeat each sources)
        let site = DeclarationSite(fileID: fileID, line: line)
        var connections: [ConnectionBase] = []
        for source in repeat each sources {
            connections.append(
                source.messenger.core.connect(receiver: nil, site: site) { _, author in
                    core.send(storage.latest, from: author)
                })
        }
        self.storage = storage
        self.connections = connections
        super.init(core: core)
    }

    deinit {
        for connection in connections { connection.detachFromMessenger() }
    }

    /// The sources' latest messages.
    public var latestMessage: (repeat (each Source).Message) { storage.latest }

    /// The combined sources.
    public var sources: (repeat each Source) { storage.values }
}

// Thread-safe by construction (its messenger core owns a lock); it is `Sendable` when its
// sources are.
extension CombineLatest: @unchecked Sendable where repeat each Source: Sendable {}

/// Combines the latest messages of several caches into one stand-alone observable object that
/// sends them together whenever one of them sends.
///
/// ```swift
/// let canSubmit = combine(name.new(), email.new()).map { !$0.isEmpty && $1.contains("@") }
/// ```
public func combine<each Source: ObservableCache>(
    _ sources: repeat each Source, fileID: StaticString = #fileID, line: UInt = #line
) -> CombineLatest<repeat each Source> {
    CombineLatest(repeat each sources, fileID: fileID, line: line)
}

/// Combines the latest messages of several caches and maps them with `transform`, which takes
/// one argument per source.
///
/// ```swift
/// let fullName = combine(first.new(), last.new()) { "\($0) \($1)" }
/// ```
public func combine<each Source: ObservableCache, Combined>(
    _ sources: repeat each Source, fileID: StaticString = #fileID, line: UInt = #line,
    transform: @escaping (repeat (each Source).Message) -> Combined
) -> Map<CombineLatest<repeat each Source>, Combined> {
    CombineLatest(repeat each sources, fileID: fileID, line: line).map(fileID: fileID, line: line) {
        transform(repeat each $0)
    }
}
