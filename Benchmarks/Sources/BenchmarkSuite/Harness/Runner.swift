/// Counts allocations around a region. Implemented by the `herald-benchmarks-mallocs` executable,
/// which links ordo-one/malloc-interposer; the timing process never loads the interposer.
public protocol AllocationCounter {
    /// Resets the counters and starts counting.
    func start()
    /// Stops counting and returns the mallocs and the net requested bytes (allocated − freed).
    func stop() -> (mallocs: Int, netBytes: Int)
    /// A histogram of the requested sizes counted since `start()`, if asked for (profiling aid).
    func sizeHistogram() -> String?
}

/// The figures for one workload and system.
struct Figures {
    var samplesNsPerOp: [Double] = []
    var mallocsPerOp: Double?
    var bytesPerOp: Double?
    /// For a workload that counts notifications: each measured trial's count (its checksum).
    var notificationCounts: [Int] = []

    var medianNsPerOp: Double? { median(samplesNsPerOp) }
}

func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Runs the timing rounds: in each round every system runs one trial, in an order rotated by the
/// round number; the first `warmup` rounds are not recorded.
struct Runner {
    var warmup: Int
    var rounds: Int
    /// Sum of every trial's checksum, printed at the end so no work can be optimized away.
    private(set) var sink = 0

    init(warmup: Int, rounds: Int) {
        self.warmup = warmup
        self.rounds = rounds
    }

    mutating func time(_ workload: Workload, progress: (String) -> Void) -> [System: Figures] {
        let samples = time(
            workload.cases.map { ($0.system, $0.prepare) }, operations: workload.operations,
            progress: progress)
        var figures: [System: Figures] = [:]
        for (system, sample) in samples {
            figures[system] = Figures(
                samplesNsPerOp: sample.nsPerOp,
                notificationCounts: workload.notifications != nil ? sample.checksums : [])
        }
        return figures
    }

    /// Times `trials` (each labelled, preparing its trial) in rounds: in each round every trial
    /// runs once, in an order rotated by the round number. Returns, by label, the ns per
    /// operation and the checksum of each measured round.
    mutating func time<Label: Hashable>(
        _ trials: [(label: Label, prepare: () -> () -> Int)], operations: Int,
        progress: (String) -> Void
    ) -> [Label: (nsPerOp: [Double], checksums: [Int])] {
        var samples: [Label: (nsPerOp: [Double], checksums: [Int])] = [:]
        for round in 0..<(warmup + rounds) {
            for offset in 0..<trials.count {
                let trial = trials[(round + offset) % trials.count]
                var body: (() -> Int)? = trial.prepare()
                let start = nowNanoseconds()
                let checksum = body!()
                let end = nowNanoseconds()
                body = nil  // teardown, untimed
                sink &+= checksum
                if round >= warmup {
                    let nsPerOp = Double(end - start) / Double(operations)
                    samples[trial.label, default: ([], [])].nsPerOp.append(nsPerOp)
                    samples[trial.label, default: ([], [])].checksums.append(checksum)
                }
            }
            progress(round < warmup ? "w" : ".")
        }
        return samples
    }

    /// One warm-up trial, then one counted trial per system.
    mutating func countAllocations(_ workload: Workload, with counter: AllocationCounter)
        -> [System: (mallocsPerOp: Double, bytesPerOp: Double)]
    {
        var result: [System: (Double, Double)] = [:]
        for trialCase in workload.cases {
            var warm: (() -> Int)? = trialCase.prepare()
            sink &+= warm!()
            warm = nil
            var body: (() -> Int)? = trialCase.prepare()
            counter.start()
            let checksum = body!()
            let (mallocs, netBytes) = counter.stop()
            if let sizes = counter.sizeHistogram() {
                print("SIZES\t\(workload.id)\t\(trialCase.system.name)\t\(sizes)")
            }
            body = nil
            sink &+= checksum
            let operations = Double(workload.operations)
            result[trialCase.system] = (Double(mallocs) / operations, Double(netBytes) / operations)
        }
        return result
    }
}
