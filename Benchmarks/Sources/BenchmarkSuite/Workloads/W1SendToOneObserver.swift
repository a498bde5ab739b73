import Messaging
import OpenCombine

/// W1 send to 1 observer: 1,000,000 sends of Int.
func w1SendToOneObserver() -> Workload {
    let sends = 1_000_000
    return Workload(
        id: "W1", summary: "send to 1 observer", operations: sends, unit: "send",
        notApplicable: [.observation: "Observation tracks properties; it has no messages to send"],
        targets: [.time(atMost: 0.5, of: .openCombine), .time(atMost: 2, of: .raw)],
        cases: [
            Case(.raw) {
                let counter = Counter()
                let messenger = RawMessenger()
                messenger.handlers.append { counter.value &+= $0 }
                return {
                    for i in 0..<sends { messenger.send(i) }
                    return counter.value
                }
            },
            Case(.herald) {
                let counter = Counter()
                let messenger = Messenger<Int>()
                let observer = HeraldObserver()
                observer.observe(messenger) { counter.value &+= $0 }
                return {
                    for i in 0..<sends { messenger.send(i) }
                    withExtendedLifetime(observer) {}
                    return counter.value
                }
            },
            Case(.openCombine) {
                let counter = Counter()
                let subject = PassthroughSubject<Int, Never>()
                let observer = CombineObserver()
                subject.sink { counter.value &+= $0 }.store(in: &observer.cancellables)
                return {
                    for i in 0..<sends { subject.send(i) }
                    withExtendedLifetime(observer) {}
                    return counter.value
                }
            },
        ])
}
