/// Every workload the landed layers support, in report order. Adding one (W9 with the
/// KeyPathBridge layer, say) is one file in this folder and one line here.
enum Workloads {
    static func all() -> [Workload] {
        [
            w1SendToOneObserver(),
            w2SendToHundredObservers(),
            w3VariableSet(),
            w4TransformChain(.adHoc),
            w4TransformChain(.standAlone),
            w5ObserveStopChurn(),
            w6ObserverLifetimeChurn(),
            w7MemoryPerObservation(),
            w8AuthorFilteredSharedState(),
            w9NestedPath(),
            w10Coalescing(),
        ]
    }
}
