/// Plain-text outputs: the CSV files, the Markdown tables and the SVG chart.
enum Report {
    static func number(_ value: Double?, decimals: Int) -> String {
        guard let value else { return "" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if decimals == 0 { return String(Int(rounded)) }
        var text = String(rounded)
        if let dot = text.firstIndex(of: ".") {
            let have = text.distance(from: dot, to: text.endIndex) - 1
            if have < decimals { text += String(repeating: "0", count: decimals - have) }
        }
        return text
    }

    /// ns/op for humans: one decimal below 100 ns, whole numbers above.
    static func nanoseconds(_ value: Double?) -> String {
        guard let value else { return "—" }
        return value < 100 ? number(value, decimals: 1) : withSeparators(Int(value.rounded()))
    }

    static func withSeparators(_ value: Int) -> String {
        let digits = Array(String(value))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return out
    }

    static func ratio(_ herald: Double?, _ peer: Double?) -> Double? {
        guard let herald, let peer, peer > 0 else { return nil }
        return herald / peer
    }

    static func ratioText(_ value: Double?) -> String {
        guard let value else { return "—" }
        return value < 10 ? number(value, decimals: 2) + "×" : number(value, decimals: 1) + "×"
    }

    // MARK: CSV

    /// `workload,system,median_ns_per_op,mallocs_per_op`, one row per workload × system.
    static func csv(_ results: Results) -> String {
        var lines = ["workload,system,median_ns_per_op,mallocs_per_op"]
        for row in results.rows {
            for system in System.allCases {
                let figures = results.figures(row, system)
                lines.append(
                    "\(row.id),\(system.name),\(number(row.nsPerOp(figures), decimals: 2)),"
                        + "\(number(row.mallocsPerOp(figures), decimals: 3))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `workload,system,bytes_per_op` for the workloads that report memory (W7).
    static func bytesCSV(_ results: Results) -> String {
        var lines = ["workload,system,bytes_per_op"]
        for workload in results.workloads where workload.reportsBytes {
            for system in System.allCases {
                lines.append(
                    "\(workload.id),\(system.name),\(number(results.bytesPerOp(workload, system), decimals: 1))"
                )
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: Markdown

    static let peers: [System] = [.raw, .openCombine, .observation]

    static func targetText(_ target: Target, met: Bool?) -> String {
        let mark = met.map { $0 ? " ✅" : " ❌" } ?? " (not measured)"
        return target.label + mark
    }

    static func isMet(_ target: Target, row: Results.Row, results: Results) -> Bool? {
        switch target {
        case .time(let factor, let peer):
            return ratio(results.nsPerOp(row, .herald), results.nsPerOp(row, peer)).map {
                $0 <= factor
            }
        case .bytes:
            return nil
        case .scaling(let factor, let workload):
            let smaller = results.figures[workload]?[.herald]?.medianNsPerOp
            return ratio(results.nsPerOp(row, .herald), smaller).map { $0 <= factor }
        }
    }

    /// Herald's ratio to each peer (Herald ÷ peer: below 1 means Herald is faster or smaller).
    static func ratioTable(_ results: Results) -> String {
        var lines = [
            "| workload | op | RAW ns/op | Herald ns/op | OpenCombine ns/op | Observation ns/op "
                + "| Herald ÷ RAW | Herald ÷ OpenCombine | Herald ÷ Observation | targets |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for row in results.rows {
            let herald = results.nsPerOp(row, .herald)
            let cells = System.allCases.map { nanoseconds(results.nsPerOp(row, $0)) }
            let ratios = peers.map { ratioText(ratio(herald, results.nsPerOp(row, $0))) }
            // Per-send and per-delivery ratios are the same; targets are stated on the row
            // BENCHMARKS.md names (W2 per delivery for the RAW target, per send for the rest).
            let targets = row.workload.targets.filter { _ in
                row.workload.perPart == nil || row.divisor != 1
            }.map { target -> String in
                if case .bytes = target { return "" }
                return targetText(target, met: isMet(target, row: row, results: results))
            }.filter { !$0.isEmpty }
            lines.append(
                "| \(row.id) \(row.workload.summary) | \(row.unit) | "
                    + cells.joined(separator: " | ") + " | " + ratios.joined(separator: " | ")
                    + " | " + targets.joined(separator: ", ") + " |")
        }
        for workload in results.workloads where workload.reportsBytes {
            let herald = results.bytesPerOp(workload, .herald)
            let cells = System.allCases.map { system -> String in
                results.bytesPerOp(workload, system).map { number($0, decimals: 0) + " B" } ?? "—"
            }
            let ratios = peers.map { ratioText(ratio(herald, results.bytesPerOp(workload, $0))) }
            let targets = workload.targets.compactMap { target -> String? in
                guard case .bytes(let limit) = target else { return nil }
                return targetText(target, met: herald.map { $0 <= limit })
            }
            lines.append(
                "| \(workload.id) bytes per \(workload.unit) | \(workload.unit) | "
                    + cells.joined(separator: " | ") + " | " + ratios.joined(separator: " | ")
                    + " | " + targets.joined(separator: ", ") + " |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Mallocs per operation for every system.
    static func mallocTable(_ results: Results) -> String {
        var lines = [
            "| workload | op | RAW | Herald | OpenCombine | Observation |",
            "| --- | --- | ---: | ---: | ---: | ---: |",
        ]
        for row in results.rows {
            let cells = System.allCases.map { system -> String in
                let value = row.mallocsPerOp(results.figures(row, system))
                return value.map { number($0, decimals: 2) } ?? "—"
            }
            lines.append(
                "| \(row.id) | \(row.unit) | " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Notifications per trial for the workloads that count them (W9, W10): each system's count
    /// (every measured trial's; a range if they differ) against the number the workload must
    /// deliver, ✅ when every trial delivered exactly that many. Empty when no such workload ran.
    static func notificationTable(_ results: Results) -> String {
        let counted = results.workloads.filter { $0.notifications != nil }
        guard !counted.isEmpty else { return "" }
        var lines = [
            "| workload | must deliver | RAW | Herald | OpenCombine | Observation |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for workload in counted {
            let expected = workload.notifications!
            let cells = System.allCases.map { system -> String in
                let counts = results.figures[workload.id]?[system]?.notificationCounts ?? []
                guard let low = counts.min(), let high = counts.max() else { return "—" }
                let text =
                    low == high
                    ? withSeparators(low) : withSeparators(low) + "–" + withSeparators(high)
                return text + (low == expected && high == expected ? " ✅" : " ❌")
            }
            lines.append(
                "| \(workload.id) \(workload.summary) | \(withSeparators(expected)) | "
                    + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The cells left empty, and why.
    static func notApplicable(_ results: Results) -> String {
        var lines: [String] = []
        for workload in results.workloads {
            for system in System.allCases {
                if let reason = workload.notApplicable[system] {
                    lines.append("- \(workload.id) × \(system.name): \(reason).")
                }
            }
        }
        return lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n")
    }

    // MARK: SVG

    static let colors: [System: String] = [
        .raw: "#7f7f7f", .herald: "#d62728", .openCombine: "#1f77b4", .observation: "#2ca02c",
    ]

    /// Grouped horizontal bars of ns/op per workload and system, on a log scale.
    static func svg(_ results: Results, title: String) -> String {
        let rows = results.rows
        let values = rows.flatMap { row in System.allCases.compactMap { results.nsPerOp(row, $0) } }
        guard let smallest = values.min(), let largest = values.max(), smallest > 0 else {
            return "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n"
        }
        var low = 1.0
        while low * 10 <= smallest { low *= 10 }
        while low > smallest { low /= 10 }
        var high = low * 10
        while high < largest { high *= 10 }
        let decades = log10(high / low)

        // The label column fits the longest label (bold 11 px text is about 7 px per character).
        let longestLabel = rows.map { "\($0.workload.id) per \($0.unit)".count }.max() ?? 0
        let left = max(150.0, 16 + 7 * Double(longestLabel))
        let plotWidth = 560.0
        let right = 90.0
        let barHeight = 13.0
        let barGap = 2.0
        let groupGap = 14.0
        let top = 62.0
        var y = top
        var body = ""

        func x(_ value: Double) -> Double { left + plotWidth * log10(value / low) / decades }

        for row in rows {
            let systems = System.allCases.filter { results.nsPerOp(row, $0) != nil }
            guard !systems.isEmpty else { continue }
            let groupHeight = Double(systems.count) * (barHeight + barGap) - barGap
            body += text(
                "\(row.workload.id) per \(row.unit)",
                x: left - 8, y: y + groupHeight / 2 + 4, anchor: "end", size: 11, weight: "bold")
            for system in systems {
                let value = results.nsPerOp(row, system)!
                let width = max(1, x(value) - left)
                body +=
                    "<rect x=\"\(fmt(left))\" y=\"\(fmt(y))\" width=\"\(fmt(width))\" "
                    + "height=\"\(fmt(barHeight))\" fill=\"\(colors[system]!)\">"
                    + "<title>\(row.id) \(system.name): \(nanoseconds(value)) ns/op</title></rect>\n"
                body += text(
                    "\(nanoseconds(value)) ns", x: left + width + 4, y: y + barHeight - 3,
                    anchor: "start", size: 10)
                y += barHeight + barGap
            }
            y += groupGap
        }
        let height = y + 30
        var axis = ""
        var tick = low
        while tick <= high * 1.0001 {
            let tx = x(tick)
            axis +=
                "<line x1=\"\(fmt(tx))\" y1=\"\(fmt(top - 6))\" x2=\"\(fmt(tx))\" "
                + "y2=\"\(fmt(y - groupGap + 4))\" stroke=\"#dddddd\"/>\n"
            axis += text(
                tickLabel(tick), x: tx, y: y - groupGap + 18, anchor: "middle", size: 10)
            tick *= 10
        }
        var legend = ""
        var legendX = left
        for system in System.allCases {
            legend +=
                "<rect x=\"\(fmt(legendX))\" y=\"34\" width=\"12\" height=\"12\" "
                + "fill=\"\(colors[system]!)\"/>\n"
            legend += text(system.name, x: legendX + 16, y: 44, anchor: "start", size: 11)
            legendX += 24 + Double(system.name.count) * 7
        }
        let width = left + plotWidth + right
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(fmt(width))" height="\(fmt(height))" \
            viewBox="0 0 \(fmt(width)) \(fmt(height))" font-family="Helvetica, Arial, sans-serif">
            <rect width="100%" height="100%" fill="white"/>
            \(text(title, x: 12, y: 20, anchor: "start", size: 13, weight: "bold"))\
            \(legend)\(axis)\(body)\
            \(text("ns per operation (log scale); shorter is faster", x: left + plotWidth / 2, y: height - 6, anchor: "middle", size: 10))\
            </svg>

            """
    }

    static func tickLabel(_ value: Double) -> String {
        value >= 1 ? withSeparators(Int(value.rounded())) : String(value)
    }

    static func fmt(_ value: Double) -> String { number(value, decimals: 1) }

    static func text(
        _ content: String, x: Double, y: Double, anchor: String, size: Int,
        weight: String = "normal"
    ) -> String {
        let escaped = content.replacingAll("&", with: "&amp;").replacingAll("<", with: "&lt;")
            .replacingAll(">", with: "&gt;")
        return
            "<text x=\"\(fmt(x))\" y=\"\(fmt(y))\" text-anchor=\"\(anchor)\" font-size=\"\(size)\" "
            + "font-weight=\"\(weight)\">\(escaped)</text>\n"
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for character in self {
            if character == target { out += replacement } else { out.append(character) }
        }
        return out
    }
}

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif
