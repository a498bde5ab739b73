import Messaging

/// W6-many: one observer with many observations of distinct messengers; the messengers die one
/// by one (in the order they were observed), ns per death. Measured at 100,000 observations per
/// observer (`W6-many`) and at 1,000 (`W6-many-1k`: 100 observers of 1,000 each).
func w6ManyDeaths(observationsPerObserver perObserver: Int) -> Workload {
    let total = 100_000
    let groups = total / perObserver
    let large = perObserver == total
    return Workload(
        id: large ? "W6-many" : "W6-many-1k",
        summary: "1 of \(Report.withSeparators(perObserver)) observed messengers dies",
        operations: total, unit: "death",
        notApplicable: [
            .openCombine:
                "a subscription holds its subject strongly, so an observed subject cannot die",
            .observation:
                "a tracking lingers in the model's registrar until the next change; it cannot end when the model dies",
        ],
        targets: [.time(atMost: 2, of: .raw)]
            + (large ? [.scaling(atMost: 2, of: "W6-many-1k")] : []),
        cases: [
            Case(.raw) {
                let counter = Counter()
                let observers = (0..<groups).map { _ in RawManyObserver() }
                let messengers = Mortal((0..<total).map { _ in RawMortalMessenger() })
                for (index, messenger) in messengers.objects.enumerated() {
                    observers[index / perObserver].observe(messenger!) { counter.value &+= $0 }
                }
                return {
                    messengers.dieOneByOne()
                    for observer in observers {
                        precondition(observer.count == 0, "RAW W6-many left observations")
                    }
                    return counter.value
                }
            },
            Case(.herald) {
                let observers = (0..<groups).map { _ in HeraldObserver() }
                let messengers = Mortal((0..<total).map { _ in Messenger<Int>() })
                // Each observer's handlers share a counter that only they hold: it is freed
                // exactly when every observation of that observer has ended and been freed.
                var counters: [WeakCounter] = []
                for (group, observer) in observers.enumerated() {
                    let counter = Counter()
                    counters.append(WeakCounter(counter))
                    for messenger in messengers.objects[
                        (group * perObserver)..<((group + 1) * perObserver)]
                    {
                        observer.observe(messenger!) { counter.value &+= $0 }
                    }
                }
                return {
                    messengers.dieOneByOne()
                    precondition(
                        counters.allSatisfy { $0.counter == nil },
                        "Herald W6-many left observations")
                    withExtendedLifetime(observers) {}
                    return counters.count
                }
            },
        ])
}

/// Objects that a timed region lets die one by one, in order.
final class Mortal<Object: AnyObject> {
    var objects: [Object?]

    // `map`, not an implicit conversion: converting `[Object]` to `[Object?]` goes through a
    // dynamic cast per element.
    init(_ objects: [Object]) { self.objects = objects.map { $0 } }

    func dieOneByOne() {
        for index in objects.indices { objects[index] = nil }
    }
}

/// A counter held weakly, to see that whatever held it has been freed.
struct WeakCounter {
    weak var counter: Counter?

    init(_ counter: Counter) { self.counter = counter }
}
