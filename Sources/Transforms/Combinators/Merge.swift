import Messaging

/// A stand-alone observable object that forwards the messages of several sources of the same
/// message type, with their authors. ``merge(_:fileID:line:)`` creates one.
///
/// ```swift
/// let allErrors = merge(networkErrors, diskErrors)
/// observer.observe(allErrors) { error in log(error) }
/// ```
///
/// Each source's messages keep their order; messages of different sources are interleaved in the
/// order the sources deliver them. It holds its sources strongly; hold the merge itself.
public final class Merge<Message>: Messenger<Message> {
    /// The merged sources, in the order given.
    public let sources: [any ObservableObject<Message>]
    private let connections: [Connection<Message>]

    /// Merges `sources`.
    public init(
        _ sources: [any ObservableObject<Message>], fileID: StaticString = #fileID,
        line: UInt = #line
    ) {
        let core = MessengerCore<Message>()
        let site = DeclarationSite(fileID: fileID, line: line)
        self.sources = sources
        connections = sources.map { source in
            source.messenger.core.connect(receiver: nil, site: site) { message, author in
                core.send(message, from: author)
            }
        }
        super.init(core: core)
    }

    deinit {
        for connection in connections { connection.detachFromMessenger() }
    }
}

/// Merges the messages of several observable objects of the same message type into one
/// stand-alone observable object.
///
/// ```swift
/// let taps = merge(leftButton.taps, rightButton.taps)
/// ```
public func merge<Message>(
    _ sources: any ObservableObject<Message>..., fileID: StaticString = #fileID,
    line: UInt = #line
) -> Merge<Message> {
    Merge(sources, fileID: fileID, line: line)
}

// Thread-safe by construction (its links and messenger core own locks); it is `Sendable` when
// what it holds and sends is.
extension Merge: @unchecked Sendable where Message: Sendable {}
