extension FloorSelfTest {
    /// The names of the diamond's computed properties, in the order of its nodes.
    static let diamondNames = ["left", "right", "bottom", "repeated", "switching"]

    /// The self-test's graph: three variables a, b and c (sources 0 to 2), `left` and `right`
    /// reading them, `bottom` reading both (a diamond), `repeated` reading a ten times in a row,
    /// and `switching`, whose sources switch with a's parity (its value does not: it is
    /// `bottom`'s). Every property grows with each variable.
    ///
    /// A W13 shape, so that it runs on ``FloorGraph``, the owner type of the timed W13 rows: an
    /// owner type of its own would add specializations of the engine's generic code, which the
    /// optimizer then merges behind thunks, costing the timed rows a few percent of their
    /// instructions.
    static let diamond = W13Shape(
        name: "selftest-diamond", summary: "the floor's self-test", sources: 3,
        nodes: [
            W13Node(inputs: [.source(0), .source(1)]) { $0(.source(0)) &+ $0(.source(1)) },
            W13Node(inputs: [.source(0), .source(2)]) { $0(.source(0)) &* 2 &+ $0(.source(2)) },
            W13Node(inputs: [.node(0), .node(1)]) { $0(.node(0)) &+ $0(.node(1)) },
            W13Node(inputs: [.source(0), .node(2)]) { read in
                (0..<10).reduce(0) { total, _ in total &+ read(.source(0)) } &+ read(.node(2))
            },
            W13Node(inputs: [.source(0), .node(0), .node(1), .node(2)]) { read in
                read(.source(0)) % 2 == 0 ? read(.node(2)) : read(.node(0)) &+ read(.node(1))
            },
        ],
        effects: [], writes: [], expectedRuns: 0, finalCheck: (node: 0, value: 0))

    /// What the diamond's properties must be for variables `a`, `b` and `c`, computed without
    /// the engine.
    static func diamondValues(a: Int, b: Int, c: Int) -> [Int] {
        let left = a &+ b
        let right = a &* 2 &+ c
        let bottom = left &+ right
        return [left, right, bottom, a &* 10 &+ bottom, bottom]
    }
}
