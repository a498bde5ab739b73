import KeyPathBridge

/// W14 synthetic graph at scale: `layers` layers of four synthetic properties, property `j` of a
/// layer computing `mix(p[j], p[j + 1 mod 4])` of the layer below; four variables at the
/// bottom; an observer on every property. Rows (`-1k`, `-5k` for the layer count):
///
/// - W14-build: create the graph and its observers (observing a synthetic property evaluates
///   it); ns and bytes per property with its observer (the build's net allocated bytes).
/// - W14-update: four writes to the variables, then a read of the last layer; ns per update.
/// - W14-update-batch: the same four writes inside one `batch { }` (RAW: one propagation).
/// - W14-teardown: releasing the graph and its observers; ns per property.
///
/// Every trial checks its values against a plain recomputation (`W14.Reference`): the last
/// layer as read, the value each observer was last told, and the number of observer runs (one
/// per property whose value changed, per propagation). A wrong one stops the run.
func w14SyntheticGraph(_ row: W14.Row, layers: Int) -> Workload {
    let properties = 4 * layers
    let suffix = layers % 1000 == 0 ? "-\(layers / 1000)k" : "-\(layers)"
    // About the same work per trial at every size, a second or less for Herald at 5k.
    let updates = max(1, 5_000 / layers)
    let operations = row == .build || row == .teardown ? properties : updates
    let reference = W14.Lazy {
        W14.Reference(layers: layers, updates: updates, batched: row == .updateBatch)
    }
    let targets: [Target] =
        switch row {
        case .build: [.time(atMost: 20, of: .raw), .bytes(atMost: 400)]
        case .updateBatch: [.time(atMost: 10, of: .raw)]
        default: []
        }
    return Workload(
        id: "W14-" + row.rawValue + suffix,
        summary: "synthetic graph, \(layers) layers × 4, " + row.summary,
        operations: operations, unit: row == .build || row == .teardown ? "property" : "update",
        reportsBytes: row == .build,
        notApplicable: [
            .openCombine: "W14 measures synthetic properties (lazy, cached, glitch-free)",
            .observation: "W14 measures synthetic properties (Observation caches nothing)",
        ],
        targets: targets,
        cases: [
            Case(.raw) {
                W14.trial(row, reference, updates: updates, "RAW") { W14RawGraph(layers: layers) }
            },
            Case(.herald) {
                W14.trial(row, reference, updates: updates, "Herald") {
                    W14HeraldGraph(layers: layers)
                }
            },
        ])
}

/// One system's W14 graph.
protocol W14Graph: AnyObject {
    /// What the observers were told: the last value per property, and how many times.
    var told: W14Told { get }
    /// Writes the four variables: one propagation per write, or one for the four (`batched`).
    func update(_ values: (Int, Int, Int, Int), batched: Bool)
    /// The sum of the last layer's four values, read.
    func readLast() -> Int
}

/// Where the observers of a W14 graph record what they are told.
final class W14Told {
    let values: UnsafeMutableBufferPointer<Int>
    @exclusivity(unchecked) var runs = 0

    init(properties: Int) { values = .filled(0, properties) }
    deinit { values.deallocate() }
}

enum W14 {
    /// A value made when first needed (the references are made when a trial is prepared, not
    /// when the workloads are listed).
    final class Lazy<Value> {
        private let make: () -> Value
        lazy var value = make()
        init(_ make: @escaping () -> Value) { self.make = make }
    }

    enum Row: String {
        case build, update
        case updateBatch = "update-batch"
        case teardown

        var summary: String {
            switch self {
            case .build: "build with observers (ns and bytes per property)"
            case .update: "four writes, last layer read (ns per update)"
            case .updateBatch: "four writes in one batch, last layer read (ns per update)"
            case .teardown: "teardown (ns per property)"
            }
        }
    }

    /// What property `j` of a layer computes from two of the layer below (or the variables).
    /// Its matrix over a layer (2 on the diagonal, 1 beside it, circulant) has an odd
    /// determinant (15), so it is invertible modulo 2⁶⁴: a change never wraps to zero and
    /// reaches the last layer. (With `3x + y`, whose determinant is 80, a change vanished
    /// after about 32 layers.)
    @inline(__always)
    static func mix(_ x: Int, _ y: Int) -> Int { x &* 2 &+ y }

    /// The variables' values at build time.
    static let initial = (1, 2, 3, 4)

    /// The four values written by update `u`: each differs from what the variable held.
    static func written(_ u: Int) -> (Int, Int, Int, Int) {
        (4 * u + 5, 4 * u + 6, 4 * u + 7, 4 * u + 8)
    }

    /// The graph recomputed by plain loops: the values after the build and after the updates,
    /// the sum of the last layer's reads, and the observer runs (a run per property whose value
    /// differs after a propagation from before it).
    struct Reference {
        let built: [Int]
        let final: [Int]
        let lastSum: Int
        let runs: Int

