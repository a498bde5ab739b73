/// `herald-benchmarks --floor`: the W12 and W13 rows for RAW, Herald, Observation and the floor
/// engine (FloorEngine.swift), in one run: how close to RAW and Observation a thread-safe,
/// pull-based design with automatic dependencies comes at the least cost, against Herald.
enum FloorExperiment {
    static func run(warmup: Int, rounds: Int, only: Set<String>?, systems: Set<String>?) {
        let rows =
            [
                (w12SyntheticChain(observed: false), w12(observed: false)),
                (w12SyntheticChain(observed: true), w12(observed: true)),
            ]
            + W13.all().map { shape in
                (w13Kairo(shape), { W13.trial(shape, FloorGraph(shape), exact: "Floor") })
            }
        let peers: [System] = [.raw, .herald, .observation]
        var runner = Runner(warmup: warmup, rounds: rounds)
        var lines = [
            "| row | RAW | Floor | Herald | Observation | Floor ÷ RAW | Floor ÷ Observation "
                + "| Herald ÷ Floor | Herald ÷ RAW | Herald ÷ Observation |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for (workload, floor) in rows where only?.contains(workload.id) ?? true {
            print("\(workload.id) ", terminator: "")
            BenchmarkCommand.flush()
            let trials =
                workload.cases.filter { peers.contains($0.system) }.map {
                    ($0.system.name, $0.prepare)
                } + [("Floor", floor)]
            let selected = trials.filter { systems?.contains($0.0) ?? true }
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
            let (raw, floorNs, herald, observation) = (
                ns["RAW"] ?? .nan, ns["Floor"] ?? .nan, ns["Herald"] ?? .nan,
                ns["Observation"] ?? .nan
            )
            func time(_ value: Double) -> String { Report.number(value, decimals: 1) }
            func ratio(_ value: Double) -> String { Report.number(value, decimals: 2) + "×" }
            lines.append(
                "| \(workload.id) | \(time(raw)) | \(time(floorNs)) | \(time(herald)) "
                    + "| \(time(observation)) | \(ratio(floorNs / raw)) "
                    + "| \(ratio(floorNs / observation)) | \(ratio(herald / floorNs)) "
                    + "| \(ratio(herald / raw)) | \(ratio(herald / observation)) |")
        }
        print("\nMedians, ns per operation; the floor's counts are exact on every row.\n")
        print(lines.joined(separator: "\n"))
        print("checksum \(runner.sink)")
    }

    /// W12's trial on the floor engine (as the Herald case, with `FloorPerson`).
    static func w12(observed: Bool) -> () -> () -> Int {
        {
            let changes = 100_000
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
                return calls.value
            }
        }
    }
}
