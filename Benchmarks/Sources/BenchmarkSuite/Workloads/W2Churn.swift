import Messaging
import OpenCombine

/// W2-churn: one messenger with many observers that die one by one (in the order they started
/// observing), ns per death. Measured at 100,000 observers per messenger (`W2-churn`) and at
/// 1,000 (`W2-churn-1k`: 100 messengers with 1,000 observers each).
func w2Churn(observersPerMessenger perMessenger: Int) -> Workload {
    let total = 100_000
    let groups = total / perMessenger
    let large = perMessenger == total
    return Workload(
        id: large ? "W2-churn" : "W2-churn-1k",
        summary: "1 of \(Report.withSeparators(perMessenger)) observers of one messenger dies",
        operations: total, unit: "death",
        notApplicable: [
            .observation:
                "a tracking cannot be ended when its observer dies; it lingers until the next change"
        ],
        targets: [.time(atMost: 2, of: .raw)]
            + (large ? [.scaling(atMost: 2, of: "W2-churn-1k")] : []),
        cases: [
            Case(.raw) {
                let counter = Counter()
                let messengers = (0..<groups).map { _ in RawSlotMessenger() }
                let observers = Mortal(
                    (0..<total).map { index in
                        RawSlotObserver(messengers[index / perMessenger]) { counter.value &+= $0 }
                    })
                return {
                    observers.dieOneByOne()
                    for messenger in messengers {
                        precondition(messenger.count == 0, "RAW W2-churn left observations")
                    }
                    return counter.value
                }
            },
            Case(.herald) {
                let counter = Counter()
                let messengers = (0..<groups).map { _ in Messenger<Int>() }
                let observers = Mortal((0..<total).map { _ in HeraldObserver() })
                for (index, observer) in observers.objects.enumerated() {
                    observer!.observe(messengers[index / perMessenger]) { counter.value &+= $0 }
                }
                return {
                    observers.dieOneByOne()
                    for messenger in messengers {
                        precondition(
                            messenger.observationCount == 0, "Herald W2-churn left observations")
                    }
                    return counter.value
                }
            },
            Case(.openCombine) {
                let counter = Counter()
                let subjects = (0..<groups).map { _ in PassthroughSubject<Int, Never>() }
                let observers = Mortal((0..<total).map { _ in CombineObserver() })
                for (index, observer) in observers.objects.enumerated() {
                    subjects[index / perMessenger].sink { counter.value &+= $0 }
                        .store(in: &observer!.cancellables)
                }
                return {
                    observers.dieOneByOne()
                    return counter.value
                }
            },
        ])
}
