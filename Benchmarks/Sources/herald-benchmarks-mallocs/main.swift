import BenchmarkSuite
import MallocInterposerSwift

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The allocation-counting process. Linking libMallocInterposerSwift.so places its malloc/free
// ahead of libc's in symbol resolution, so every allocation of this process (Swift runtime
// included) goes through the interposer; the timing process does not link it, so its
// allocations are not slowed by the interposer's per-allocation header.
//
// With HERALD_ALLOCATION_SIZES=1 it also prints, per workload and system, how many allocations
// of each requested size the counted trial made ("SIZES" lines): a profiling aid.

/// Counts per requested size (the last slot collects every size ≥ 4095). Written only by the
/// allocation hook, which runs on this single-threaded process's only thread.
nonisolated(unsafe) let sizeCounts = UnsafeMutablePointer<Int>.allocate(capacity: 4096)

struct InterposerCounter: AllocationCounter {
    let recordsSizes = getenv("HERALD_ALLOCATION_SIZES") != nil

    func start() {
        if recordsSizes {
            sizeCounts.initialize(repeating: 0, count: 4096)
            MallocInterposerSwift.setAllocationHook { size in sizeCounts[min(size, 4095)] &+= 1 }
        }
        MallocInterposerSwift.reset()
        MallocInterposerSwift.hook()
    }

    func stop() -> (mallocs: Int, netBytes: Int) {
        MallocInterposerSwift.unhook()
        MallocInterposerSwift.setAllocationHook(nil)
        let statistics = MallocInterposerSwift.getStatistics()
        return (statistics.mallocCount, statistics.mallocBytesCount - statistics.freeBytesCount)
    }

    func sizeHistogram() -> String? {
        guard recordsSizes else { return nil }
        return (0..<4096).filter { sizeCounts[$0] > 0 }.map { "\($0)B×\(sizeCounts[$0])" }
            .joined(separator: " ")
    }
}

MallocInterposerSwift.initialize()
BenchmarkCommand.countAllocations(with: InterposerCounter())
