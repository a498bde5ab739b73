/// RAW, the physical limit: a final class holding `[(Int) -> Void]`; send is a loop calling each.
final class RawMessenger {
    var handlers: [(Int) -> Void] = []

    @inline(__always)
    func send(_ message: Int) {
        for handler in handlers { handler(message) }
    }
}

/// RAW for variables: a final class whose `didSet` calls the closures with (old, new).
final class RawVariable {
    var handlers: [(Int, Int) -> Void] = []
    var value: Int {
        didSet { for handler in handlers { handler(oldValue, value) } }
    }

    init(_ value: Int) { self.value = value }
}

/// RAW with removal (W5, W6): handlers with integer tokens, removed by a search from the end.
final class RawRemovableMessenger {
    private var tokens: [Int] = []
    private var handlers: [(Int) -> Void] = []
    private var nextToken = 0

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
    private var observations: [(messenger: RawRemovableMessenger, token: Int)] = []

    func observe(_ messenger: RawRemovableMessenger, _ handler: @escaping (Int) -> Void) {
        observations.append((messenger, messenger.add(handler)))
    }

    deinit {
        for observation in observations { observation.messenger.remove(observation.token) }
    }
}