        init(layers: Int, updates: Int, batched: Bool) {
            var inputs = [initial.0, initial.1, initial.2, initial.3]
            func evaluate(_ inputs: [Int]) -> [Int] {
                var values = [Int](repeating: 0, count: 4 * layers)
                for layer in 0..<layers {
                    for j in 0..<4 {
                        let below = layer == 0 ? inputs : Array(values[4 * (layer - 1)..<4 * layer])
                        values[4 * layer + j] = mix(below[j], below[(j + 1) % 4])
                    }
                }
                return values
            }
            built = evaluate(inputs)
            var values = built
            var runs = 0
            var lastSum = 0
            for u in 0..<updates {
                let w = written(u)
                let writes = [w.0, w.1, w.2, w.3]
                for k in 0..<4 {
                    inputs[k] = writes[k]
                    if !batched || k == 3 {
                        let next = evaluate(inputs)
                        runs += zip(values, next).filter { $0 != $1 }.count
                        values = next
                    }
                }
                lastSum &+= values[(4 * layers - 4)...].reduce(0, &+)
            }
            final = values
            self.lastSum = lastSum
            self.runs = runs
        }
    }

    static func trial(
        _ row: Row, _ lazyReference: Lazy<Reference>, updates: Int, _ system: String,
        _ make: @escaping () -> any W14Graph
    ) -> () -> Int {
        let reference = lazyReference.value
        let properties = reference.built.count
        func fail(_ what: String) -> Never {
            fatalError("W14-\(row.rawValue) (\(properties / 4) layers): \(system) \(what)")
        }
        func checkBuilt(_ graph: any W14Graph) {
            let last = reference.built[(properties - 4)...].reduce(0, &+)
            guard graph.readLast() == last else { fail("reads \(graph.readLast()), not \(last)") }
        }
        switch row {
        case .build:
            let holder = W14Holder()
            return {
                let graph = make()
                holder.graph = graph  // released after the timed region
                checkBuilt(graph)
                return properties
            }
        case .teardown:
            let holder = W14Holder()
            holder.graph = make()
            checkBuilt(holder.graph!)
            return {
                holder.graph = nil
                return properties
            }
        case .update, .updateBatch:
            let graph = make()
            checkBuilt(graph)
            for (index, value) in reference.built.enumerated() { graph.told.values[index] = value }
            graph.told.runs = 0
            let batched = row == .updateBatch
            return {
                var sum = 0
                for u in 0..<updates {
                    graph.update(written(u), batched: batched)
                    sum &+= graph.readLast()
                }
                let told = graph.told
                guard sum == reference.lastSum else {
                    fail("read \(sum), not \(reference.lastSum)")
                }
                guard told.runs == reference.runs else {
                    fail("ran its observers \(told.runs) times, not \(reference.runs)")
                }
                guard told.values.elementsEqual(reference.final) else {
                    fail("told its observers values other than the recomputation's")
                }
                return told.runs
            }
        }
    }
}

/// Keeps a built graph past the timed region (build), or releases it in it (teardown).
final class W14Holder {
    var graph: (any W14Graph)?
}

/// RAW for W14, the physical limit: the values, dirty flags and observer closures in flat
/// buffers (no exclusivity checks, no boxing); a write marks the two properties of the first
/// layer that read the variable, and a propagation walks the layers upwards, recomputing the
/// marked properties, telling the observer of each that changed and marking its two dependents,
/// and stops at the first layer with nothing marked. Versions are not needed: the graph is
/// static and layered, so a change marks its dependents directly and order is the index order.
final class W14RawGraph: W14Graph {
    let told: W14Told
    private let layers: Int
    private let inputs = UnsafeMutableBufferPointer<Int>.filled(0, 4)
    private let values: UnsafeMutableBufferPointer<Int>
    private let dirty: UnsafeMutableBufferPointer<Bool>
    private let observers: UnsafeMutableBufferPointer<(Int) -> Void>

    init(layers: Int) {
        self.layers = layers
        let told = W14Told(properties: 4 * layers)
        self.told = told
        (inputs[0], inputs[1], inputs[2], inputs[3]) = W14.initial
        values = .filled(0, 4 * layers)
        dirty = .allocate(capacity: 4 * layers)
        dirty.initialize(repeating: false)
        observers = .allocate(capacity: 4 * layers)
        for index in 0..<4 * layers {
            (observers.baseAddress! + index).initialize { value in
                told.values[index] = value
                told.runs &+= 1
            }
        }
        for index in 0..<4 * layers { values[index] = compute(index) }
    }

    deinit {
        observers.deinitialize().deallocate()
        values.deallocate()
        dirty.deallocate()
        inputs.deallocate()
    }

