import Messaging
import OpenCombine

/// W3 variable set, 1 observer receiving old/new: 1,000,000 sets (every set is a change).
func w3VariableSet() -> Workload {
    let sets = 1_000_000
    return Workload(
        id: "W3", summary: "variable set, 1 observer (old/new)", operations: sets, unit: "set",
        targets: [.time(atMost: 0.5, of: .openCombine), .time(atMost: 2, of: .raw)],
        cases: [
            Case(.raw) {
                let counter = Counter()
                let variable = RawVariable(0)
                variable.handlers.append { old, new in counter.value &+= new &- old }
                return {
                    for i in 1...sets { variable.value = i }
                    return counter.value
                }
            },
            Case(.herald) {
                let counter = Counter()
                let variable = Var(0)
                let observer = HeraldObserver()
                observer.observe(variable) { update in counter.value &+= update.new &- update.old }
                return {
                    for i in 1...sets { variable.value = i }
                    withExtendedLifetime(observer) {}
                    return counter.value
                }
            },
            Case(.openCombine) {
                // CurrentValueSubject sends only the new value; the handler keeps the previous
                // one to have old/new (as cheap as it gets in Combine: no scan/zip operator).
                let counter = Counter()
                let subject = CurrentValueSubject<Int, Never>(0)
                let observer = CombineObserver()
                let previous = Counter()
                subject.sink { new in
                    counter.value &+= new &- previous.value
                    previous.value = new
                }.store(in: &observer.cancellables)
                return {
                    for i in 1...sets { subject.value = i }
                    withExtendedLifetime(observer) {}
                    return counter.value
                }
            },
            Case(.observation) {
                // onChange runs in willSet and gets no values; re-arming reads the old value.
                let counter = Counter()
                let model = ObservedNumber()
                let observer = ContinuousObserver(model, counter: counter)
                observer.arm()
                return {
                    for i in 1...sets { model.value = i }
                    withExtendedLifetime(observer) {}
                    return counter.value
                }
            },
        ])
}
