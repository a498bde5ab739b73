/// Every workload the landed layers support, in report order. Adding one (W9 with the
/// KeyPathBridge layer, say) is one file in this folder and one line here.
enum Workloads {
    static func all() -> [Workload] {
        [
            w1SendToOneObserver(),
            w2SendToHundredObservers(),
            w2Churn(observersPerMessenger: 100_000),
            w2Churn(observersPerMessenger: 1_000),
            w3VariableSet(),
            w4TransformChain(.adHoc),
            w4TransformChain(.standAlone),
            w5ObserveStopChurn(),
            w5ManyStops(observationsPerObserver: 100_000),
            w5ManyStops(observationsPerObserver: 1_000),
            w6ObserverLifetimeChurn(),
            w6ManyDeaths(observationsPerObserver: 100_000),
            w6ManyDeaths(observationsPerObserver: 1_000),
            w7MemoryPerObservation(),
            w7PathMemory(),
            w8AuthorFilteredSharedState(),
            w9NestedPath(),
            w9PathEnd(),
            w10Coalescing(),
            w10Batch(blocksPerBatch: 16_000),
            w10Batch(blocksPerBatch: 1_000),
            w11Collections(),
            w11Append(),
            w11Dictionary(),
            w11Diff(),
            w11IndexMemory(),
            w11Each(elements: 20_000),
            w11Each(elements: 2_500),
            w12SyntheticChain(observed: false),
            w12SyntheticChain(observed: true),
        ] + W13.all().map(w13Kairo)
            + [1_000, 5_000].flatMap { layers in
                [W14.Row.build, .update, .updateBatch, .teardown].map {
                    w14SyntheticGraph($0, layers: layers)
                }
            }
    }
}
