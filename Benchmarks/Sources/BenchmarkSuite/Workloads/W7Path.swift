import KeyPathBridge

/// W7-path: memory per ad hoc path observation of depth 2, `observe(root, \.$a, \.$value)`:
/// 100,000 observers (created beforehand, untimed) start observing the same root. Reported as
/// W7: bytes per observation (net allocated while the observations start), mallocs and ns per
/// observation start. Target: at most 600 bytes.
func w7PathMemory() -> Workload {
    let observerCount = 100_000
    return Workload(
        id: "W7-path", summary: "memory per depth-2 path observation (100,000 observers)",
        operations: observerCount, unit: "observation", reportsBytes: true,
        notApplicable: [
            .raw: "no hand-written reference: the target is an absolute number of bytes",
            .openCombine: "OpenCombine has no key-path observation",
            .observation:
                "Observation has no lasting observation to count: a tracking ends at its first "
                + "change",
        ],
        targets: [.bytes(atMost: 600)],
        cases: [
            Case(.herald) {
                let counter = Counter()
                let root = MemoryPathRoot()
                let observers = (0..<observerCount).map { _ in HeraldObserver() }
                return {
                    for observer in observers {
                        observer.observe(root, \.$a, \.$value) { counter.value &+= $0 ?? 0 }
                    }
                    return root.a.$value.observationCount
                }
            }
        ])
}

/// W7-path's root: `a` holds the object whose `value` the path ends at.
final class MemoryPathRoot {
    final class A {
        @ObservableVar var value = 0
    }

    @ObservableVar var a = A()
}
