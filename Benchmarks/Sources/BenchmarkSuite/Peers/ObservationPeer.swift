import Observation

/// A model whose property Swift's Observation tracks.
@Observable
final class ObservedNumber {
    var value = 0
}

/// Continuous observation with Swift's Observation: `withObservationTracking` fires once, in
/// `willSet`, so the observer re-arms it in `onChange`. `onChange` gets neither the old nor the
/// new value (it runs before the set); re-arming reads the property, which is the only value the
/// handler can see. It captures the observer weakly, as app code does.
final class ContinuousObserver: @unchecked Sendable {
    // Touched only on the benchmark's single thread.
    let model: ObservedNumber
    let counter: Counter

    init(_ model: ObservedNumber, counter: Counter) {
        self.model = model
        self.counter = counter
    }

    func arm() {
        let seen = withObservationTracking {
            model.value
        } onChange: { [weak self] in
            guard let self else { return }
            self.counter.value &+= 1
            self.arm()
        }
        counter.value &+= seen
    }
}
