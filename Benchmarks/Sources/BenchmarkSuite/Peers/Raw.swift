/// RAW, the physical limit: a final class holding `[(Int) -> Void]`; send is a loop calling each.
///
/// The RAW classes' stored properties are `@exclusivity(unchecked)`: a careful engineer's lower
/// bound pays no dynamic exclusivity check per access (these classes are used on one thread).
final class RawMessenger {
    @exclusivity(unchecked) var handlers: [(Int) -> Void] = []

    @inline(__always)
    func send(_ message: Int) {
        for handler in handlers { handler(message) }
    }
}

/// RAW for variables: a final class whose `didSet` calls the closures with (old, new).
final class RawVariable {
    @exclusivity(unchecked) var handlers: [(Int, Int) -> Void] = []
    @exclusivity(unchecked) var value: Int {
        didSet { for handler in handlers { handler(oldValue, value) } }
    }

    init(_ value: Int) { self.value = value }
}

/// RAW with removal (W5, W6): handlers with integer tokens, removed by a search from the end.
final class RawRemovableMessenger {
    @exclusivity(unchecked) private var tokens: [Int] = []
    @exclusivity(unchecked) private var handlers: [(Int) -> Void] = []
    @exclusivity(unchecked) private var nextToken = 0

    func add(_ handler: @escaping (Int) -> Void) -> Int {
        nextToken &+= 1
        tokens.append(nextToken)
        handlers.append(handler)
        return nextToken
    }

    func remove(_ token: Int) {
        guard let index = tokens.lastIndex(of: token) else { return }
        tokens.remove(at: index)
        handlers.remove(at: index)
    }

    func send(_ message: Int) {
        for handler in handlers { handler(message) }
    }

    var count: Int { handlers.count }
}

/// A hand-written observer for RAW that removes its handlers in `deinit` (W6).
final class RawObserver {
    @exclusivity(unchecked)
    private var observations: [(messenger: RawRemovableMessenger, token: Int)] = []

    func observe(_ messenger: RawRemovableMessenger, _ handler: @escaping (Int) -> Void) {
        observations.append((messenger, messenger.add(handler)))
    }

    deinit {
        for observation in observations { observation.messenger.remove(observation.token) }
    }
}

/// RAW for one observer with many observations (W5-many, W6-many): the observer keeps a token per
/// observed messenger in a dictionary keyed by the messenger's identity, so stopping one costs a
/// hash lookup; a messenger tells its observers when it dies, so they forget it.
final class RawManyObserver {
    private struct Entry {
        unowned(unsafe) let messenger: RawMortalMessenger
        let token: Int
    }
    @exclusivity(unchecked) private var tokens: [ObjectIdentifier: Entry] = [:]

    func observe(_ messenger: RawMortalMessenger, _ handler: @escaping (Int) -> Void) {
        tokens[ObjectIdentifier(messenger)] = Entry(
            messenger: messenger, token: messenger.add(handler, from: self))
    }

    func stopObserving(_ messenger: RawMortalMessenger) {
        guard let entry = tokens.removeValue(forKey: ObjectIdentifier(messenger)) else { return }
        entry.messenger.remove(entry.token)
    }

    /// Called by a dying messenger.
    func forget(_ messenger: ObjectIdentifier) {
        tokens.removeValue(forKey: messenger)
    }

    var count: Int { tokens.count }
}

/// RAW's messenger for W5-many and W6-many: handlers with tokens (removed by a search from the
/// end; each messenger has one), and the observers to tell when it dies. Neither side retains the
/// other: a dying messenger removes itself from its observers, and the workloads keep the
/// observers alive.
final class RawMortalMessenger {
    private struct Entry {
        let token: Int
        unowned(unsafe) let observer: RawManyObserver
        let handler: (Int) -> Void
    }
    @exclusivity(unchecked) private var entries: [Entry] = []
    @exclusivity(unchecked) private var nextToken = 0

    func add(_ handler: @escaping (Int) -> Void, from observer: RawManyObserver) -> Int {
        nextToken &+= 1
        entries.append(Entry(token: nextToken, observer: observer, handler: handler))
        return nextToken
    }

    func remove(_ token: Int) {
        guard let index = entries.lastIndex(where: { $0.token == token }) else { return }
        entries.remove(at: index)
    }

    func send(_ message: Int) {
        for entry in entries { entry.handler(message) }
    }

    var count: Int { entries.count }

    deinit {
        let identity = ObjectIdentifier(self)
        for entry in entries { entry.observer.forget(identity) }
    }
}

/// RAW for one messenger with many observers that leave (W2-churn): handlers in slots, so removal
/// by token (the slot) is O(1); a removed handler leaves a hole.
final class RawSlotMessenger {
    @exclusivity(unchecked) private var handlers: [((Int) -> Void)?] = []
    /// The number of handlers held.
    @exclusivity(unchecked) private(set) var count = 0

    func add(_ handler: @escaping (Int) -> Void) -> Int {
        handlers.append(handler)
        count += 1
        return handlers.count - 1
    }

    func remove(_ token: Int) {
        handlers[token] = nil
        count -= 1
    }

    func send(_ message: Int) {
        for case let handler? in handlers { handler(message) }
    }

}

/// A hand-written observer of one `RawSlotMessenger` that removes its handler in `deinit`.
final class RawSlotObserver {
    private let messenger: RawSlotMessenger
    private let token: Int

    init(_ messenger: RawSlotMessenger, _ handler: @escaping (Int) -> Void) {
        self.messenger = messenger
        token = messenger.add(handler)
    }

    deinit { messenger.remove(token) }
}
