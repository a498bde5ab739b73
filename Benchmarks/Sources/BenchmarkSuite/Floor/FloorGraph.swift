/// A W13 shape on the floor engine: variables, computed properties, effects as handlers (as
/// Herald's `HeraldGraph`).
final class FloorGraph: W13System {
    /// The shape's sources.
    let sources: [FloorVariable<Int>]
    /// The shape's derived values.
    let nodes: [FloorComputed<FloorGraph, Int>]
    /// Counts the effect runs.
    let counter = Counter()
    /// Effect runs so far.
    var runs: Int { counter.value }

    /// The graph of `shape`, its effects observing, their first runs not counted.
    init(_ shape: W13Shape) {
        sources = (0..<shape.sources).map { _ in FloorVariable(0) }
        nodes = shape.nodes.map { node in
            let compute = node.compute
            return FloorComputed { graph in
                compute { ref in
                    switch ref {
                    case .source(let source): graph.sources[source].value
                    case .node(let other): graph.nodes[other].value
                    }
                }
            }
        }
        for node in nodes { node.bind(to: self) }
        let counter = counter
        let busy = shape.busyEffects
        for effect in shape.effects {
            nodes[effect].observe { _ in
                counter.value &+= 1
                if busy { _ = W13.busy() }
            }
        }
        counter.value = 0
    }

    /// Sets source `source` to `value`.
    func write(_ source: Int, _ value: Int) { sources[source].value = value }
    /// The value of node `index`.
    func read(_ index: Int) -> Int { nodes[index].value }
    /// Nothing to keep: the handlers live as long as the graph.
    func keepAlive() {}
}
