import KeyPathBridge
import Observation
import OpenCombine

/// RAW for W13: the graph wired by hand with static inputs, dirty flags pushed down on a write
/// (invalid for direct dependents, check for the rest), values pulled by the effects with a
/// version per node so that an unchanged value stops there. The least a correct system does.
final class RawGraph: W13System {
    private let shape: W13Shape
    private var sources: [Int]
    private var values: [Int]
    private var versions: [Int]
    /// 0 valid, 1 check, 2 invalid.
    private var states: [UInt8]
    /// The versions of each node's node inputs when it last computed.
    private var seen: [[Int]]
    private var sourceDependents: [[Int]]
    private var nodeDependents: [[Int]]
    private var effectVersions: [Int]
    private(set) var runs = 0

    init(_ shape: W13Shape) {
        self.shape = shape
        sources = Array(repeating: 0, count: shape.sources)
        values = Array(repeating: 0, count: shape.nodes.count)
        versions = Array(repeating: 0, count: shape.nodes.count)
        states = Array(repeating: 2, count: shape.nodes.count)
        seen = shape.nodes.map { Array(repeating: -1, count: $0.inputs.count) }
        sourceDependents = Array(repeating: [], count: shape.sources)
        nodeDependents = Array(repeating: [], count: shape.nodes.count)
        for (index, node) in shape.nodes.enumerated() {
            for input in node.inputs {
                switch input {
                case .source(let source): sourceDependents[source].append(index)
                case .node(let other): nodeDependents[other].append(index)
                }
            }
        }
        effectVersions = Array(repeating: -1, count: shape.effects.count)
        runEffects()
        runs = 0
    }

    func write(_ source: Int, _ value: Int) {
        guard sources[source] != value else { return }
        sources[source] = value
        for node in sourceDependents[source] { mark(node, 2) }
        runEffects()
    }

    private func mark(_ node: Int, _ level: UInt8) {
        let was = states[node]
        if level > was { states[node] = level }
        guard was == 0 else { return }
        for dependent in nodeDependents[node] { mark(dependent, 1) }
    }

    private func refresh(_ node: Int) {
        if states[node] == 1 {
            states[node] = 0
            for (slot, input) in shape.nodes[node].inputs.enumerated() {
                guard case .node(let other) = input else { continue }
                refresh(other)
                if versions[other] != seen[node][slot] {
                    states[node] = 2
                    break
                }
            }
        }
        guard states[node] == 2 else { return }
        let value = shape.nodes[node].compute { ref in
            switch ref {
            case .source(let source): return self.sources[source]
            case .node(let other):
                self.refresh(other)
                return self.values[other]
            }
        }
        for (slot, input) in shape.nodes[node].inputs.enumerated() {
            if case .node(let other) = input { seen[node][slot] = versions[other] }
        }
        states[node] = 0
        if value != values[node] || versions[node] == 0 {
            values[node] = value
            versions[node] &+= 1
        }
    }

    private func runEffects() {
        for (slot, node) in shape.effects.enumerated() {
            refresh(node)
            if versions[node] != effectVersions[slot] {
                effectVersions[slot] = versions[node]
                runs += 1
                if shape.busyEffects { _ = W13.busy() }
            }
        }
    }

    func read(_ index: Int) -> Int {
        refresh(index)
        return values[index]
    }

    func keepAlive() {}
}

/// Herald for W13: variables and synthetic properties, effects as observers.
final class HeraldGraph: W13System {
    let sources: [Variable<Int>]
    /// Filled once, in `init` (a `var` only because each property is made with the graph as its
    /// owner). Read without exclusivity checks, as a `let` would be: the Observation peer reads
    /// a `let` array, and a check per read is about 6% of W13-deep's instructions.
    @exclusivity(unchecked) var nodes: [Synthetic<HeraldGraph, Int>] = []
    let observer = HeraldObserver()
    let counter = Counter()
    var runs: Int { counter.value }

