import Foundation
import Synchronization

/// `herald-benchmarks --floor-selftest`: checks the floor engine (``FloorEngine``), so that the
/// figures `--floor` prints are those of an engine that gives right answers.
///
/// - Three cases run on one thread, each for a rule whose breaking gives a wrong answer: a
///   change during an evaluation reaches what read the value being computed; a handler is told
///   only current values; a write inside an evaluation is told when the read ends.
/// - Then several threads, for a fixed number of iterations each, write the variables of a
///   diamond (``diamond``), read its computed properties and observe them; at the end each
///   value must equal a recomputation from the variables, and each observer must have been
///   told the final value. Delivery order between threads is not kept (the floor leaves it
///   out: two threads may run one handler at once, in either order), so each thread writes its
///   own variable with growing values, every property grows with them, and the check is on
///   the largest value told.
///
/// Built with `swift build --sanitize=thread`, it also lets the thread sanitizer look for races.
enum FloorSelfTest {
    /// Writes per writer thread.
    static let iterations = 50_000
    /// Reader threads, beside one writer thread per variable.
    static let readers = 2

    /// Runs every check, prints what failed, and returns whether all passed.
    static func run() -> Bool {
        var failures: [String] = []
        failures += changeDuringAnEvaluationReachesItsReaders()
        failures += onlyCurrentValuesAreTold()
        failures += writeInsideAnEvaluationIsToldWhenTheReadEnds()
        failures += concurrentDiamond()
        for failure in failures { print("FAIL: \(failure)") }
        print(
            failures.isEmpty
                ? "floor self-test passed (\(iterations) writes per thread)"
                : "floor self-test failed: \(failures.count) mismatches")
        return failures.isEmpty
    }

    /// A property whose evaluation changes what it read: the reader that asked for it is told
    /// that what it got may be stale, and computes again at its next read.
    static func changeDuringAnEvaluationReachesItsReaders() -> [String] {
        let graph = Probe().graph { probe, read in
            let value = read(.source(0))
            if probe.firstEvaluation {
                probe.firstEvaluation = false
                probe.graph?.write(0, value + 1)
            }
            return value
        }
        _ = graph.read(1)
        let value = graph.read(1)
        let expected = graph.sources[0].value &* 10
        return value == expected
            ? []
            : ["a change during an evaluation: its reader ends at \(value), not \(expected)"]
    }

    /// An observed property whose evaluation changes what it read: its handler is told only
    /// the value computed after that change.
    static func onlyCurrentValuesAreTold() -> [String] {
        let graph = Probe().graph { probe, read in
            let value = read(.source(0))
            if value == 1, probe.firstEvaluation {
                probe.firstEvaluation = false
                probe.graph?.write(0, 2)
            }
            return value
        }
        let told = Told()
        graph.nodes[0].observe { told.record($0) }
        graph.write(0, 1)
        return told.count == 1 && told.last == 2
            ? []
            : [
                "an overtaken evaluation: the handler was told \(told.count) times, last "
                    + "\(told.last) (once, 2 expected)"
            ]
    }

    /// A write inside an evaluation is told when the outermost read ends, not at the next write.
    static func writeInsideAnEvaluationIsToldWhenTheReadEnds() -> [String] {
        let graph = Probe().graph { probe, read in
            let value = read(.source(0))
            probe.graph?.write(1, value &* 10)
            return value
        }
        let told = Told()
        graph.nodes[2].observe { told.record($0) }
        graph.write(0, 3)
        _ = graph.read(0)
        return told.count == 1 && told.last == 30
            ? []
            : [
                "a write inside an evaluation: when the read ended, the handler was told "
                    + "\(told.count) times, last \(told.last) (once, 30 expected)"
            ]
    }

    /// Threads write, read and observe a diamond at once; the final values and the last told
    /// ones must be right.
    static func concurrentDiamond() -> [String] {
        // Shared by the threads: the engine's locks guard its state, and the graph's arrays are
        // not changed once made.
        nonisolated(unsafe) let graph = FloorGraph(diamond)
        let nodes = graph.nodes.count
        let told = graph.nodes.map { _ in Told() }
        for (node, record) in zip(graph.nodes, told) {
            node.observe { record.record($0) }
        }
        let variables = graph.sources.count
        let threads = variables + readers
        let gate = Gate()
        let iterations = iterations
        for index in 0..<threads {
            let thread = Thread {
                gate.arriveAndWait(for: threads)
                if index < variables {
                    // Each writer writes its own variable, with growing values.
                    for value in 1...iterations {
                        graph.write(index, value)
                        if value % 4 == index { _ = graph.read(value % nodes) }
                    }
                } else {
                    for step in 0..<(iterations * 2) {
                        _ = graph.read((step &+ index) % nodes)
                        _ = graph.sources[step % variables].value
                    }
                }
                gate.leave()
            }
            thread.start()
        }
        gate.waitUntilLeft(by: threads)

        var failures: [String] = []
        let expected = diamondValues(
            a: graph.sources[0].value, b: graph.sources[1].value, c: graph.sources[2].value)
        for index in 0..<nodes {
            let name = diamondNames[index]
            let value = graph.read(index)
            if value != expected[index] {
                failures.append("diamond: \(name) ends at \(value), recomputed \(expected[index])")
            }
            let largest = told[index].largest
            if largest != expected[index] {
                failures.append(
                    "diamond: \(name)'s observer was last told \(largest), not \(expected[index]) "
                        + "(\(told[index].count) times)")
            }
        }
        return failures
    }
}
