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
        var figures: [System: Figures] = [:]
        let cases = workload.cases
        for round in 0..<(warmup + rounds) {
            for offset in 0..<cases.count {
                let trialCase = cases[(round + offset) % cases.count]
                var body: (() -> Int)? = trialCase.prepare()
                let start = nowNanoseconds()
                let checksum = body!()
                let end = nowNanoseconds()
                body = nil  // teardown, untimed
                sink &+= checksum
                if round >= warmup {
                    let nsPerOp = Double(end - start) / Double(workload.operations)
                    figures[trialCase.system, default: Figures()].samplesNsPerOp.append(nsPerOp)
                    if workload.notifications != nil {
                        figures[trialCase.system, default: Figures()].notificationCounts.append(
                            checksum)
                    }
                }
            }
            progress(round < warmup ? "w" : ".")
        }
        return figures
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
