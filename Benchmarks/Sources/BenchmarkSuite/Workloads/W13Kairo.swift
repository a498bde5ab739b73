import KeyPathBridge
import Observation
import OpenCombine

/// W13: the "kairo" cases of the public js-reactivity-benchmark (milomg), ported. A *source* is
/// a variable, a *derived* value a synthetic property, an *effect* an observer of a derived
/// value that reads it. Each case is built once per trial; a trial runs the case's writes
/// `W13.repetitions` times (each repetition first writes its `prepare` values, uncounted, then
/// the counted writes); the checksum is the number of effect runs during the counted writes,
/// which the report checks against the exact count. Herald and RAW must be exact: a wrong count
/// (or a wrong final value) stops the run. Observation and OpenCombine report what they ran:
/// Observation caches nothing and cannot stop at an unchanged value; OpenCombine sends once per
/// path a write takes (glitches).
func w13Kairo(_ shape: W13Shape) -> Workload {
    let writesPerRepetition = shape.prepare.count + shape.writes.count
    return Workload(
        id: "W13-" + shape.name, summary: shape.summary,
        operations: W13.repetitions * writesPerRepetition, unit: "write",
        targets: [
            .time(atMost: 3, of: .raw), .time(atMost: 0.5, of: .observation),
            .time(atMost: 0.5, of: .openCombine),
        ],
        notifications: W13.repetitions * shape.expectedRuns,
        cases: [
            Case(.raw) { W13.trial(shape, RawGraph(shape), exact: "RAW") },
            Case(.herald) { W13.trial(shape, HeraldGraph(shape), exact: "Herald") },
            Case(.openCombine) { W13.trial(shape, CombineGraph(shape), exact: nil) },
            Case(.observation) { W13.trial(shape, ObservedGraph(shape), exact: nil) },
        ])
}

/// One system's build of a W13 shape.
protocol W13System: AnyObject {
    /// Effect runs so far.
    var runs: Int { get }
    func write(_ source: Int, _ value: Int)
    /// The current value of node `index` (read outside any effect).
    func read(_ index: Int) -> Int
    /// Keeps the effects alive until the trial ends.
    func keepAlive()
}

/// Where a derived value reads: a source or another derived value.
enum W13Ref {
    case source(Int)
    case node(Int)
}

/// A derived value: what it may read (all of it, for systems with static dependencies) and how
/// it computes, given a reader (which systems with automatic dependencies track).
struct W13Node: @unchecked Sendable {
    let inputs: [W13Ref]
    let compute: (_ read: (W13Ref) -> Int) -> Int
}

/// A W13 case: its graph, writes and the exact counts.
struct W13Shape: @unchecked Sendable {  // immutable; used on the benchmark's one thread
    let name: String
    let summary: String
    var sources = 1
    let nodes: [W13Node]
    /// The nodes that have an effect each.
    let effects: [Int]
    /// Whether an effect also runs `busy()`.
    var busyEffects = false
    /// Written first in each repetition, uncounted (the benchmark's "write 1").
    var prepare: [(source: Int, value: Int)] = [(0, 1)]
    let writes: [(source: Int, value: Int)]
    /// Effect runs during one repetition's counted writes.
    let expectedRuns: Int
    /// The value node `node` must have at the end.
    let finalCheck: (node: Int, value: Int)
}

enum W13 {
    static let repetitions = 20

    /// A 100-step loop whose result the optimizer cannot drop.
    @inline(never)
    static func busy() -> Int {
        var total = 0
        for step in 0..<100 { total = total &+ step &* 7 }
        return total & 0
    }

    static func trial(_ shape: W13Shape, _ system: any W13System, exact: String?) -> () -> Int {
        {
            var counted = 0
            for _ in 0..<repetitions {
                for write in shape.prepare { system.write(write.source, write.value) }
                let before = system.runs
                for write in shape.writes { system.write(write.source, write.value) }
                counted += system.runs - before
            }
            system.keepAlive()
            if let exact {
                let value = system.read(shape.finalCheck.node)
                guard counted == repetitions * shape.expectedRuns, value == shape.finalCheck.value
                else {
                    fatalError(
                        "W13-\(shape.name): \(exact) ran effects \(counted) times (exactly "
                            + "\(repetitions * shape.expectedRuns) expected) and ends at \(value) "
                            + "(\(shape.finalCheck.value) expected)")
                }
            }
            return counted
        }
    }

    static func all() -> [W13Shape] {
        [avoidable, broad, deep, diamond, triangle, mux, repeated, unstable]
    }

    static let avoidable = W13Shape(
        name: "avoidable", summary: "kairo avoidable propagation (effect runs)",
        nodes: [
            W13Node(inputs: [.source(0)]) { $0(.source(0)) },
            W13Node(inputs: [.node(0)]) { read in
                _ = read(.node(0))
                return 0
            },
            W13Node(inputs: [.node(1)]) { busy() + $0(.node(1)) + 1 },
            W13Node(inputs: [.node(2)]) { $0(.node(2)) + 2 },
            W13Node(inputs: [.node(3)]) { $0(.node(3)) + 3 },
        ],
        effects: [4], busyEffects: true, writes: (0..<1000).map { (0, $0) }, expectedRuns: 0,
        finalCheck: (4, 6))

