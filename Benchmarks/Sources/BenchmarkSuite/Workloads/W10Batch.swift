import KeyPathBridge

/// W10-batch: one `batch { }` changes every one of N observed properties once, scheduling N
/// coalesced blocks, which run when it ends; ns per block. Measured at 16,000 blocks per batch
/// (`W10-batch`) and at 1,000 (`W10-batch-1k`: 16 batches of 1,000, so both rows run 16,000
/// blocks); the per-block cost must not grow with the blocks a batch schedules.
///
/// Each case's checksum is the number of block runs; a trial in which any block did not run
/// exactly once, or saw another value than the one its batch set, fails the run.
func w10Batch(blocksPerBatch perBatch: Int) -> Workload {
    let total = 16_000
    let batches = total / perBatch
    let large = perBatch == total
    return Workload(
        id: large ? "W10-batch" : "W10-batch-1k",
        summary: "1 batch scheduling \(Report.withSeparators(perBatch)) coalesced blocks",
        operations: total, unit: "block",
        notApplicable: [
            .openCombine: "OpenCombine has no synchronous batch of coalesced blocks",
            .observation:
                "Observation has no batch: a tracking's onChange runs at each change (W10 shows "
                + "the dirty list an app writes around it)",
        ],
        targets: large ? [.scaling(atMost: 2, of: "W10-batch-1k")] : [],
        notifications: total,
        cases: [
            Case(.raw) {
                // A hand-written batch: a cell's didSet appends it to a dirty list once; the
                // batch's end runs the block of every dirty cell.
                let runs = BatchRuns()
                let groups = (0..<batches).map { _ in
                    let flusher = RawFlusher()
                    let cells = (0..<perBatch).map { RawCell(index: $0, flusher: flusher) }
                    flusher.blocks = cells.map { _ in { cell in runs.record(cell.value) } }
                    return (flusher, cells)
                }
                return {
                    runs.beginTrial()
                    for (flusher, cells) in groups {
                        for cell in cells { cell.value = runs.round }
                        flusher.flush()
                    }
                    return runs.verified("RAW", expected: total)
                }
            },
            Case(.herald) {
                // One `observeCoalesced` block per property; the batch runs them as it ends.
                let runs = BatchRuns()
                let coalescer = Coalescer(scheduler: TestMessageScheduler())
                let observer = HeraldObserver()
                let groups = (0..<batches).map { _ in
                    (0..<perBatch).map { _ in HeraldCell() }
                }
                for cell in groups.joined() {
                    observer.observeCoalesced(cell, \.$value, in: coalescer) { _, cell in
                        runs.record(cell.value)
                    }
                }
                return {
                    runs.beginTrial()
                    for cells in groups {
                        batch {
                            for cell in cells { cell.value = runs.round }
                        }
                    }
                    withExtendedLifetime(observer) {}
                    return runs.verified("Herald", expected: total)
                }
            },
        ])
}

/// The block runs of a trial, each of which must see the value of the trial's round.
private final class BatchRuns {
    private(set) var round = 0
    private var count = 0
    private var wrong = 0

    func beginTrial() {
        round &+= 1
        count = 0
        wrong = 0
    }

    @inline(__always)
    func record(_ value: Int) {
        count &+= 1
        if value != round { wrong &+= 1 }
    }

    /// The number of block runs; fails the run unless there were `expected`, each seeing the
    /// round's value.
    func verified(_ system: String, expected: Int) -> Int {
        guard count == expected, wrong == 0 else {
            fatalError(
                "W10-batch: \(system) ran \(count) blocks (\(wrong) saw a stale value); "
                    + "must run \(expected)")
        }
        return count
    }
}
