import Messaging
import OpenCombine

/// W7 memory per observation: 100,000 observers (created beforehand, untimed) start observing
/// one messenger. Reported: bytes per observation (net allocated bytes while the observations
/// start), mallocs and ns per observation start.
func w7MemoryPerObservation() -> Workload {
    let observerCount = 100_000
    return Workload(
        id: "W7", summary: "memory per observation (100,000 observers)",
        operations: observerCount, unit: "observation", reportsBytes: true,
        targets: [.time(atMost: 0.5, of: .openCombine), .bytes(atMost: 100)],
        cases: [
            Case(.raw) {
                let counter = Counter()
                let messenger = RawMessenger()
                return {
                    for _ in 0..<observerCount {
                        messenger.handlers.append { counter.value &+= $0 }
                    }
                    return messenger.handlers.count
                }
            },
            Case(.herald) {
                let counter = Counter()
                let messenger = Messenger<Int>()
                let observers = (0..<observerCount).map { _ in HeraldObserver() }
                return {
                    for observer in observers {
                        observer.observe(messenger) { counter.value &+= $0 }
                    }
                    return messenger.observationCount
                }
            },
            Case(.openCombine) {
                let counter = Counter()
                let subject = PassthroughSubject<Int, Never>()
                let observers = (0..<observerCount).map { _ in CombineObserver() }
                return {
                    for observer in observers {
                        subject.sink { counter.value &+= $0 }.store(in: &observer.cancellables)
                    }
                    return observers.count
                }
            },
            Case(.observation) {
                let counter = Counter()
                let model = ObservedNumber()
                let observers = (0..<observerCount).map { _ in
                    ContinuousObserver(model, counter: counter)
                }
                return {
                    for observer in observers { observer.arm() }
                    return observers.count
                }
            },
        ])
}
