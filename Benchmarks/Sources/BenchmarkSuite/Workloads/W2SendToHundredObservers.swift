import Messaging
import OpenCombine

/// W2 send to 100 observers: 100,000 sends; reported per send and per delivery.
func w2SendToHundredObservers() -> Workload {
    let sends = 100_000
    let observers = 100
    return Workload(
        id: "W2", summary: "send to 100 observers", operations: sends, unit: "send",
        perPart: (suffix: "-per-delivery", parts: observers),
        notApplicable: [.observation: "Observation tracks properties; it has no messages to send"],
        targets: [.time(atMost: 0.5, of: .openCombine), .time(atMost: 2, of: .raw)],
        cases: [
            Case(.raw) {
                let counter = Counter()
                let messenger = RawMessenger()
                for _ in 0..<observers { messenger.handlers.append { counter.value &+= $0 } }
                return {
                    for i in 0..<sends { messenger.send(i) }
                    return counter.value
                }
            },
            Case(.herald) {
                let counter = Counter()
                let messenger = Messenger<Int>()
                let all = (0..<observers).map { _ in HeraldObserver() }
                for observer in all { observer.observe(messenger) { counter.value &+= $0 } }
                return {
                    for i in 0..<sends { messenger.send(i) }
                    withExtendedLifetime(all) {}
                    return counter.value
                }
            },
            Case(.openCombine) {
                let counter = Counter()
                let subject = PassthroughSubject<Int, Never>()
                let all = (0..<observers).map { _ in CombineObserver() }
                for observer in all {
                    subject.sink { counter.value &+= $0 }.store(in: &observer.cancellables)
                }
                return {
                    for i in 0..<sends { subject.send(i) }
                    withExtendedLifetime(all) {}
                    return counter.value
                }
            },
        ])
}
