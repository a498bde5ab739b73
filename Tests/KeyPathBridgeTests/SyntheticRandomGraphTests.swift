import HeraldTestSupport
import Testing

@testable import KeyPathBridge

/// Random graphs of variables and synthetic properties, checked against recomputing everything
/// from scratch after each write.
@Suite("Synthetic properties: seeded random graphs")
struct SyntheticRandomGraphTests {
    /// Where a node reads a value.
    enum Input {
        case variable(Int)
        case node(Int)
    }

    /// What a node computes.
    enum Shape {
        /// The sum of its inputs, plus its index (diamonds and chains arise from shared inputs).
        case sum([Input])
        /// One of two inputs, chosen by whether a third is even (dependencies change).
        case branch(condition: Input, even: Input, odd: Input)
    }

    final class Graph {
        var variables: [Variable<Int>] = []
        var nodes: [Synthetic<Graph, Int>] = []
        var shapes: [Shape] = []

        func read(_ input: Input) -> Int {
            switch input {
            case .variable(let index): variables[index].value
            case .node(let index): nodes[index].value
            }
        }

        func compute(_ index: Int) -> Int {
            switch shapes[index] {
            case .sum(let inputs): inputs.reduce(index) { $0 + read($1) }
            case .branch(let condition, let even, let odd):
                read(condition) % 2 == 0 ? read(even) : read(odd)
            }
        }

        /// Every node's value computed from the variables' values alone.
        func fromScratch() -> [Int] {
            var values: [Int] = []
            func value(_ input: Input) -> Int {
                switch input {
                case .variable(let index): variables[index].value
                case .node(let index): values[index]
                }
            }
            for shape in shapes {
                let index = values.count
                switch shape {
                case .sum(let inputs): values.append(inputs.reduce(index) { $0 + value($1) })
                case .branch(let condition, let even, let odd):
                    values.append(value(condition) % 2 == 0 ? value(even) : value(odd))
                }
            }
            return values
        }
    }

    static func makeGraph(_ random: inout SeededGenerator) -> Graph {
        let graph = Graph()
        let variableCount = Int.random(in: 2...6, using: &random)
        graph.variables = (0..<variableCount).map { _ in
            Variable(Int.random(in: 0..<4, using: &random))
        }
        let nodeCount = Int.random(in: 3...14, using: &random)
        for index in 0..<nodeCount {
            func input() -> Input {
                if index > 0, Bool.random(using: &random) {
                    return .node(Int.random(in: 0..<index, using: &random))
                }
                return .variable(Int.random(in: 0..<variableCount, using: &random))
            }
            if Int.random(in: 0..<3, using: &random) == 0 {
                graph.shapes.append(.branch(condition: input(), even: input(), odd: input()))
            } else {
                graph.shapes.append(
                    .sum((0..<Int.random(in: 1...3, using: &random)).map { _ in input() }))
            }
            graph.nodes.append(Synthetic(owner: graph, name: "n\(index)") { $0.compute(index) })
        }
        return graph
    }

    @Test(
        "random graphs: every value as from scratch, at most one computation per write, observers see no mix",
        arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func randomGraph(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        for _ in 0..<10 {
            let graph = Self.makeGraph(&random)
            let observer = TestObserver()
            let mixes = Recording<String>()
            var observed: [Int] = []
            for index in graph.nodes.indices where Int.random(in: 0..<3, using: &random) == 0 {
                observed.append(index)
                observer.observe(graph.nodes[index]) { update in
                    let expected = graph.fromScratch()[index]
                    if update.new != expected {
                        mixes.append("n\(index): \(update.new) ≠ \(expected)")
                    }
                }
            }
            var counts = graph.nodes.map(\.evaluationCount)
            var writesSinceRead = 0
            for _ in 0..<60 {
                let variable = Int.random(in: 0..<graph.variables.count, using: &random)
                graph.variables[variable].value = Int.random(in: 0..<4, using: &random)
                writesSinceRead += 1
                // Observed nodes are up to date at once, without being read.
                let expected = graph.fromScratch()
                for index in observed {
                    #expect(graph.nodes[index].isValid, "observed n\(index) is valid")
                }
                guard Bool.random(using: &random) else { continue }
                for index in graph.nodes.indices {
                    #expect(graph.nodes[index].value == expected[index], "n\(index), seed \(seed)")
                    let ran = graph.nodes[index].evaluationCount - counts[index]
                    #expect(ran <= writesSinceRead, "n\(index) ran \(ran) times, seed \(seed)")
                }
                counts = graph.nodes.map(\.evaluationCount)
                writesSinceRead = 0
            }
            #expect(mixes.elements.isEmpty, "seed \(seed)")
        }
    }
}
