import Messaging
import Transforms

/// Cycles among synthetic properties: a thread that re-enters a property it is checking or
/// computing, which nothing invalidated or set meanwhile (see
/// `Synthetic.reenter(version:)`), and a function that writes what it read. Both stop the
/// process, from the thread that closed the cycle, naming it. Nothing else does: threads wait
/// for each other only when they hold nothing, so no circle of waits can form.
@usableFromInline
enum SyntheticCycle {
    /// The message for a cycle: the names of its properties in order, the first again at the
    /// end.
    static func message(cycle names: [String]) -> String {
        "Herald: synthetic property cycle: " + names.joined(separator: " → ")
            + ". A synthetic property's value depends on itself; its computation must not read "
            + "it, directly or through other synthetic properties."
    }

    /// Stops the process with the cycle that closes at `node` on this thread: what the thread
    /// checks and computes from `node`'s outermost work on, then `node` again.
    @usableFromInline
    static func report(closingAt node: any SyntheticNode) -> Never {
        fatalError(message(cycle: (members(from: node) + [node]).map(\.nodeName)))
    }

    /// The message for a function that writes, during its evaluation, what it read: the
    /// property (`name`) and the source it wrote (`source`).
    static func message(writing source: String, readBy name: String) -> String {
        "Herald: synthetic property cycle: \(name) changed \(source), which its evaluation read. "
            + "A synthetic property's function must not change what it reads: each change "
            + "would invalidate the value being computed."
    }

    /// Stops the process: the evaluation of `node` open on this thread wrote a source it read,
    /// `source`.
    static func reportWrite(of source: String, readBy node: any SyntheticNode) -> Never {
        fatalError(message(writing: source, readBy: node.nodeName))
    }

    /// The properties this thread checks and computes, outermost first, from its outermost
    /// work on `start` on (only `start` if there is none).
    private static func members(from start: any SyntheticNode) -> [any SyntheticNode] {
        let work = DependencyTracking.workOfThisThread
        guard let index = work.firstIndex(where: { $0.isOn(start) }) else { return [start] }
        return work[index...].compactMap { $0.node.takeUnretainedValue() as? any SyntheticNode }
    }
}
