/// W12's person on the floor engine.
final class FloorPerson: W12Fields {
    let calls: Counter
    let firstVariable = FloorVariable(0)
    let lastVariable = FloorVariable(0)
    let streetVariable = FloorVariable(0)
    let cityVariable = FloorVariable(0)
    let stateVariable = FloorVariable(0)
    let zipVariable = FloorVariable(0)
    let fullNameProperty = FloorComputed<FloorPerson, Int> { person in
        W12.fullName(person.first, person.last, person.calls)
    }
    let addressProperty = FloorComputed<FloorPerson, Int> { person in
        W12.address(
            person.fullName, (person.street, person.city, person.state, person.zip), person.calls)
    }

    init(calls: Counter) {
        self.calls = calls
        fullNameProperty.bind(to: self)
        addressProperty.bind(to: self)
    }

    var first: Int {
        get { firstVariable.value }
        set { firstVariable.value = newValue }
    }
    var last: Int {
        get { lastVariable.value }
        set { lastVariable.value = newValue }
    }
    var street: Int {
        get { streetVariable.value }
        set { streetVariable.value = newValue }
    }
    var city: Int {
        get { cityVariable.value }
        set { cityVariable.value = newValue }
    }
    var state: Int {
        get { stateVariable.value }
        set { stateVariable.value = newValue }
    }
    var zip: Int {
        get { zipVariable.value }
        set { zipVariable.value = newValue }
    }
    var fullName: Int { fullNameProperty.value }
    var address: Int { addressProperty.value }
}

/// A W13 shape on the floor engine: variables, computed properties, effects as handlers.
final class FloorGraph: W13System {
    let sources: [FloorVariable<Int>]
    let nodes: [FloorComputed<FloorGraph, Int>]
    let counter = Counter()
    var runs: Int { counter.value }

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

    func write(_ source: Int, _ value: Int) { sources[source].value = value }
    func read(_ index: Int) -> Int { nodes[index].value }
    func keepAlive() {}
}
