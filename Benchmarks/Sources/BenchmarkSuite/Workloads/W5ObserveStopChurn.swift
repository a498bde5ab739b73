import Messaging
import OpenCombine

/// W5 observe/stop churn: 100,000 cycles of starting one observation and stopping it.
func w5ObserveStopChurn() -> Workload {
    let cycles = 100_000
    return Workload(
        id: "W5", summary: "observe/stop churn", operations: cycles, unit: "cycle",
        notApplicable: [
            .observation:
                "withObservationTracking cannot be stopped; a tracking ends only at the next change"
        ],
        targets: [.time(atMost: 0.5, of: .openCombine)],
        cases: [
            Case(.raw) {
                let counter = Counter()
                let messenger = RawRemovableMessenger()
                return {
                    for _ in 0..<cycles {
                        let token = messenger.add { counter.value &+= $0 }
                        messenger.remove(token)
                    }
                    messenger.send(1)  // nobody may receive it
                    return counter.value &+ messenger.count
                }
            },
            Case(.herald) {
                let counter = Counter()
                let messenger = Messenger<Int>()
                let observer = HeraldObserver()
                return {
                    for _ in 0..<cycles {
                        observer.observe(messenger) { counter.value &+= $0 }
                        observer.stopObserving(messenger)
                    }
                    messenger.send(1)
                    return counter.value &+ messenger.observationCount
                }
            },
            Case(.openCombine) {
                let counter = Counter()
                let subject = PassthroughSubject<Int, Never>()
                return {
                    for _ in 0..<cycles {
                        let cancellable = subject.sink { counter.value &+= $0 }
                        cancellable.cancel()
                    }
                    subject.send(1)
                    return counter.value
                }
            },
        ])
}
