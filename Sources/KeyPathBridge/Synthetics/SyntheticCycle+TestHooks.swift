import Synchronization
import Transforms

extension SyntheticCycle {
    /// Hooks that tests add to wait for threads at points of `SyntheticCycle.wait(for:computedBy:)`
    /// and of sets and invalidations (as gates). Several tests may run at once, each with its own hooks, which look only at
    /// their own properties. For tests only.
    enum TestHooks {
        /// Where a hook is told, with the property's identity.
        enum Point {
            /// A thread starts waiting for another thread's evaluation of the property.
            case wait
            /// A waiting thread is about to look for a cycle (or a thread that closed a circle of
            /// reads on itself is about to look whether it was overtaken).
            case check
            /// A thread looking for a cycle has read who computes the property, which a thread
            /// of the chain waits for.
            case link
            /// A thread that set or invalidated the property is about to mark what depends on
            /// it.
            case marking
        }

        /// The hooks, by number (guarded by `lock`; in no particular order).
        nonisolated(unsafe) private static var hooks:
            [Int: (point: Point, body: (ObjectIdentifier) -> Void)] = [:]
        nonisolated(unsafe) private static var last = 0
        /// How many hooks there are: none, the common case, is found without the lock.
        private static let count = Atomic<Int>(0)
        private static let lock = Lock()

        /// Adds a hook told at `point`. Returns its number, for ``remove(_:)``.
        static func add(at point: Point, _ body: @escaping (ObjectIdentifier) -> Void) -> Int {
            lock.withLock {
                last += 1
                hooks[last] = (point, body)
                count.add(1, ordering: .relaxed)
                return last
            }
        }

        /// Removes the hook numbered `hook`.
        static func remove(_ hook: Int) {
            let removed = lock.withLock {
                let removed = hooks.removeValue(forKey: hook)
                if removed != nil { count.subtract(1, ordering: .relaxed) }
                return removed
            }
            _ = consume removed  // released after unlocking: it may hold any object
        }

        /// Tells the hooks at `point` of `node` (outside the lock: a hook may wait).
        static func tell(_ point: Point, _ node: any SyntheticNode) {
            guard count.load(ordering: .relaxed) != 0 else { return }
            let bodies = lock.withLock { hooks.values.filter { $0.point == point }.map(\.body) }
            for body in bodies { body(ObjectIdentifier(node)) }
        }
    }
}
