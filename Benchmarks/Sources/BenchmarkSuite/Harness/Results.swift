/// Everything one run measured, in report order.
struct Results {
    struct Row {
        /// "W1", or "W2-per-delivery" for a per-part row.
        let id: String
        let workload: Workload
        /// 1, or the number of parts per operation for a per-part row.
        let divisor: Double
        var unit: String {
            divisor == 1 ? workload.unit : String(workload.perPart!.suffix.dropFirst(5))
        }

        func nsPerOp(_ figures: Figures?) -> Double? { figures?.medianNsPerOp.map { $0 / divisor } }
        func mallocsPerOp(_ figures: Figures?) -> Double? {
            figures?.mallocsPerOp.map { $0 / divisor }
        }
    }

    var workloads: [Workload] = []
    var figures: [String: [System: Figures]] = [:]

    /// One row per workload, plus one per per-part report (W2 per delivery).
    var rows: [Row] {
        workloads.flatMap { workload -> [Row] in
            var rows = [Row(id: workload.id, workload: workload, divisor: 1)]
            if let perPart = workload.perPart {
                rows.append(
                    Row(
                        id: workload.id + perPart.suffix, workload: workload,
                        divisor: Double(perPart.parts)))
            }
            return rows
        }
    }

    func figures(_ row: Row, _ system: System) -> Figures? { figures[row.workload.id]?[system] }

    func nsPerOp(_ row: Row, _ system: System) -> Double? { row.nsPerOp(figures(row, system)) }

    func bytesPerOp(_ workload: Workload, _ system: System) -> Double? {
        figures[workload.id]?[system]?.bytesPerOp
    }
}
