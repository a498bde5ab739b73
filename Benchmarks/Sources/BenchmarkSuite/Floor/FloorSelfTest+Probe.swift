extension FloorSelfTest {
    /// What a one-thread case's function needs beside what it reads: the graph it runs on, to
    /// write (set once the graph is made), and whether it ran.
    final class Probe {
        /// The graph (not retained: the graph's node 0 holds the probe).
        weak var graph: FloorGraph?
        /// Whether the case's function has not run yet (the function clears it).
        var firstEvaluation = true

        /// The graph of a one-thread case, with this probe set to it: variables x (source 0)
        /// and y (source 1); node 0 computed by `compute` (given the probe and a reader); node 1
        /// ten times node 0; node 2 y's value.
        func graph(_ compute: @escaping (Probe, (W13Ref) -> Int) -> Int) -> FloorGraph {
            let shape = W13Shape(
                name: "selftest-probe", summary: "a one-thread case of the floor's self-test",
                sources: 2,
                nodes: [
                    W13Node(inputs: [.source(0), .source(1)]) { compute(self, $0) },
                    W13Node(inputs: [.node(0)]) { $0(.node(0)) &* 10 },
                    W13Node(inputs: [.source(1)]) { $0(.source(1)) },
                ],
                effects: [], writes: [], expectedRuns: 0, finalCheck: (node: 0, value: 0))
            let made = FloorGraph(shape)
            graph = made
            return made
        }
    }
}
