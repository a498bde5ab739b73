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

    /// Which property each waiting thread waits for (guarded by `lock`).
    nonisolated(unsafe) private static var waits: [ObjectIdentifier: any SyntheticNode] = [:]
    /// Told, with the property's identity, when a thread starts waiting for another thread's
    /// evaluation of it (for tests; guarded by `lock`).
    nonisolated(unsafe) private static var waitHook: ((ObjectIdentifier) -> Void)?

    /// Told, with the property's identity, each time a waiting thread is about to look for a
    /// cycle (for tests; guarded by `lock`).
    nonisolated(unsafe) private static var checkHook: ((ObjectIdentifier) -> Void)?

    /// Sets the hook told when a thread starts waiting (tests use it as a gate).
    static func setWaitHook(_ hook: ((ObjectIdentifier) -> Void)?) {
        lock.withLock { waitHook = hook }
    }

    /// Sets the hook told when a waiting thread is about to look for a cycle (tests use it as
    /// a gate).
    static func setCheckHook(_ hook: ((ObjectIdentifier) -> Void)?) {
        lock.withLock { checkHook = hook }
    }
    private static let lock = Lock()

    /// Waits until `node`, which `other` is computing, is no longer computed by it. If `other`
    /// waits (through other threads) for a property this thread is computing, that is a cycle
    /// spread over threads, reported instead of waiting forever.
    @usableFromInline
    static func wait(for node: any SyntheticNode, computedBy other: ObjectIdentifier) {
        let me = DependencyTracking.thisThread
        let hook = lock.withLock {
            waits[me] = node
            return waitHook
        }
        hook?(ObjectIdentifier(node))
        defer { _ = lock.withLock { waits.removeValue(forKey: me) } }
        var attempts = 0
        var pause: UInt32 = 1
        while let computing = node.computingThread, computing != me {
            lock.withLock { checkHook }?(ObjectIdentifier(node))
            // `computing` may have finished the property since it was read, and be waiting now
            // for one that this thread computes: that is no cycle. A real one lasts, so the
            // chain counts only while the same thread still computes the property.
            if let chain = chainOfWaits(from: computing, to: me),
                node.computingThread == computing
            {
                let names = namesInProgressOnThisThread
                fatalError(
                    message(closingAt: node.nodeName, through: names + chain)
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

    /// If `thread` waits, directly or through other threads, for a property that `target`
    /// computes: the names of the properties waited for along the way.
    private static func chainOfWaits(from thread: ObjectIdentifier, to target: ObjectIdentifier)
        -> [String]?
    {
        var names: [String] = []
        var current = thread
        var seen: Set<ObjectIdentifier> = []
        while seen.insert(current).inserted {
            guard let waited = lock.withLock({ waits[current] }) else { return nil }
            names.append(waited.nodeName)
            guard let next = waited.computingThread else { return nil }
            if next == target { return names }
            current = next
        }
        return nil
    }
}
