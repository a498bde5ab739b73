import Transforms

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Cycles among synthetic properties, and threads waiting for each other's evaluations.
@usableFromInline
enum SyntheticCycle {
    /// The message for a cycle that closes at `node`, given the properties being evaluated or
    /// checked (outermost first) on the thread that found it.
    static func message(closingAt node: String, through evaluating: [String]) -> String {
        let start = evaluating.lastIndex(of: node) ?? evaluating.startIndex
        let names = evaluating[start...] + [node]
        return "Herald: synthetic property cycle: " + names.joined(separator: " → ")
            + ". A synthetic property's value depends on itself; its computation must not read "
            + "it, directly or through other synthetic properties."
    }

    /// Stops the process with the cycle that closes at `node` on this thread.
    @usableFromInline
    static func report(closingAt node: any SyntheticNode) -> Never {
        let names = namesInProgressOnThisThread
        fatalError(message(closingAt: node.nodeName, through: names))
    }

    /// The names of the synthetic properties this thread evaluates or checks, outermost first.
    private static var namesInProgressOnThisThread: [String] {
        DependencyTracking.dependentsInProgressOnThisThread.compactMap {
            ($0 as? any SyntheticNode)?.nodeName
        }
    }

    // MARK: Waiting for another thread

    /// A waiting thread: the property it waits for, and what it was computing and checking
    /// (outermost first) when it began to wait (for a cycle's message).
    private struct Waiting {
        let node: any SyntheticNode
        let inProgress: [any Dependent]
    }

    /// Each waiting thread (guarded by `lock`).
    nonisolated(unsafe) private static var waits: [ObjectIdentifier: Waiting] = [:]
    /// Where a test hook is told, with the property's identity (see ``addHook(at:_:)``).
    enum HookPoint {
        /// A thread starts waiting for another thread's evaluation of the property.
        case wait
        /// A waiting thread is about to look for a cycle.
        case check
        /// A thread looking for a cycle has read who computes the property, which a thread of
        /// the chain waits for.
        case link
    }

    /// The test hooks, by number (guarded by `lock`). Several tests may run at once, each with
    /// its own hooks, which look only at their own properties.
    nonisolated(unsafe) private static var hooks:
        [Int: (point: HookPoint, body: (ObjectIdentifier) -> Void)] = [:]
    nonisolated(unsafe) private static var lastHook = 0

    /// Adds a hook told at `point` (tests use it as a gate). Returns its number, for
    /// ``removeHook(_:)``.
    static func addHook(at point: HookPoint, _ body: @escaping (ObjectIdentifier) -> Void) -> Int {
        lock.withLock {
            lastHook += 1
            hooks[lastHook] = (point, body)
            return lastHook
        }
    }

    /// Removes the hook `addHook(at:_:)` numbered `hook`.
    static func removeHook(_ hook: Int) {
        _ = lock.withLock { hooks.removeValue(forKey: hook) }
    }

    /// Tells the hooks at `point` of `node` (outside the lock: a hook may wait).
    private static func tellHooks(at point: HookPoint, _ node: any SyntheticNode) {
        let bodies = lock.withLock {
            hooks.isEmpty ? [] : hooks.values.filter { $0.point == point }.map(\.body)
        }
        for body in bodies { body(ObjectIdentifier(node)) }
    }

    private static let lock = Lock()

