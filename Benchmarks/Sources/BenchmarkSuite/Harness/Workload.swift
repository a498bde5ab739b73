/// One workload of BENCHMARKS.md, measured for every system that can express it.
///
/// A workload is one small file in `Workloads/` that returns a `Workload`; `Workloads.all`
/// lists them. Each `Case` prepares a trial outside the timed region and returns the closure
/// that is timed; releasing that closure (its captured state) is the untimed teardown.
public struct Workload {
    /// The id used in the CSV, such as "W1".
    public let id: String
    /// A short description, such as "send to 1 observer".
    public let summary: String
    /// How many operations one trial performs (its timed closure's work).
    public let operations: Int
    /// What one operation is ("send", "set", "cycle", "observation").
    public let unit: String
    /// An extra row reporting the same trial per sub-operation, e.g. W2 per delivery.
    public let perPart: (suffix: String, parts: Int)?
    /// Whether bytes per operation (net allocated bytes) is a reported figure.
    public let reportsBytes: Bool
    /// Systems deliberately left out, with the reason (empty CSV cells, README explains).
    public let notApplicable: [System: String]
    /// The targets from the project's issue, checked in the ratio table.
    public let targets: [Target]
    /// For a workload whose correctness is part of the result (W9, W10): the number of
    /// notifications (handler calls, block runs) one trial must deliver. When it is set, every
    /// case's checksum *is* the number of notifications its trial got, and the report shows it
    /// next to this number.
    public let notifications: Int?
    /// The systems that run it.
    public let cases: [Case]

    /// Describes a workload; see the properties for each argument.
    public init(
        id: String, summary: String, operations: Int, unit: String,
        perPart: (suffix: String, parts: Int)? = nil, reportsBytes: Bool = false,
        notApplicable: [System: String] = [:], targets: [Target] = [],
        notifications: Int? = nil, cases: [Case]
    ) {
        self.id = id
        self.summary = summary
        self.operations = operations
        self.unit = unit
        self.perPart = perPart
        self.reportsBytes = reportsBytes
        self.notApplicable = notApplicable
        self.targets = targets
        self.notifications = notifications
        self.cases = cases
    }
}

/// One system's implementation of a workload.
public struct Case {
    /// The system this case measures.
    public let system: System
    /// Builds everything the trial needs (untimed) and returns the timed work, which returns a
    /// checksum so that the optimizer cannot delete the work.
    public let prepare: () -> () -> Int

    /// A case of `system` whose trial `prepare` builds.
    public init(_ system: System, prepare: @escaping () -> () -> Int) {
        self.system = system
        self.prepare = prepare
    }
}

/// A goal Herald must meet on a workload, measured as a ratio in the same run.
public enum Target: Sendable {
    /// Herald's ns/op at most `factor` times the peer's.
    case time(atMost: Double, of: System)
    /// Herald's net allocated bytes per operation at most this many.
    case bytes(atMost: Double)
    /// Herald's ns/op at most `factor` times its own ns/op on another workload of the same run
    /// (the same operation at a smaller size: the cost must not grow with the size).
    case scaling(atMost: Double, of: String)

    var label: String {
        switch self {
        case .time(let factor, let peer): "≤ \(formatFactor(factor))× \(peer.name)"
        case .bytes(let limit): "≤ \(Int(limit)) B"
        case .scaling(let factor, let workload): "≤ \(formatFactor(factor))× Herald's \(workload)"
        }
    }
}

func formatFactor(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
}

extension Workload {
    /// The same workload with only the systems that `keep` selects.
    func keeping(_ keep: (System) -> Bool) -> Workload {
        Workload(
            id: id, summary: summary, operations: operations, unit: unit, perPart: perPart,
            reportsBytes: reportsBytes, notApplicable: notApplicable, targets: targets,
            notifications: notifications, cases: cases.filter { keep($0.system) })
    }
}
