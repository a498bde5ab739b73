import Messaging
import OpenCombine

/// W6 observer lifetime churn: 10,000 cycles of creating an observer, observing 10 messengers,
/// and letting it die; every observation must be cleaned up (checked after the loop).
func w6ObserverLifetimeChurn() -> Workload {
    let cycles = 10_000
    let messengerCount = 10
    return Workload(
        id: "W6", summary: "observer lifetime churn (10 observations)", operations: cycles,
        unit: "cycle",
        notApplicable: [
            .observation:
                "a tracking cannot be ended when its observer dies; it lingers until the next change"
        ],
        targets: [.time(atMost: 0.5, of: .openCombine)],
        cases: [
            Case(.raw) {
                let counter = Counter()
                let messengers = (0..<messengerCount).map { _ in RawRemovableMessenger() }
                return {
                    for _ in 0..<cycles {
                        let observer = RawObserver()
                        for messenger in messengers {
                            observer.observe(messenger) { counter.value &+= $0 }
                        }
                    }
                    for messenger in messengers { messenger.send(1) }
                    precondition(counter.value == 0, "RAW W6 leaked observations")
                    return messengers.reduce(0) { $0 &+ $1.count }
                }
            },
            Case(.herald) {
                let counter = Counter()
                let messengers = (0..<messengerCount).map { _ in Messenger<Int>() }
                return {
                    for _ in 0..<cycles {
                        let observer = HeraldObserver()
                        for messenger in messengers {
                            observer.observe(messenger) { counter.value &+= $0 }
                        }
                    }
                    for messenger in messengers { messenger.send(1) }
                    precondition(counter.value == 0, "Herald W6 leaked observations")
                    return messengers.reduce(0) { $0 &+ $1.observationCount }
                }
            },
            Case(.openCombine) {
                let counter = Counter()
                let subjects = (0..<messengerCount).map { _ in PassthroughSubject<Int, Never>() }
                return {
                    for _ in 0..<cycles {
                        let observer = CombineObserver()
                        for subject in subjects {
                            subject.sink { counter.value &+= $0 }.store(in: &observer.cancellables)
                        }
                    }
                    for subject in subjects { subject.send(1) }
                    precondition(counter.value == 0, "OpenCombine W6 leaked observations")
                    return counter.value
                }
            },
        ])
}
