import KeyPathBridge
import Observation
import OpenCombine

/// RAW for W13: the graph wired by hand with static inputs, dirty flags pushed down on a write
/// (invalid for direct dependents, check for the rest), values pulled by the effects with a
/// version per node so that an unchanged value stops there. The least a correct system does.
///
/// Written as the physical limit: every table is one flat buffer (adjacency in CSR form, a node
/// input as its index and a source input as `~source`), held in `let`s, so that no access pays
/// a dynamic exclusivity check, a uniqueness check or an array of arrays' extra indirection
/// (with Swift arrays in `var`s, the checks were about two thirds of its instructions).
final class RawGraph: W13System {
    /// The nodes themselves, for their functions: a buffer of the bare closures would hold them
    /// at the generic element's abstraction, and each call would then heap-allocate a thunk
    /// for the reader it is passed (about a fifth of the instructions); a struct's field keeps
    /// the closure's own abstraction.
    private let nodes: UnsafeMutableBufferPointer<W13Node>
    private let sources: UnsafeMutableBufferPointer<Int>
    private let values: UnsafeMutableBufferPointer<Int>
    private let versions: UnsafeMutableBufferPointer<Int>
    /// 0 valid, 1 check, 2 invalid.
    private let states: UnsafeMutableBufferPointer<UInt8>
    /// Node `i`'s inputs are `inputs[inputStart[i]..<inputStart[i + 1]]`.
    private let inputStart: UnsafeMutableBufferPointer<Int>
    private let inputs: UnsafeMutableBufferPointer<Int>
    /// Per input slot: the version of that node input when its node last computed.
    private let seen: UnsafeMutableBufferPointer<Int>
    private let sourceDependentStart: UnsafeMutableBufferPointer<Int>
    private let sourceDependents: UnsafeMutableBufferPointer<Int>
    private let nodeDependentStart: UnsafeMutableBufferPointer<Int>
    private let nodeDependents: UnsafeMutableBufferPointer<Int>
    private let effects: UnsafeMutableBufferPointer<Int>
    private let effectVersions: UnsafeMutableBufferPointer<Int>
    private let busyEffects: Bool
    @exclusivity(unchecked) private(set) var runs = 0

    init(_ shape: W13Shape) {
        let count = shape.nodes.count
        nodes = .allocate(capacity: count)
        _ = nodes.initialize(from: shape.nodes)
        sources = .filled(0, shape.sources)
        values = .filled(0, count)
        versions = .filled(0, count)
        states = .allocate(capacity: count)
        states.initialize(repeating: 2)
        let encoded = shape.nodes.map { node in
            node.inputs.map { input -> Int in
                switch input {
                case .source(let source): ~source
                case .node(let other): other
                }
            }
        }
        (inputStart, inputs) = UnsafeMutableBufferPointer.compressed(encoded)
        seen = .filled(-1, inputs.count)
        var bySource = Array(repeating: [Int](), count: shape.sources)
        var byNode = Array(repeating: [Int](), count: count)
        for (index, node) in encoded.enumerated() {
            for input in node {
                if input < 0 { bySource[~input].append(index) } else { byNode[input].append(index) }
            }
        }
        (sourceDependentStart, sourceDependents) = UnsafeMutableBufferPointer.compressed(bySource)
        (nodeDependentStart, nodeDependents) = UnsafeMutableBufferPointer.compressed(byNode)
        effects = .allocate(capacity: shape.effects.count)
        _ = effects.initialize(from: shape.effects)
        effectVersions = .filled(-1, shape.effects.count)
        busyEffects = shape.busyEffects
        runEffects()
        runs = 0
    }

    deinit {
        nodes.deinitialize().deallocate()
        for buffer in [
            sources, values, versions, inputStart, inputs, seen, sourceDependentStart,
            sourceDependents, nodeDependentStart, nodeDependents, effects, effectVersions,
        ] {
            buffer.deallocate()
        }
        states.deallocate()
    }

    func write(_ source: Int, _ value: Int) {
        guard sources[source] != value else { return }
        sources[source] = value
        for slot in sourceDependentStart[source]..<sourceDependentStart[source + 1] {
            mark(sourceDependents[slot], 2)
        }
        runEffects()
    }

    private func mark(_ node: Int, _ level: UInt8) {
        let was = states[node]
        if level > was { states[node] = level }
        guard was == 0 else { return }
        for slot in nodeDependentStart[node]..<nodeDependentStart[node + 1] {
            mark(nodeDependents[slot], 1)
        }
    }

    private func refresh(_ node: Int) {
        let first = inputStart[node]
        let end = inputStart[node + 1]
        if states[node] == 1 {
            states[node] = 0
            for slot in first..<end {
                let other = inputs[slot]
                guard other >= 0 else { continue }
                refresh(other)
                if versions[other] != seen[slot] {
                    states[node] = 2
                    break
                }
            }
        }
        guard states[node] == 2 else { return }
        let value = nodes[node].compute { ref in
            switch ref {
            case .source(let source): return self.sources[source]
            case .node(let other):
                self.refresh(other)
                return self.values[other]
            }
        }
        for slot in first..<end {
            let other = inputs[slot]
            if other >= 0 { seen[slot] = versions[other] }
        }
        states[node] = 0
        if value != values[node] || versions[node] == 0 {
            values[node] = value
            versions[node] &+= 1
        }
    }

    private func runEffects() {
        for slot in 0..<effects.count {
            let node = effects[slot]
            refresh(node)
            if versions[node] != effectVersions[slot] {
                effectVersions[slot] = versions[node]
                runs &+= 1
                if busyEffects { _ = W13.busy() }
            }
        }
    }

    func read(_ index: Int) -> Int {
        refresh(index)
        return values[index]
    }

    func keepAlive() {}
}

extension UnsafeMutableBufferPointer where Element == Int {
    /// A new buffer of `count` copies of `value` (the caller deallocates it).
    static func filled(_ value: Int, _ count: Int) -> Self {
        let buffer = allocate(capacity: count)
        buffer.initialize(repeating: value)
        return buffer
    }

    /// Lists in compressed sparse row form: list `i` is `items[start[i]..<start[i + 1]]`.
    static func compressed(_ lists: [[Int]]) -> (start: Self, items: Self) {
        let start = filled(0, lists.count + 1)
        for (index, list) in lists.enumerated() { start[index + 1] = start[index] + list.count }
        let items = allocate(capacity: Swift.max(start[lists.count], 1))
        _ = items.initialize(from: lists.joined())
        return (start, items)
    }
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
