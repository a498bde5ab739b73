import Messaging
import OpenCombine

/// W5-many: one observer with many observations of distinct messengers stops each
/// (`observer.stopObserving(messenger)`), ns per stop. Measured at 100,000 observations per
/// observer (`W5-many`) and at 1,000 (`W5-many-1k`: 100 observers of 1,000 each, so both rows
/// stop 100,000 observations); the per-stop cost must not grow with the count.
func w5ManyStops(observationsPerObserver perObserver: Int) -> Workload {
    let total = 100_000
    let groups = total / perObserver
    let large = perObserver == total
    return Workload(
        id: large ? "W5-many" : "W5-many-1k",
        summary: "stop 1 of \(Report.withSeparators(perObserver)) observations of one observer",
        operations: total, unit: "stop",
        notApplicable: [
            .observation:
                "withObservationTracking cannot be stopped; a tracking ends only at the next change"
        ],
        targets: [.time(atMost: 2, of: .raw)]
            + (large ? [.scaling(atMost: 2, of: "W5-many-1k")] : []),
        cases: [
            Case(.raw) {
                let counter = Counter()
                let trial = (0..<groups).map { _ in
                    (RawManyObserver(), (0..<perObserver).map { _ in RawMortalMessenger() })
                }
                for (observer, messengers) in trial {
                    for messenger in messengers {
                        observer.observe(messenger) { counter.value &+= $0 }
                    }
                }
                return {
                    for (observer, messengers) in trial {
                        for messenger in messengers { observer.stopObserving(messenger) }
                        precondition(observer.count == 0, "RAW W5-many left observations")
                    }
                    return counter.value
                }
            },
            Case(.herald) {
                let counter = Counter()
                let trial = (0..<groups).map { _ in
                    (HeraldObserver(), (0..<perObserver).map { _ in Messenger<Int>() })
                }
                for (observer, messengers) in trial {
                    for messenger in messengers {
                        observer.observe(messenger) { counter.value &+= $0 }
                    }
                }
                return {
                    for (observer, messengers) in trial {
                        for messenger in messengers { observer.stopObserving(messenger) }
                        // A spot check (every stop is pinned down by the tests).
                        precondition(
                            !observer.isObserving(messengers[perObserver / 2])
                                && messengers[perObserver - 1].observationCount == 0,
                            "Herald W5-many left observations")
                    }
                    return counter.value
                }
            },
            Case(.openCombine) {
                let counter = Counter()
                let trial = (0..<groups).map { _ in
                    (
                        KeyedCombineObserver(),
                        (0..<perObserver).map { _ in PassthroughSubject<Int, Never>() }
                    )
                }
                for (observer, subjects) in trial {
                    for subject in subjects {
                        observer.cancellables[ObjectIdentifier(subject)] = subject.sink {
                            counter.value &+= $0
                        }
                    }
                }
                return {
                    for (observer, subjects) in trial {
                        for subject in subjects {
                            observer.cancellables.removeValue(forKey: ObjectIdentifier(subject))?
                                .cancel()
                        }
                        precondition(
                            observer.cancellables.isEmpty, "OpenCombine W5-many left observations")
                    }
                    return counter.value
                }
            },
        ])
}
