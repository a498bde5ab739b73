/// `herald-benchmarks --floor`: the W12 and W13 rows for RAW, Herald, Observation and the floor
/// engine (``FloorEngine``), in one run: how close to RAW and Observation a thread-safe,
/// pull-based design with automatic dependencies comes at the least cost, against Herald.
enum FloorExperiment {
    /// A row: the workload (whose RAW, Herald and Observation cases run), and the floor's trial.
    struct Row {
        /// The workload, as the normal run times it.
        let workload: Workload
        /// Prepares one trial on the floor engine (as a `Case`'s `prepare`).
        let floor: () -> () -> Int
    }

    /// The systems timed beside the floor.
    static let peers: [System] = [.raw, .herald, .observation]

    /// Times the rows that `only` selects (all if nil) for the systems that `systems` selects
    /// (all four if nil), and prints the table.
    static func run(warmup: Int, rounds: Int, only: Set<String>?, systems: Set<String>?) {
        let rows =
            [
                Row(workload: w12SyntheticChain(observed: false), floor: w12(observed: false)),
                Row(workload: w12SyntheticChain(observed: true), floor: w12(observed: true)),
            ]
            + W13.all().map { shape in
                Row(workload: w13Kairo(shape)) {
                    W13.trial(shape, FloorGraph(shape), exact: "Floor")
                }
            }
        let timesFloor = systems?.contains("Floor") ?? true
        var runner = Runner(warmup: warmup, rounds: rounds)
        var lines = [
            "| row | RAW | Floor | Herald | Observation | Floor ÷ RAW | Floor ÷ Observation "
                + "| Herald ÷ Floor | Herald ÷ RAW | Herald ÷ Observation |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for row in rows where only?.contains(row.workload.id) ?? true {
            let workload = row.workload
            print("\(workload.id) ", terminator: "")
            BenchmarkCommand.flush()
            let trials: [(label: String, prepare: () -> () -> Int)] =
                workload.cases.filter { peers.contains($0.system) }.map {
                    (label: $0.system.name, prepare: $0.prepare)
                } + [(label: "Floor", prepare: row.floor)]
            let selected = trials.filter { systems?.contains($0.label) ?? true }
            let samples = runner.time(selected, operations: workload.operations) { mark in
                print(mark, terminator: "")
                BenchmarkCommand.flush()
            }
            print()
            if let expected = workload.notifications,
                let counts = samples["Floor"]?.checksums, counts.contains(where: { $0 != expected })
            {
                fatalError("\(workload.id): the floor delivered \(counts), not \(expected)")
            }
            let ns = samples.mapValues { median($0.nsPerOp) ?? .nan }
            let raw = ns["RAW"] ?? .nan
            let floor = ns["Floor"] ?? .nan
            let herald = ns["Herald"] ?? .nan
            let observation = ns["Observation"] ?? .nan
            lines.append(
                "| \(workload.id) | \(time(raw)) | \(time(floor)) | \(time(herald)) "
                    + "| \(time(observation)) | \(ratio(floor / raw)) "
                    + "| \(ratio(floor / observation)) | \(ratio(herald / floor)) "
                    + "| \(ratio(herald / raw)) | \(ratio(herald / observation)) |")
        }
        print(
            "\nMedians, ns per operation"
                + (timesFloor
                    ? "; the floor's counts (and final values) are exact on every row.\n"
                    : " (the floor was not run).\n"))
        print(lines.joined(separator: "\n"))
        print("checksum \(runner.sink)")
    }

    /// A time for the table ("—" for a system not run).
    static func time(_ value: Double) -> String {
        value.isNaN ? "—" : Report.number(value, decimals: 1)
    }

    /// A ratio for the table ("—" where a system was not run).
    static func ratio(_ value: Double) -> String {
        value.isNaN ? "—" : Report.number(value, decimals: 2) + "×"
    }

    /// W12's trial on the floor engine (as the Herald case, with `FloorPerson`), which also
    /// checks that the final address is the one RAW computes.
    static func w12(observed: Bool) -> () -> () -> Int {
        {
            let changes = 100_000
            let expectedAddress = rawFinalAddress
            let calls = Counter()
            let effects = Counter()
            let person = FloorPerson(calls: calls)
            if observed { person.addressProperty.observe { _ in effects.value &+= 1 } }
            _ = person.address
            calls.value = 0
            return {
                for change in 0..<changes {
                    person.change(field: change % 6, to: change + 1)
                    if !observed { _ = person.address }
                }
                W12.check(
                    "Floor", calls: calls.value, expected: W12.leastCalls(changes: changes),
                    effects: effects.value, observed)
                let address = person.address
                guard address == expectedAddress else {
                    fatalError(
                        "W12: the floor ends at address \(address), RAW at \(expectedAddress)")
                }
                return calls.value
            }
        }
    }

    /// The address that RAW ends at after W12's 100,000 changes (computed once, untimed).
    static let rawFinalAddress: Int = {
        let person = RawPerson(calls: Counter())
        for change in 0..<100_000 { person.change(field: change % 6, to: change + 1) }
        return person.address
    }()
}