    /// Waits until `node`, which `other` is computing, is no longer computed by it. If `other`
    /// waits (through other threads) for a property this thread is computing, that is a cycle
    /// spread over threads, reported instead of waiting forever.
    @usableFromInline
    static func wait(for node: any SyntheticNode, computedBy other: ObjectIdentifier) {
        let me = DependencyTracking.thisThread
        let waiting = Waiting(
            node: node, inProgress: DependencyTracking.dependentsInProgressOnThisThread)
        lock.withLock { waits[me] = waiting }
        tellHooks(at: .wait, node)
        defer { _ = lock.withLock { waits.removeValue(forKey: me) } }
        var attempts = 0
        var pause: UInt32 = 1
        while let computing = node.computingThread, computing != me {
            tellHooks(at: .check, node)
            if let chain = chainOfWaits(from: computing, to: me),
                waitInACircle(me, for: node, computedBy: computing, through: chain)
            {
                let names = loop(closingAt: node, through: chain, then: waiting.inProgress)
                fatalError(
                    message(closingAt: node.nodeName, through: names)
                        + " (The cycle spans threads.)")
            }
            attempts += 1
            if attempts < 64 {
                sched_yield()
            } else {
                usleep(pause)
                pause = min(pause * 2, 1_000)
            }
        }
    }

    /// The names of a cycle over threads, from `node`, which the chain's first thread computes
    /// and this thread waits for, through each thread's properties in progress from the one
    /// the previous thread waits for, to this thread's (`mine`) from the one the chain's last
    /// thread waits for. The threads of the circle wait forever, so what each was computing when
    /// it began to wait still stands.
    private static func loop(
        closingAt node: any SyntheticNode, through chain: [Link], then mine: [any Dependent]
    ) -> [String] {
        let inProgress = lock.withLock { chain.map { waits[$0.thread]?.inProgress ?? [] } }
        var names: [String] = []
        var from: any SyntheticNode = node
        for (link, properties) in zip(chain, inProgress) {
            names += segment(of: properties, from: from)
            from = link.node
        }
        return names + segment(of: mine, from: from)
    }

    /// The names of `properties` (a thread's, outermost first) from `start` on (only its name
    /// if it is not among them).
    private static func segment(of properties: [any Dependent], from start: any SyntheticNode)
        -> [String]
    {
        guard let index = properties.lastIndex(where: { $0 === start }) else {
            return [start.nodeName]
        }
        return properties[index...].compactMap { ($0 as? any SyntheticNode)?.nodeName }
    }

    /// A thread in a chain of waits, and the property it waits for.
    private typealias Link = (thread: ObjectIdentifier, node: any SyntheticNode)

    /// If `thread` waits, directly or through other threads, for a property that `target`
    /// computes: the threads along the way and the properties they wait for. Read one link at a
    /// time, so the links may be from different moments (see `waitInACircle`).
    private static func chainOfWaits(from thread: ObjectIdentifier, to target: ObjectIdentifier)
        -> [Link]?
    {
        var chain: [Link] = []
        var current = thread
        var seen: Set<ObjectIdentifier> = []
        while seen.insert(current).inserted {
            guard let waited = lock.withLock({ waits[current]?.node }) else { return nil }
            chain.append((current, waited))
            guard let next = waited.computingThread else { return nil }
            tellHooks(at: .link, waited)
            if next == target { return chain }
            current = next
        }
        return nil
    }

    /// Whether `me`, waiting for `node`, which `computing` computes, and the threads of `chain`
    /// wait for each other in a circle now: every link read again in one critical section of
    /// `lock`.
    ///
    /// That is a snapshot. While `lock` is held no thread starts or stops waiting (both take
    /// it), and a thread that waits computes nothing new and finishes nothing, so what each
    /// thread of the circle computes cannot change while its links are read. A chain read one
    /// link at a time is not: a thread may have finished the property it was read to compute,
    /// and then waited for another.
    private static func waitInACircle(
        _ me: ObjectIdentifier, for node: any SyntheticNode, computedBy computing: ObjectIdentifier,
        through chain: [Link]
    ) -> Bool {
        lock.withLock {
            guard waits[me]?.node === node, node.computingThread == computing else {
                return false
            }
            var expected = computing
            for link in chain {
                guard link.thread == expected, waits[link.thread]?.node === link.node,
                    let next = link.node.computingThread
                else { return false }
                expected = next
            }
            return expected == me
        }
    }
}