    init(_ shape: W13Shape) {
        sources = (0..<shape.sources).map { _ in Variable(0) }
        for (index, node) in shape.nodes.enumerated() {
            let compute = node.compute
            nodes.append(
                Synthetic(owner: self, name: "n\(index)") { graph in
                    compute { ref in
                        switch ref {
                        case .source(let source): graph.sources[source].value
                        case .node(let other): graph.nodes[other].value
                        }
                    }
                })
        }
        let counter = counter
        let busy = shape.busyEffects
        for effect in shape.effects {
            let node = nodes[effect]
            observer.observe(node) { update in
                _ = update.new
                counter.value &+= 1
                if busy { _ = W13.busy() }
            }
        }
        counter.value = 0
    }

    func write(_ source: Int, _ value: Int) { sources[source].value = value }
    func read(_ index: Int) -> Int { nodes[index].value }
    func keepAlive() { withExtendedLifetime(observer) {} }
}

/// OpenCombine for W13: a subject per source; each derived value a `CombineLatest` of its
/// inputs (a `map` for one input), shared; each effect a sink. It sends whenever an input
/// sends, so a write reaches an effect once per path (each extra run is a glitch).
final class CombineGraph: W13System {
    let sources: [CurrentValueSubject<Int, Never>]
    var publishers: [AnyPublisher<Int, Never>] = []
    var keep: [AnyObject] = []
    let observer = CombineObserver()
    let counter = Counter()
    var runs: Int { counter.value }
    var latest: [Int]

    init(_ shape: W13Shape) {
        sources = (0..<shape.sources).map { _ in CurrentValueSubject(0) }
        latest = Array(repeating: 0, count: shape.nodes.count)
        for (index, node) in shape.nodes.enumerated() {
            let inputs = node.inputs.map { ref -> AnyPublisher<Int, Never> in
                switch ref {
                case .source(let source): sources[source].eraseToAnyPublisher()
                case .node(let other): publishers[other]
                }
            }
            let compute = node.compute
            let refs = node.inputs
            let combined: AnyPublisher<[Int], Never> =
                inputs.count == 1
                ? inputs[0].map { [$0] }.eraseToAnyPublisher()
                : inputs[0].combineLatest(Array(inputs.dropFirst()), keep: &keep)
            let publisher = combined.map { values in
                compute { ref in
                    switch ref {
                    case .source(let source):
                        values[
                            refs.firstIndex {
                                if case .source(source) = $0 { true } else { false }
                            }!]
                    case .node(let other):
                        values[
                            refs.firstIndex { if case .node(other) = $0 { true } else { false } }!]
                    }
                }
            }
            .share()
            .eraseToAnyPublisher()
            publisher.sink { [unowned self] in latest[index] = $0 }.store(
                in: &observer.cancellables)
            publishers.append(publisher)
        }
        let counter = counter
        let busy = shape.busyEffects
        for effect in shape.effects {
            publishers[effect].sink { _ in
                counter.value &+= 1
                if busy { _ = W13.busy() }
            }.store(in: &observer.cancellables)
        }
        counter.value = 0
    }

    func write(_ source: Int, _ value: Int) { sources[source].value = value }
    func read(_ index: Int) -> Int { latest[index] }
    func keepAlive() { withExtendedLifetime(observer) {} }
}

/// An observable cell for Swift's Observation.
@Observable
final class ObservedSource {
    var value = 0
}

/// Observation for W13: a tracked cell per source; derived values are plain computations that
/// read their inputs on every read (Observation caches nothing); each effect re-arms
/// `withObservationTracking` in `onChange`, reading its value.
final class ObservedGraph: W13System, @unchecked Sendable {
    let shape: W13Shape
    let cells: [ObservedSource]
    let counter = Counter()
    var runs: Int { counter.value }

    init(_ shape: W13Shape) {
        self.shape = shape
        cells = (0..<shape.sources).map { _ in ObservedSource() }
        for effect in shape.effects { arm(effect) }
        counter.value = 0
    }

    func value(_ ref: W13Ref) -> Int {
        switch ref {
        case .source(let source): cells[source].value
        case .node(let node): shape.nodes[node].compute(value)
        }
    }

    private func arm(_ effect: Int) {
        _ = withObservationTracking {
            value(.node(effect))
        } onChange: { [weak self] in
            guard let self else { return }
            self.counter.value &+= 1
            if self.shape.busyEffects { _ = W13.busy() }
            self.arm(effect)
        }
    }

    func write(_ source: Int, _ value: Int) { cells[source].value = value }
    func read(_ index: Int) -> Int { value(.node(index)) }
    func keepAlive() {}
}
