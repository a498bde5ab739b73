import Foundation
import Messaging

/// A thread-safe list that test handlers append to.
final class Recording<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Element] = []

    func append(_ element: Element) {
        lock.lock()
        storage.append(element)
        lock.unlock()
    }

    var elements: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    var count: Int { elements.count }
}

/// An observer that records what it receives.
final class RecordingObserver<Message>: Observer, @unchecked Sendable {
    let receiver = Receiver()
    let messages = Recording<Message>()
    let authors = Recording<AnyAuthor>()

    /// Observes `observable`, recording every message and its author.
    func record<O: ObservableObject>(_ observable: O) where O.Message == Message {
        observe(observable) { [messages, authors] message, author in
            messages.append(message)
            authors.append(author)
        }
    }
}

/// A plain observer for tests that only need one.
final class TestObserver: Observer, @unchecked Sendable {
    let receiver = Receiver()
}

/// An object that may be an author.
final class Author: @unchecked Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

/// A messenger that is safe to share across threads in tests.
final class SharedMessenger<Message>: Messenger<Message>, @unchecked Sendable {}
