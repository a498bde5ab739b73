/// Every workload the landed layers support, in report order. Adding one (W4 with the
/// Transforms layer, say) is one file in this folder and one line here.
enum Workloads {
    static func all() -> [Workload] {
        [
            w1SendToOneObserver(),
            w2SendToHundredObservers(),
            w3VariableSet(),
            w5ObserveStopChurn(),
            w6ObserverLifetimeChurn(),
            w7MemoryPerObservation(),
        ]
    }
}
