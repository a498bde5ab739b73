import Synchronization
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
    /// The message for a cycle: the names of its properties in order, the first again at the
    /// end.
    static func message(cycle names: [String]) -> String {
        "Herald: synthetic property cycle: " + names.joined(separator: " → ")
            + ". A synthetic property's value depends on itself; its computation must not read "
            + "it, directly or through other synthetic properties."
    }

    /// Leaves the circle of reads that closes at `node` on this thread (this thread computes or
    /// checks it, and reads it again), if the circle may be one of dependencies that switched:
    /// `node` has a value, and one of the circle's properties was overtaken (see
    /// `SyntheticState.wasOvertaken`). A variable the thread read before another thread changed
    /// it, in an evaluation further out, may have sent it where it read the variable after the
    /// change, which no single state of the program does. The thread then reads `node`'s last
    /// value, and what it computes and checks from `node` in decides nothing: `node` is
    /// computed again (see `SyntheticState.taint(retry:)`). Returns false if the circle is a
    /// cycle.
    ///
    /// While another thread that set or invalidated a synthetic property marks what depends on
    /// it (see `markingsInFlight`), the circle may be one that the marking is about to show
    /// overtaken: the thread waits for such markings to end before it decides (for a while:
    /// see `pauseBeforeReporting(_:)`).
    @usableFromInline
    static func leave(closingAt node: any SyntheticNode) -> Bool {
        let progress = ThreadProgress.ofThisThread
        guard progress.mayLeaveCircle, node.hasValue else { return false }
        let circle = members(of: progress.dependents, from: node)
        var pauses = Pauses()
        while true {
            TestHooks.tell(.check, node)
            // Loaded first: a marking that ended before is seen in the properties' states.
            let inFlight = markingsInFlight.load(ordering: .sequentiallyConsistent) != 0
            if circle.contains(where: \.wasOvertaken) { break }
            guard inFlight, pauses.pause() else { return false }
        }
        taint(circle, on: progress)
        return true
    }

    /// How many sets and invalidations of synthetic properties are marking what depends on
    /// them, in the process. A set stores its value, and an invalidation marks its property,
    /// under the property's lock, and they mark its dependents after unlocking (under it, two
    /// properties on a circle of what they read last would wait for each other's locks):
    /// meanwhile, a thread may read the new value, or compute the property anew, before what
    /// depends on it is marked. A circle of reads that this closes looks like a cycle, though
    /// the marking will show that it passes through an overtaken evaluation.
    static let markingsInFlight = Atomic<Int>(0)

    /// Runs `marking`, a set's or an invalidation's marking of what depends on `node`, counted in
    /// `markingsInFlight`, which the caller increased before unlocking the property.
    @usableFromInline
    static func markAfterChange(of node: any SyntheticNode, _ marking: () -> Void) {
        TestHooks.tell(.marking, node)
        marking()
        markingsInFlight.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// Counts a set's or an invalidation's marking in `markingsInFlight` (see
    /// `markAfterChange(of:_:)`): called before the change is visible to other threads.
    @usableFromInline
    static func beginMarkingAfterChange() {
        markingsInFlight.add(1, ordering: .sequentiallyConsistent)
    }

    /// Pauses of a thread that waits, growing from yields to sleeps of a millisecond, and a
    /// bound on how many it makes before a circle is reported, however many markings are still
    /// in flight (other threads may keep setting properties): about two seconds.
    struct Pauses {
        private var count = 0
        private var sleep: UInt32 = 1
        static let beforeReporting = 2_048

        /// Whether the bound is reached.
        var areExhausted: Bool { count >= Self.beforeReporting }

        /// Pauses once. Returns false, without pausing, once the bound is reached.
        mutating func pause() -> Bool {
            guard !areExhausted else { return false }
            wait()
            return true
        }

        /// Pauses once, without a bound.
        mutating func wait() {
            if count < 64 {
                sched_yield()
            } else {
                usleep(sleep)
                sleep = min(sleep * 2, 1_000)
            }
            count += 1
        }
    }

    /// Taints what this thread computes and checks in a circle it leaves, `members` (outermost
    /// first, the first computed again at once; see `SyntheticState.taint(retry:)`), and counts
    /// the circle (see `ThreadProgress.mayLeaveCircle`).
    private static func taint(_ members: [any SyntheticNode], on progress: ThreadProgress) {
        progress.countCircleLeft()
        for (index, member) in members.enumerated() { member.taint(retry: index == 0) }
    }

    /// Stops the process with the cycle that closes at `node` on this thread.
    @usableFromInline
    static func report(closingAt node: any SyntheticNode) -> Never {
        let members = members(of: ThreadProgress.ofThisThread.dependents, from: node)
        let overtaken = members.filter(\.wasOvertaken).map(\.nodeName)
        fatalError(
            message(cycle: (members + [node]).map(\.nodeName))
                + switchedDependencies(overtaken: overtaken))
    }

    /// `properties` (a thread's, outermost first) from `start` on, found by identity (properties
    /// of two instances of a class have the same name); only `start` if it is not among them.
    private static func members(of properties: [any Dependent], from start: any SyntheticNode)
        -> [any SyntheticNode]
    {
        guard let index = properties.lastIndex(where: { $0 === start }) else { return [start] }
        return properties[index...].compactMap { $0 as? any SyntheticNode }
    }

    /// What a cycle's message adds when `overtaken`, properties of the cycle, were invalidated
    /// or set while they were computed or checked: the cycle may be one of dependencies that
    /// switched meanwhile, which no single state of the program has, but which Herald could not
    /// leave (see `leave(closingAt:)` and `wait(for:computedBy:mayGiveUp:)`).
    static func switchedDependencies(overtaken: [String]) -> String {
        guard !overtaken.isEmpty else { return "" }
        return " It may have formed while dependencies switched: "
            + overtaken.joined(separator: ", ")
            + " changed while being computed, so no single state of the program need have this "
            + "cycle, but it cannot be left (the property to read instead has no value yet, or "
            + "the thread left too many such circles). Synthetic properties whose dependencies "
            + "switch must not be computed on several threads at once."
    }

    // MARK: Waiting for another thread

    /// A waiting thread: the property it waits for, what it computes, the checks that may
    /// make it stop waiting (none of which can change while it waits), and whether it may leave
    /// a circle of waits (see `ThreadProgress.mayLeaveCircle`).
    private struct Waiting {
        let node: any SyntheticNode
        let progress: ThreadProgress
        let checks: [any SyntheticNode]
        let mayLeaveCircle: Bool
        /// The wait a thread owes after it gave way (see `waitAfterGivingWay(mayGiveUp:)`): no
        /// dependency, so it ends if it closes a circle.
        let isOwed: Bool

        /// Whether the thread stops waiting (at its next look), because one of its checks was
        /// overtaken.
        var willGiveUp: Bool { checks.contains { $0.checkWasOvertaken } }
    }

    /// Each waiting thread (guarded by `lock`).
    nonisolated(unsafe) private static var waits: [ObjectIdentifier: Waiting] = [:]
    /// Whether a thread has found a cycle over threads (guarded by `lock`): the others that find
    /// it keep waiting, so that the process stops with one message.
    nonisolated(unsafe) private static var reported = false
    private static let lock = Lock()

    /// How a wait for another thread's evaluation ended.
    @usableFromInline
    enum WaitEnd {
        /// The other thread no longer computes the property.
        case finished
        /// The thread stopped waiting: a check open on it was overtaken (see
        /// `wait(for:computedBy:mayGiveUp:)`).
        case gaveUp
        /// The thread left a circle of waits: it takes the property's last value (see
        /// `wait(for:computedBy:mayGiveUp:)`).
        case leftCircle
    }

    /// Waits until `node`, which `other` is computing, is no longer computed (`other` names
    /// the thread for this description; the wait reads `node`'s state). If `other`
    /// waits (through other threads) for a property this thread is computing, that is a cycle
    /// spread over threads, reported instead of waiting forever, unless the circle may be one
    /// of dependencies that switched: a property of the circle was overtaken (see
    /// `SyntheticState.wasOvertaken`). Then one thread that computes or checks an overtaken
    /// one, and waits for a property that has a value, leaves the circle (`leftCircle`): it
    /// takes that value, and what it computes and checks in the circle decides nothing (see
    /// `SyntheticState.taint(retry:)`); the others wait on.
    ///
    /// If every thread computing or checking an overtaken property waits for one without a value
    /// (it was never computed), another thread of the circle that waits for a property with a
    /// value gives way (the least such, so that the threads agree; not one that computes the
    /// property the circle reaches it by inside its own check of it, which holds that property
    /// until the check ends): it leaves the circle in the same way, and then, before it
    /// computes again the outermost property it gave up, which it no longer holds, waits until
    /// the property it waited for is no longer computed (see `waitAfterGivingWay(mayGiveUp:)`).
    /// Computing again at once would close the same circle. That wait is no dependency: if it
    /// closes a circle (the thread holds properties outside the one it left), it ends.
    ///
    /// If `mayGiveUp` (`node` is refreshed for a check of a property that read it), stops
    /// waiting, and returns true, once a check open on this thread inside its innermost
    /// evaluation was overtaken (see `SyntheticState.checkWasOvertaken`). That check decides
    /// nothing any more, nor do those made for it, and waiting for it may be a deadlock: when
    /// the property's dependencies switch, `other` may come to wait for it, though no single
    /// state of the program has a cycle (`p` = flag ? 0 : `s` + 1 and `s` = flag ? `p` : base:
    /// this thread checks `p` and waits for `s`; flag turns true; `other` computes `s` and reads
    /// `p`). Such a circle of waits is no cycle: this thread leaves it.
    @usableFromInline
    static func wait(
        for node: any SyntheticNode, computedBy other: ObjectIdentifier, mayGiveUp: Bool
    ) -> WaitEnd {
        wait(for: node, mayGiveUp: mayGiveUp, isOwed: false)
    }

    /// `wait(for:computedBy:mayGiveUp:)`; `isOwed` for the wait a thread owes after it gave
    /// way, which ends (`finished`) if it closes a circle.
    private static func wait(for node: any SyntheticNode, mayGiveUp: Bool, isOwed: Bool)
        -> WaitEnd
    {
        let me = DependencyTracking.thisThread
        let progress = ThreadProgress.ofThisThread
        let waiting = Waiting(
            node: node, progress: progress, checks: mayGiveUp ? innermostChecks : [],
            mayLeaveCircle: progress.mayLeaveCircle, isOwed: isOwed)
        lock.withLock { waits[me] = waiting }
        TestHooks.tell(.wait, node)
        defer { _ = lock.withLock { waits.removeValue(forKey: me) } }
        var pauses = Pauses()
        // Pauses made while a circle was found that markings in flight may show to be none.
        var deferrals = Pauses()
        while let computing = node.computingThread, computing != me {
            var deferred = false
            TestHooks.tell(.check, node)
            if waiting.willGiveUp { return .gaveUp }
            if let chain = chainOfWaits(from: computing, to: me),
                let circle = circle(
                    me, waitingFor: node, computedBy: computing, through: chain,
                    mayDefer: !deferrals.areExhausted, deferred: &deferred)
            {
                switch circle {
                case .endOwedWait:
                    return .finished
                case .leave(let members, let wayTo):
                    taint(members, on: progress)
                    if let wayTo { DependencyTracking.oweWait(wayTo) }
                    return .leftCircle
                case .cycle(let names, let overtaken):
                    fatalError(
                        message(cycle: names) + " (The cycle spans threads.)"
                            + switchedDependencies(overtaken: overtaken))
                }
            }
            if deferred { deferrals.wait() } else { pauses.wait() }
        }
        return .finished
    }

    /// Whether a check open on this thread inside its innermost evaluation was overtaken (see
    /// `wait(for:computedBy:mayGiveUp:)`).
    @usableFromInline
    static func anInnermostCheckWasOvertaken() -> Bool {
        innermostChecks.contains { $0.checkWasOvertaken }
    }

    /// The properties this thread checks inside its innermost evaluation, innermost first (see
    /// `ThreadProgress.innermostChecks`).
    private static var innermostChecks: [any SyntheticNode] {
        ThreadProgress.ofThisThread.innermostChecks.compactMap { $0 as? any SyntheticNode }
    }

    /// A thread in a chain of waits, and the property it waits for.
    private typealias Link = (thread: ObjectIdentifier, node: any SyntheticNode)

    /// If `thread` waits, directly or through other threads, for a property that `target`
    /// computes: the threads along the way and the properties they wait for. Read one link at a
    /// time, so the links may be from different moments (see `cycle(_:waitingFor:computedBy:through:)`).
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
            TestHooks.tell(.link, waited)
            if next == target { return chain }
            current = next
        }
        return nil
    }

    /// A circle of waits, as `me` finds it.
    private enum Circle {
        /// `me` leaves it (see `wait(for:computedBy:mayGiveUp:)`), tainting what it computes
        /// and checks in it, `members` (outermost first); if it gives way, the wait it owes
        /// before it computes again.
        case leave(members: [any SyntheticNode], givingWay: WayToGive?)
        /// `me` ends the wait it owes after it gave way (see `waitAfterGivingWay(mayGiveUp:)`):
        /// it is no dependency.
        case endOwedWait
        /// A cycle: the names of its properties, and of those of them that were overtaken.
        case cycle(names: [String], overtaken: [String])
    }

    /// If `me`, waiting for `node`, which `computing` computes, and the threads of `chain` wait
    /// for each other in a circle now, and none of them will stop waiting (see
    /// `wait(for:computedBy:mayGiveUp:)`): whether `me` leaves it, or else, if no other
    /// thread of it will, the cycle, unless another thread of it reported it. Every link is read
    /// again in one critical section of `lock`.
    ///
    /// That is a snapshot. While `lock` is held no thread starts or stops waiting (both take
    /// it), and a thread that waits computes nothing new and finishes nothing, so what each
    /// thread of the circle computes cannot change while its links are read. A chain read one
    /// link at a time is not: a thread may have finished the property it was read to compute,
    /// and then waited for another. (A check may be overtaken just after it was read not to be:
    /// the circle was a deadlock when it was read, which only a later change could have
    /// broken.)
    ///
    /// The names follow the circle: from `node`, through each thread's properties from the one
    /// the previous thread waits for (which it computes), to `node` again.
    private static func circle(
        _ me: ObjectIdentifier, waitingFor node: any SyntheticNode,
        computedBy computing: ObjectIdentifier, through chain: [Link], mayDefer: Bool,
        deferred: inout Bool
    ) -> Circle? {
        // Loaded first: a marking that ended before is seen in the properties' states.
        let inFlight = markingsInFlight.load(ordering: .sequentiallyConsistent) != 0
        return lock.withLock { () -> Circle? in
            // A thread that will stop waiting breaks the circle.
            guard !reported, let mine = waits[me], mine.node === node, !mine.willGiveUp,
                node.computingThread == computing
            else { return nil }
            var expected = computing
            var members: [any SyntheticNode] = []
            var from = node
            // Whether a thread of the circle other than `me` leaves it.
            var anotherLeaves = false
            // The least of the other threads that may give way (see `wait`).
            var otherGivingWay: ObjectIdentifier?
            // Whether another thread of the circle makes the wait it owes after giving way.
            var anotherOwes = false
            for link in chain {
                guard link.thread == expected, let waiting = waits[link.thread],
                    waiting.node === link.node, !waiting.willGiveUp,
                    let next = link.node.computingThread
                else { return nil }
                anotherOwes = anotherOwes || waiting.isOwed
                let its = Self.members(of: waiting.progress.dependents, from: from)
                anotherLeaves = anotherLeaves || leaves(waiting, computing: its)
                if mayGiveWay(waiting, from: from) {
                    otherGivingWay = min(otherGivingWay ?? link.thread, link.thread)
                }
                members += its
                from = link.node
                expected = next
            }
            guard expected == me else { return nil }
            // A wait owed after giving way is no dependency: it ends, and breaks the circle.
            if mine.isOwed { return .endOwedWait }
            if anotherOwes { return nil }
            let mineInCircle = Self.members(of: mine.progress.dependents, from: from)
            if leaves(mine, computing: mineInCircle) {
                return .leave(members: mineInCircle, givingWay: nil)
            }
            // That thread leaves it when it next looks.
            if anotherLeaves { return nil }
            // A marking in flight may yet show an evaluation of it overtaken (see `leave`).
            if mayDefer, inFlight {
                deferred = true
                return nil
            }
            // No thread may leave, though the circle passes through an overtaken property: the
            // threads that compute or check those wait for properties without a value. One
            // that may leave gives way (the least, so that the threads agree).
            if (members + mineInCircle).contains(where: \.wasOvertaken) {
                if mayGiveWay(mine, from: from), otherGivingWay.map({ me < $0 }) ?? true {
                    return .leave(
                        members: mineInCircle,
                        givingWay: WayToGive(node: node, givenUp: mineInCircle[0]))
                }
                if otherGivingWay != nil { return nil }
            }
            reported = true
            members += mineInCircle
            let overtaken = members.filter(\.wasOvertaken).map(\.nodeName)
            return .cycle(names: (members + [node]).map(\.nodeName), overtaken: overtaken)
        }
    }

    /// Whether a thread of a circle of waits, `waiting`, which computes or checks `members` of
    /// it, leaves it (see `wait(for:computedBy:mayGiveUp:)`).
    private static func leaves(_ waiting: Waiting, computing members: [any SyntheticNode]) -> Bool {
        mayLeave(waiting) && members.contains(where: \.wasOvertaken)
    }

    /// Whether a thread of a circle of waits, `waiting`, may leave it: it may leave another
    /// circle, and the property it waits for has a value to read instead.
    private static func mayLeave(_ waiting: Waiting) -> Bool {
        waiting.mayLeaveCircle && waiting.node.hasValue
    }

    /// Whether a thread of a circle of waits, `waiting`, may give way in it (see
    /// `wait(for:computedBy:mayGiveUp:)`): it may leave it, and it can let go of `start`, the
    /// property the previous thread of the circle waits for, which it computes or checks. Not
    /// if it computes `start` inside its own check of it: the check holds it until it ends.
    private static func mayGiveWay(_ waiting: Waiting, from start: any SyntheticNode) -> Bool {
        guard mayLeave(waiting) else { return false }
        let properties = waiting.progress.dependents
        return properties.firstIndex(where: { $0 === start })
            == properties.lastIndex(where: { $0 === start })
    }

    /// The wait a thread that gave way in a circle of waits owes (see
    /// `wait(for:computedBy:mayGiveUp:)`): for `node`, before it computes `givenUp` again, the
    /// outermost property it computed or checked in the circle.
    final class WayToGive {
        let node: any SyntheticNode
        let givenUp: any SyntheticNode

        init(node: any SyntheticNode, givenUp: any SyntheticNode) {
            self.node = node
            self.givenUp = givenUp
        }
    }

    /// Whether this thread (`thread`) owes a wait before it computes `property` again: it gave
    /// way in a circle of waits where `property` was the outermost it computed or checked (see
    /// `wait(for:computedBy:mayGiveUp:)`). (Another property's retry does not make the wait: it
    /// may be inside that one, which the thread still holds.)
    @usableFromInline
    static func owesWait(givingUp property: any SyntheticNode, on thread: ObjectIdentifier) -> Bool
    {
        guard DependencyTracking.owesWait(on: thread), let owed = DependencyTracking.owedWait()
        else { return false }
        return unsafeDowncast(owed, to: WayToGive.self).givenUp === property
    }

    /// Makes the wait this thread owes (see `owesWait(givingUp:on:)`), once it let go of the
    /// property it gave up. Returns false if it stopped waiting because `mayGiveUp` and a check
    /// open on the thread was overtaken.
    @usableFromInline
    static func waitAfterGivingWay(mayGiveUp: Bool) -> Bool {
        guard let owed = DependencyTracking.takeOwedWait() else { return true }
        let way = unsafeDowncast(owed, to: WayToGive.self)
        return wait(for: way.node, mayGiveUp: mayGiveUp, isOwed: true) != .gaveUp
    }
}
