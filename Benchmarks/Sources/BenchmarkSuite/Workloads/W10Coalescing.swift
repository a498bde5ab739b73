import KeyPathBridge
import Observation

/// W10 coalescing: 1,000 observed properties (one per object), each changed 100 times inside one
/// turn (round-robin: every property once, then every property again, …; every set changes the
/// value), then one flush; each property's block must run exactly once, and see the last value.
///
/// The timed region is the 100,000 changes plus the flush (1,000 block runs) plus the check;
/// figures are ns per change (× 100,000 for the whole turn). Each case's checksum is the number
/// of block runs (see `Workload.notifications`); a trial in which any block did not run exactly
/// once, or saw another value than the last, fails the run.
func w10Coalescing() -> Workload {
    let properties = 1_000
    let changesPerProperty = 100
    return Workload(
        id: "W10", summary: "coalescing, 1,000 properties × 100 changes, 1 flush",
        operations: properties * changesPerProperty, unit: "change",
        notApplicable: [
            .openCombine:
                "OpenCombine's coalescing operators (`debounce`, `throttle`, `collect(.byTime)`) "
                + "are time-based and need a Combine Scheduler; OpenCombine ships no manually driven "
                + "one, and a hand-written virtual-time scheduler would measure that scheduler"
        ],
        notifications: properties,
        cases: [
            Case(.raw) {
                // A hand-written dirty list: a cell's didSet appends it once; flush runs the
                // block of every dirty cell and clears it.
                let runs = BlockRuns(properties)
                let flusher = RawFlusher()
                let cells = (0..<properties).map { RawCell(index: $0, flusher: flusher) }
                flusher.blocks = (0..<properties).map { index in
                    { cell in runs.record(index, cell.value) }
                }
                return {
                    for round in 1...changesPerProperty {
                        for cell in cells { cell.value = round }
                    }
                    flusher.flush()
                    return runs.verified("RAW", last: changesPerProperty)
                }
            },
            Case(.herald) {
                // One `observeCoalesced` block per property, on a Coalescer whose flushes run on
                // a TestMessageScheduler; `runTurn()` is the flush.
                let runs = BlockRuns(properties)
                let scheduler = TestMessageScheduler()
                let coalescer = Coalescer(scheduler: scheduler)
                let cells = (0..<properties).map { _ in HeraldCell() }
                let observer = HeraldObserver()
                for (index, cell) in cells.enumerated() {
                    observer.observeCoalesced(cell, \.$value, in: coalescer) { _, cell in
                        runs.record(index, cell.value)
                    }
                }
                return {
                    for round in 1...changesPerProperty {
                        for cell in cells { cell.value = round }
                    }
                    scheduler.runTurn()
                    withExtendedLifetime(observer) {}
                    return runs.verified("Herald", last: changesPerProperty)
                }
            },
            Case(.observation) {
                // withObservationTracking per property, its onChange marking the property dirty
                // (a tracking fires once, so the first change marks it and the other 99 pass
                // unseen); the flush runs each dirty property's block inside a new tracking,
                // which re-arms it, the way SwiftUI re-renders.
                let runs = BlockRuns(properties)
                let cells = (0..<properties).map { _ in ObservedCell() }
                let flusher = ObservationFlusher(cells) { index, cell in
                    runs.record(index, cell.value)
                }
                flusher.armAll()
                return {
                    for round in 1...changesPerProperty {
                        for cell in cells { cell.value = round }
                    }
                    flusher.flush()
                    return runs.verified("Observation", last: changesPerProperty)
                }
            },
        ])
}

/// How often each property's block ran in a trial, and the value it saw last.
private final class BlockRuns {
    var counts: [Int]
    var seen: [Int]

    init(_ properties: Int) {
        counts = Array(repeating: 0, count: properties)
        seen = Array(repeating: 0, count: properties)
    }

    @inline(__always)
    func record(_ index: Int, _ value: Int) {
        counts[index] &+= 1
        seen[index] = value
    }

    /// The number of block runs; fails the run unless every block ran exactly once and saw
    /// `last`.
    func verified(_ system: String, last: Int) -> Int {
        var total = 0
        for index in counts.indices {
            guard counts[index] == 1, seen[index] == last else {
                fatalError(
                    "W10: \(system)'s block \(index) ran \(counts[index]) times and saw "
                        + "\(seen[index]) (must run once and see \(last))")
            }
            total &+= counts[index]
        }
        return total
    }
}

// MARK: Herald

/// One observed property (W10, W10-batch).
final class HeraldCell {
    @ObservableVar var value = 0
}

// MARK: Observation

/// One observed property, tracked by Swift's Observation.
@Observable
private final class ObservedCell {
    var value = 0
}

/// The coalescing an app writes around Observation: a tracking per property whose `onChange`
/// appends the property's index to a dirty list; `flush()` runs the block of each dirty property
/// inside a new tracking (re-arming it).
private final class ObservationFlusher: @unchecked Sendable {
    // Touched only on the benchmark's single thread.
    let cells: [ObservedCell]
    let block: (Int, ObservedCell) -> Void
    var dirty: [Int] = []

    init(_ cells: [ObservedCell], block: @escaping (Int, ObservedCell) -> Void) {
        self.cells = cells
        self.block = block
    }

    /// Starts tracking every property without running the blocks (nothing changed yet).
    func armAll() {
        for index in cells.indices {
            let cell = cells[index]
            withObservationTracking {
                _ = cell.value
            } onChange: { [weak self] in
                self?.dirty.append(index)
            }
        }
    }

    func flush() {
        let flushing = dirty
        dirty = []
        for index in flushing {
            let cell = cells[index]
            withObservationTracking {
                block(index, cell)
            } onChange: { [weak self] in
                self?.dirty.append(index)
            }
        }
    }
}

// MARK: RAW

/// RAW's flush: the dirty cells in the order they became dirty, and one block per cell (W10,
/// W10-batch).
final class RawFlusher {
    var dirty: [RawCell] = []
    var blocks: [(RawCell) -> Void] = []

    func flush() {
        let flushing = dirty
        dirty = []
        for cell in flushing {
            cell.isDirty = false
            blocks[cell.index](cell)
        }
    }
}

/// RAW observed property: a change marks the cell dirty once until the next flush.
final class RawCell {
    let index: Int
    unowned let flusher: RawFlusher
    var isDirty = false
    var value = 0 {
        didSet {
            guard value != oldValue, !isDirty else { return }
            isDirty = true
            flusher.dirty.append(self)
        }
    }

    init(index: Int, flusher: RawFlusher) {
        self.index = index
        self.flusher = flusher
    }
}
