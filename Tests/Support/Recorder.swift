import Foundation
import Messaging

/// A thread-safe list that test handlers append to.
public final class Recording<Element>: @unchecked Sendable {
    /// Creates an empty recording.
    public init() {}
    private let lock = NSLock()
    private var storage: [Element] = []

    /// Appends `element`.
    public func append(_ element: Element) {
        lock.lock()
        storage.append(element)
        lock.unlock()
    }

    /// Everything appended so far, in order.
    public var elements: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    /// The number of elements appended so far.
    public var count: Int { elements.count }
}

/// An observer that records what it receives.
public final class RecordingObserver<Message>: Observer, @unchecked Sendable {
    /// Creates an observer that records nothing yet.
    public init() {}
    /// The observer's receiver.
    public let receiver = Receiver()
    /// The recorded messages.
    public let messages = Recording<Message>()
    /// The recorded authors (note: this keeps them alive).
    public let authors = Recording<AnyAuthor>()

    /// Observes `observable`, recording every message and its author.
    public func record<O: ObservableObject>(_ observable: O) where O.Message == Message {
        observe(observable) { [messages, authors] message, author in
            messages.append(message)
            authors.append(author)
        }
    }
}

/// A plain observer for tests that only need one.
public final class TestObserver: Observer, @unchecked Sendable {
    /// Creates an observer.
    public init() {}
    /// The observer's receiver.
    public let receiver = Receiver()
}

/// An object that may be an author.
public final class Author: @unchecked Sendable {
    /// The author's name, for messages.
    public let name: String
    /// Creates an author named `name`.
    public init(_ name: String) { self.name = name }
}

/// A messenger that is safe to share across threads in tests.
public final class SharedMessenger<Message>: Messenger<Message>, @unchecked Sendable {
    override public init() { super.init() }
}