    @inline(__always)
    private func compute(_ index: Int) -> Int {
        let j = index & 3
        let next = (j + 1) & 3
        if index < 4 { return W14.mix(inputs[j], inputs[next]) }
        let below = index - 4 - j
        return W14.mix(values[below + j], values[below + next])
    }

    @inline(__always)
    private func write(_ k: Int, _ value: Int) {
        inputs[k] = value
        // Properties j and j - 1 read variable j.
        dirty[k] = true
        dirty[(k + 3) & 3] = true
    }

    private func propagate() {
        for layer in 0..<layers {
            var marked = false
            for j in 0..<4 {
                let index = 4 * layer + j
                guard dirty[index] else { continue }
                marked = true
                dirty[index] = false
                let value = compute(index)
                guard value != values[index] else { continue }
                values[index] = value
                observers[index](value)
                if layer + 1 < layers {
                    dirty[index + 4] = true
                    dirty[index + 4 - j + ((j + 3) & 3)] = true
                }
            }
            if !marked { return }
        }
    }

    func update(_ w: (Int, Int, Int, Int), batched: Bool) {
        if batched {
            write(0, w.0)
            write(1, w.1)
            write(2, w.2)
            write(3, w.3)
            propagate()
        } else {
            write(0, w.0)
            propagate()
            write(1, w.1)
            propagate()
            write(2, w.2)
            propagate()
            write(3, w.3)
            propagate()
        }
    }

    func readLast() -> Int {
        let last = 4 * layers - 4
        return values[last] &+ values[last + 1] &+ values[last + 2] &+ values[last + 3]
    }
}

/// Herald's W14 variables.
final class W14HeraldInputs {
    @ObservableVar var a = W14.initial.0
    @ObservableVar var b = W14.initial.1
    @ObservableVar var c = W14.initial.2
    @ObservableVar var d = W14.initial.3
}

/// A Herald W14 layer: four `@Synthetic` properties, each reading two of the layer below (or
/// of the variables, for the first layer).
final class W14HeraldLayer {
    let below: W14HeraldLayer?
    unowned let inputs: W14HeraldInputs

    @Synthetic({ (layer: W14HeraldLayer) in
        if let below = layer.below {
            W14.mix(below.a, below.b)
        } else {
            W14.mix(layer.inputs.a, layer.inputs.b)
        }
    })
    var a: Int
    @Synthetic({ (layer: W14HeraldLayer) in
        if let below = layer.below {
            W14.mix(below.b, below.c)
        } else {
            W14.mix(layer.inputs.b, layer.inputs.c)
        }
    })
    var b: Int
    @Synthetic({ (layer: W14HeraldLayer) in
        if let below = layer.below {
            W14.mix(below.c, below.d)
        } else {
            W14.mix(layer.inputs.c, layer.inputs.d)
        }
    })
    var c: Int
    @Synthetic({ (layer: W14HeraldLayer) in
        if let below = layer.below {
            W14.mix(below.d, below.a)
        } else {
            W14.mix(layer.inputs.d, layer.inputs.a)
        }
    })
    var d: Int

    init(below: W14HeraldLayer?, inputs: W14HeraldInputs) {
        self.below = below
        self.inputs = inputs
    }
}

/// Herald for W14: layers of `@Synthetic` properties over `@ObservableVar`s, an observer (its
/// own `Observer` object) on every property, built bottom-up.
final class W14HeraldGraph: W14Graph {
    let told: W14Told
    let inputs = W14HeraldInputs()
    private var layers: [W14HeraldLayer] = []
    private var observers: [HeraldObserver] = []

    init(layers count: Int) {
        let told = W14Told(properties: 4 * count)
        self.told = told
        layers.reserveCapacity(count)
        observers.reserveCapacity(4 * count)
        var below: W14HeraldLayer?
        for layer in 0..<count {
            let made = W14HeraldLayer(below: below, inputs: inputs)
            layers.append(made)
            observe(made.$a, 4 * layer)
            observe(made.$b, 4 * layer + 1)
            observe(made.$c, 4 * layer + 2)
            observe(made.$d, 4 * layer + 3)
            below = made
        }
    }

    private func observe(_ property: Synthetic<W14HeraldLayer, Int>, _ index: Int) {
        let observer = HeraldObserver()
        let told = told
        observer.observe(property) { update in
            told.values[index] = update.new
            told.runs &+= 1
        }
        observers.append(observer)
    }

    func update(_ w: (Int, Int, Int, Int), batched: Bool) {
        if batched {
            batch {
                inputs.a = w.0
                inputs.b = w.1
                inputs.c = w.2
                inputs.d = w.3
            }
        } else {
            inputs.a = w.0
            inputs.b = w.1
            inputs.c = w.2
            inputs.d = w.3
        }
    }

    func readLast() -> Int {
        let last = layers[layers.count - 1]
        return last.a &+ last.b &+ last.c &+ last.d
    }
}
