import KeyPathBridge
import Observation

/// W9-end: the nested path `root.a.b.value` of W9, observed continuously, where only `value`
/// changes (the common case): 1,000,000 sets, each a change, each delivered. Target: at most
/// 2× Herald's own W3 (a plain `Var` set with one observer) in the same run.
func w9PathEnd() -> Workload {
    let changes = 1_000_000
    return Workload(
        id: "W9-end", summary: "path root.a.b.value, only value changes",
        operations: changes, unit: "change",
        notApplicable: [
            .openCombine:
                "OpenCombine has no key-path observation (Combine's `publisher(for:)` is KVO, "
                + "absent on Linux)"
        ],
        targets: [.scaling(atMost: 2, of: "W3")],
        notifications: changes,
        cases: [
            Case(.raw) {
                let counter = Counter()
                let b = RawPathB(0)
                let root = RawPathRoot(RawPathA(b))
                let observation = RawPathObservation(root) { _ in counter.value &+= 1 }
                return {
                    for value in 1...changes { b.value = value }
                    withExtendedLifetime((observation, root)) {}
                    return counter.value
                }
            },
            Case(.herald) {
                let counter = Counter()
                let b = HeraldPathB(0)
                let root = HeraldPathRoot(HeraldPathA(b))
                let observer = HeraldObserver()
                observer.observe(root, \.$a, \.$b, \.$value) { _ in counter.value &+= 1 }
                return {
                    for value in 1...changes { b.value = value }
                    withExtendedLifetime((observer, root)) {}  // a path ends with its root
                    guard counter.value == changes else {
                        fatalError(
                            "W9-end: Herald delivered \(counter.value) notifications for "
                                + "\(changes) changes")
                    }
                    return counter.value
                }
            },
            Case(.observation) {
                let counter = Counter()
                let b = ObservedPathB(0)
                let root = ObservedPathRoot(ObservedPathA(b))
                let observer = ContinuousPathObserver(root, counter: counter)
                observer.arm()
                return {
                    for value in 1...changes { b.value = value }
                    withExtendedLifetime(observer) {}
                    return counter.value
                }
            },
        ])
}