    static let broad = W13Shape(
        name: "broad", summary: "kairo broad propagation (effect runs)",
        nodes: (0..<50).flatMap { i in
            [
                W13Node(inputs: [.source(0)]) { $0(.source(0)) + i },
                W13Node(inputs: [.node(2 * i)]) { $0(.node(2 * i)) + 1 },
            ]
        },
        effects: (0..<50).map { 2 * $0 + 1 }, writes: (0..<50).map { (0, $0) },
        expectedRuns: 50 * 50, finalCheck: (99, 49 + 50))

    static let deep = W13Shape(
        name: "deep", summary: "kairo deep propagation (effect runs)",
        nodes: (0..<50).map { i in
            let input: W13Ref = i == 0 ? .source(0) : .node(i - 1)
            return W13Node(inputs: [input]) { $0(input) + 1 }
        },
        effects: [49], writes: (0..<50).map { (0, $0) }, expectedRuns: 50,
        finalCheck: (49, 49 + 50))

    static let diamond = W13Shape(
        name: "diamond", summary: "kairo diamond (effect runs)",
        nodes: (0..<5).map { _ in W13Node(inputs: [.source(0)]) { $0(.source(0)) + 1 } }
            + [
                W13Node(inputs: (0..<5).map { .node($0) }) { read in
                    (0..<5).reduce(0) { $0 + read(.node($1)) }
                }
            ],
        effects: [5], writes: (0..<500).map { (0, $0) }, expectedRuns: 500,
        finalCheck: (5, 5 * 500))

    static let triangle = W13Shape(
        name: "triangle", summary: "kairo triangle (effect runs)",
        nodes: (0..<10).map { i in
            let input: W13Ref = i == 0 ? .source(0) : .node(i - 1)
            return W13Node(inputs: [input]) { $0(input) + (i == 0 ? 0 : 1) }
        }
            + [
                W13Node(inputs: (0..<10).map { .node($0) }) { read in
                    (0..<10).reduce(0) { $0 + read(.node($1)) }
                }
            ],
        effects: [10], writes: (0..<100).map { (0, $0) }, expectedRuns: 100,
        finalCheck: (10, 10 * 99 + 45))

    /// 100 sources → one derived table of all their values → 100 derived (one entry each) →
    /// 100 derived (+1) → 100 effects. Every value here is an `Int`, so the table is a hash of
    /// all the sources (it changes whenever one does), and entry `i` reads the table, then
    /// source `i`: each write still recomputes the table and all 100 entries, and changes one.
    static let mux = W13Shape(
        name: "mux", summary: "kairo mux (effect runs)", sources: 100,
        nodes: [
            // Node 0, the table: reads every source; its value changes when any does.
            W13Node(inputs: (0..<100).map { .source($0) }) { read in
                (0..<100).reduce(0) { $0 &* 31 &+ read(.source($1)) }
            }
        ]
            + (0..<100).map { i in
                // Nodes 1…100: entry i of the table.
                W13Node(inputs: [.node(0), .source(i)]) { read in
                    _ = read(.node(0))
                    return read(.source(i))
                }
            }
            + (0..<100).map { i in W13Node(inputs: [.node(1 + i)]) { $0(.node(1 + i)) + 1 } },
        effects: (0..<100).map { 101 + $0 }, prepare: [],
        writes: (0..<10).map { ($0, $0) } + (0..<10).map { ($0, $0 * 2) }, expectedRuns: 18,
        finalCheck: (101 + 9, 9 * 2 + 1))

    static let repeated = W13Shape(
        name: "repeated", summary: "kairo repeated observers (effect runs)",
        nodes: [
            W13Node(inputs: [.source(0)]) { read in
                (0..<30).reduce(0) { total, _ in total + read(.source(0)) }
            }
        ],
        effects: [0], writes: (0..<100).map { (0, $0) }, expectedRuns: 100,
        finalCheck: (0, 30 * 99))

    static let unstable = W13Shape(
        name: "unstable", summary: "kairo unstable (effect runs)",
        nodes: [
            W13Node(inputs: [.source(0)]) { $0(.source(0)) * 2 },
            W13Node(inputs: [.source(0)]) { -$0(.source(0)) },
            W13Node(inputs: [.source(0), .node(0), .node(1)]) { read in
                (0..<20).reduce(0) { total, _ in
                    total + (read(.source(0)) % 2 == 1 ? read(.node(0)) : read(.node(1)))
                }
            },
        ],
        effects: [2], writes: (0..<100).map { (0, $0) }, expectedRuns: 100,
        finalCheck: (2, 20 * 198))
}
