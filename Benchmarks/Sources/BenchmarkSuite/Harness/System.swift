/// The systems compared side by side (BENCHMARKS.md, "Peers").
public enum System: String, CaseIterable, Sendable {
    /// The physical limit: a final class holding `[(Int) -> Void]`.
    case raw = "RAW"
    /// This project.
    case herald = "Herald"
    /// `PassthroughSubject` / `CurrentValueSubject` with `sink`, cancellables stored.
    case openCombine = "OpenCombine"
    /// Swift's `@Observable` with an observer that re-arms `withObservationTracking`.
    case observation = "Observation"

    var name: String { rawValue }
}
