import Observation
import OpenCombine
import Transforms

/// W4 transform chain on a variable of Int?: new → unwrap(0) → map(+1) → filter(even) → 1
/// observer; 1,000,000 sets (every set is a change; half the values pass the filter).
///
/// Herald has two forms of the chain, so W4 is two workloads, "W4-adhoc" and "W4-standalone",
/// that differ only in Herald's case; the peers (which have one form each) run in both, so each
/// row has its own same-run baselines and ratios.
func w4TransformChain(_ form: W4Form) -> Workload {
    let sets = 1_000_000
    let herald: Case
    switch form {
    case .adHoc:
        herald = Case(.herald) {
            // One observation of the variable; the stages are nested closures inside it.
            let counter = Counter()
            let variable = Var<Int?>(nil)
            let observer = HeraldObserver()
            observer.observe(variable).new().unwrap(0).map { $0 + 1 }.filter { $0 % 2 == 0 }
                .receive { counter.value &+= $0 }
            return {
                for i in 1...sets { variable.value = i }
                withExtendedLifetime(observer) {}
                return counter.value
            }
        }
    case .standAlone:
        herald = Case(.herald) {
            // A chain of stand-alone transforms (one observable object per stage), held by the
            // trial; the observer observes its last stage.
            let counter = Counter()
            let variable = Var<Int?>(nil)
            let chain = variable.new().unwrap(0).map { $0 + 1 }.filter { $0 % 2 == 0 }
            let observer = HeraldObserver()
            observer.observe(chain) { counter.value &+= $0 }
            return {
                for i in 1...sets { variable.value = i }
                withExtendedLifetime((chain, observer)) {}
                return counter.value
            }
        }
    }
    return Workload(
        id: form.id, summary: form.summary, operations: sets, unit: "set",
        targets: [.time(atMost: 0.5, of: .openCombine), .time(atMost: 3, of: .raw)],
        cases: [
            Case(.raw) {
                // The chain written by hand in the one closure a didSet calls with (old, new).
                let counter = Counter()
                let variable = RawOptionalVariable(nil)
                variable.handlers.append { _, new in
                    let mapped = (new ?? 0) + 1
                    if mapped % 2 == 0 { counter.value &+= mapped }
                }
                return {
                    for i in 1...sets { variable.value = i }
                    return counter.value
                }
            },
            herald,
            Case(.openCombine) {
                // CurrentValueSubject sends only the value, which is what `new()` gives Herald.
                // unwrap(0) is `map { $0 ?? 0 }` (compactMap would drop nil instead of replacing
                // it; no nil is set, so the two would deliver the same). The sink receives the
                // initial nil at subscription, outside the timed region (0 + 1 is odd: filtered).
                let counter = Counter()
                let subject = CurrentValueSubject<Int?, Never>(nil)
                let observer = CombineObserver()
                subject.map { $0 ?? 0 }.map { $0 + 1 }.filter { $0 % 2 == 0 }
                    .sink { counter.value &+= $0 }.store(in: &observer.cancellables)
                return {
                    for i in 1...sets { subject.value = i }
                    withExtendedLifetime(observer) {}
                    return counter.value
                }
            },
            Case(.observation) {
                // onChange runs in willSet and gets no value; re-arming reads the property (the
                // value before the set), and the handler runs the chain by hand on it. So the
                // checksum lags the other systems' by one set; the work per set is the same.
                let counter = Counter()
                let model = ObservedOptionalNumber()
                let observer = ContinuousOptionalChainObserver(model, counter: counter)
                observer.arm()
                return {
                    for i in 1...sets { model.value = i }
                    withExtendedLifetime(observer) {}
                    return counter.value
                }
            },
        ])
}

/// Herald's two forms of a transform chain (Docs/Transforms.md).
enum W4Form {
    /// `observer.observe(variable).new().unwrap(0)…receive { }`: one observation.
    case adHoc
    /// `let chain = variable.new().unwrap(0)…`, then `observer.observe(chain) { }`.
    case standAlone

    var id: String {
        switch self {
        case .adHoc: "W4-adhoc"
        case .standAlone: "W4-standalone"
        }
    }

    var summary: String {
        switch self {
        case .adHoc: "transform chain, ad hoc (new→unwrap→map→filter)"
        case .standAlone: "transform chain, stand-alone (new→unwrap→map→filter)"
        }
    }
}

/// RAW for a variable of Int?: a final class whose `didSet` calls the closures with (old, new).
private final class RawOptionalVariable {
    var handlers: [(Int?, Int?) -> Void] = []
    var value: Int? {
        didSet { for handler in handlers { handler(oldValue, value) } }
    }

    init(_ value: Int?) { self.value = value }
}

/// An `Int?` property that Swift's Observation tracks.
@Observable
private final class ObservedOptionalNumber {
    var value: Int? = nil
}

/// `ContinuousObserver` (Peers/ObservationPeer.swift) for W4: re-arms in `onChange` and runs
/// unwrap(0) → +1 → even on the value that re-arming reads.
private final class ContinuousOptionalChainObserver: @unchecked Sendable {
    // Touched only on the benchmark's single thread.
    let model: ObservedOptionalNumber
    let counter: Counter

    init(_ model: ObservedOptionalNumber, counter: Counter) {
        self.model = model
        self.counter = counter
    }

    func arm() {
        let seen = withObservationTracking {
            model.value
        } onChange: { [weak self] in
            guard let self else { return }
            self.arm()
        }
        let mapped = (seen ?? 0) + 1
        if mapped % 2 == 0 { counter.value &+= mapped }
    }
}
