import Transforms

/// A synthetic property seen without its value type: what the dependency graph, the frames and
/// the debugging tools need of it.
protocol SyntheticNode: AnyObject, Dependent, DependencySource, PropagationWork {
    /// Marks the property (`invalid` or `mayBeStale`) and returns what to tell next.
    func mark(_ level: Freshness) -> SyntheticMarkResult
    /// Refreshes the value if it may be stale and returns its version.
    func refreshedVersion() -> UInt64
    /// A name for messages: `Type.property` where known.
    var nodeName: String { get }
    /// The thread computing the value, if one is.
    var computingThread: ObjectIdentifier? { get }
}

/// What marking one property leaves to do.
struct SyntheticMarkResult {
    var dependents: DependentList?
    var enqueue: Bool
}

enum SyntheticGraph {
    /// Marks `node` with `level` and everything downstream of it may-be-stale, without
    /// recursion; queues the observed ones for propagation. Nothing is computed.
    static func invalidate(_ node: any SyntheticNode, _ level: Freshness) {
        var work: [(any SyntheticNode, Freshness)] = [(node, level)]
        while let (next, level) = work.popLast() {
            let result = next.mark(level)
            if result.enqueue { DependencyTracking.enqueue(next) }
            guard let dependents = result.dependents else { continue }
            for entry in dependents.entries {
                if let dependent = entry.reference as? any SyntheticNode {
                    work.append((dependent, .mayBeStale))
                }
            }
        }
    }
}

/// The evaluation of one synthetic property on this thread: records what it reads, keeping the
/// subscriptions it had to sources it reads again and subscribing (before the read) to new ones.
final class SyntheticFrame: EvaluationFrame {
    unowned let node: any SyntheticNode
    private let previous: [SourceLink]
    private var reused: [Bool]
    private var cursor = 0
    private(set) var sources: [SourceLink] = []
    /// The index in `sources` of the last source recorded.
    private var lastRecorded = -1

    init(node: any SyntheticNode, previous: [SourceLink]) {
        self.node = node
        self.previous = previous
        reused = Array(repeating: false, count: previous.count)
        sources.reserveCapacity(previous.count)
    }

    func recordRead(of source: any DependencySource) {
        record(source, node: nil)
    }

    /// Records a read of `source` (`node` if it is a synthetic property).
    func record(_ source: any DependencySource, node sourceNode: (any SyntheticNode)?) {
        let identity = ObjectIdentifier(source)
        // The same source again (a property read several times in a row).
        if lastRecorded >= 0, sources[lastRecorded].identity == identity { return }
        // The next source the previous evaluation read: the common case.
        if cursor < previous.count, !reused[cursor], previous[cursor].identity == identity {
            reused[cursor] = true
            cursor += 1
            append(previous[cursor - 1])
            return
        }
        if let index = sources.firstIndex(where: { $0.identity == identity }) {
            lastRecorded = index
            return
        }
        if let index = previous.indices.first(where: {
            !reused[$0] && previous[$0].identity == identity
        }) {
            reused[index] = true
            append(previous[index])
            return
        }
        source.addDependent(node)
        append(SourceLink(source: source, node: sourceNode, version: 0))
    }

    /// Records the version the source recorded last had when it was read.
    func recordVersion(_ version: UInt64) {
        if lastRecorded >= 0 { sources[lastRecorded].version = version }
    }

    private func append(_ link: SourceLink) {
        sources.append(link)
        lastRecorded = sources.count - 1
    }
}
