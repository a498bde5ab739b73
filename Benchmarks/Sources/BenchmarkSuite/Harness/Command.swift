import Foundation

/// The command line of both executables.
///
/// `herald-benchmarks [--quick] [--only W1,W3] [--rounds N] [--warmup N] [--no-mallocs]
/// [--update-docs] [--output DIR]` times every workload, then starts
/// `herald-benchmarks-mallocs` (built next to it) to count allocations, and writes the results.
/// `herald-benchmarks --floor` times the W12 and W13 rows on the floor engine too and prints a
/// table (see `FloorExperiment`); `herald-benchmarks --floor-selftest` checks the floor engine
/// with threads (see `FloorSelfTest`).
public enum BenchmarkCommand {
    struct Options {
        var quick = false
        var only: Set<String>? = nil
        var systems: Set<String>? = nil
        var rounds: Int? = nil
        var warmup: Int? = nil
        var countMallocs = true
        var updateDocs = false
        var output: String? = nil
        var floor = false
        var floorSelfTest = false
    }

    /// The timing process.
    public static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let options = parse(arguments)
        if options.floorSelfTest {
            guard arguments.count == 1 else { usage("--floor-selftest takes no other option") }
            exit(FloorSelfTest.run() ? 0 : 1)
        }
        let started = nowNanoseconds()
        let warmup = options.warmup ?? (options.quick ? 1 : 3)
        let rounds = options.rounds ?? (options.quick ? 3 : 11)
        let machine = Machine.describe()
        let load = Machine.loadAverage
        let revision = Machine.heraldRevision(repository: packageDirectory + "/..")
        #if DEBUG
            print("warning: a debug build; the figures are meaningless (use -c release)")
        #endif
        if options.floor {
            let ignored = [
                !options.countMallocs ? "--no-mallocs" : nil,
                options.updateDocs ? "--update-docs" : nil,
                options.output != nil ? "--output" : nil,
            ].compactMap { $0 }
            guard ignored.isEmpty else {
                usage("--floor prints only; it takes no \(ignored.joined(separator: ", "))")
            }
            print(
                "The floor engine against RAW, Herald and Observation (W12, W13) — Herald "
                    + "\(revision); \(machine); \(Machine.operatingSystem); 1-minute load "
                    + "average \(load) at start")
            print("\(warmup) warm-up + \(rounds) measured rounds per row; systems interleaved\n")
            FloorExperiment.run(
                warmup: warmup, rounds: rounds, only: options.only, systems: options.systems)
            print(
                "wall time \(Report.number(Double(nowNanoseconds() - started) / 1e9, decimals: 1)) s; "
                    + "1-minute load average \(Machine.loadAverage) at the end")
            return
        }
        let workloads = selected(options)
        print("Herald benchmarks — Herald \(revision); \(machine); load average \(load) at start")
        print(
            "\(warmup) warm-up + \(rounds) measured rounds per workload; systems interleaved, order rotated each round\n"
        )

        var runner = Runner(warmup: warmup, rounds: rounds)
        var results = Results()
        results.workloads = workloads
        for workload in workloads {
            print("\(workload.id) \(workload.summary) ", terminator: "")
            flush()
            results.figures[workload.id] = runner.time(workload) { mark in
                print(mark, terminator: "")
                flush()
            }
            print()
        }

        if options.countMallocs {
            print("counting allocations (herald-benchmarks-mallocs) ", terminator: "")
            flush()
            if let counts = runAllocationCounter(
                workloads: workloads.map(\.id), systems: options.systems)
            {
                for (key, value) in counts {
                    results.figures[key.workload, default: [:]][key.system, default: Figures()]
                        .mallocsPerOp = value.mallocs
                    results.figures[key.workload, default: [:]][key.system, default: Figures()]
                        .bytesPerOp = value.bytes
                }
                print("done")
            } else {
                print("unavailable: mallocs_per_op left empty")
            }
        }

        let seconds = Double(nowNanoseconds() - started) / 1e9
        let ratioTable = Report.ratioTable(results)
        let mallocTable = Report.mallocTable(results)
        let notificationTable = Report.notificationTable(results)
        let notificationSection =
            notificationTable.isEmpty
            ? ""
            : """
            Notifications per trial (what each system delivered, against what the workload must \
            deliver):

            \(notificationTable)

            """
        print(
            "\nHerald's ratio to each peer (Herald ÷ peer; below 1 means Herald is faster or smaller)\n"
        )
        print(ratioTable)
        if !notificationTable.isEmpty {
            print("Notifications per trial (delivered, against what the workload must deliver)\n")
            print(notificationTable)
        }
        print("Mallocs per operation\n")
        print(mallocTable)
        print("checksum \(runner.sink)")

        let directory = options.output ?? (packageDirectory + "/results")
        try? FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true)
        let date = ISO8601DateFormatter().string(from: Date())
        let mode = options.quick ? "quick" : "full"
        let context = """
            Run \(date) (\(mode) mode: \(warmup) warm-up + \(rounds) measured rounds, \
            \(Report.number(seconds, decimals: 0)) s in all) of Herald \(revision). Machine: \
            \(machine); 1-minute load average \(load) at start.
            """
        let markdown = """
            \(context)

            Herald's ratio to each peer (Herald ÷ peer; below 1 means Herald is faster or smaller).
            Medians of the measured rounds, ns per operation:

            \(ratioTable)
            \(notificationSection)Mallocs per operation (one counted trial after a warm-up trial):

            \(mallocTable)
            Empty cells:

            \(Report.notApplicable(results))
            """
        write(Report.csv(results), to: directory + "/latest.csv")
        write(Report.bytesCSV(results), to: directory + "/latest-bytes.csv")
        write(markdown, to: directory + "/latest.md")
        write(
            Report.svg(
                results,
                title: "Herald and peers, ns per operation (\(mode) run, \(date.prefix(10)))"),
            to: directory + "/latest.svg")
        print("wrote \(directory)/latest.csv, latest-bytes.csv, latest.md, latest.svg")
        if options.updateDocs {
            updateDocs(with: markdown)
        }
        print("wall time \(Report.number(seconds, decimals: 1)) s")
    }

    /// The allocation-counting process (`herald-benchmarks-mallocs --only W1,W2`).
    public static func countAllocations(with counter: AllocationCounter) {
        let options = parse(Array(CommandLine.arguments.dropFirst()))
        var runner = Runner(warmup: 1, rounds: 1)
        for workload in selected(options) {
            for (system, figures) in runner.countAllocations(workload, with: counter) {
                print(
                    "ALLOC\t\(workload.id)\t\(system.name)\t\(figures.mallocsPerOp)\t\(figures.bytesPerOp)"
                )
            }
        }
        print("checksum \(runner.sink)")
    }

    // MARK: -

    struct Key: Hashable {
        let workload: String
        let system: System
    }

    /// The workloads (and systems within them) that the options select.
    /// A workload whose target compares it with another one (`.scaling`) brings that one along.
    static func selected(_ options: Options) -> [Workload] {
        let all = Workloads.all()
        var only = options.only
        for workload in all where only?.contains(workload.id) ?? false {
            for case .scaling(_, let companion) in workload.targets { only?.insert(companion) }
        }
        return all.filter { only?.contains($0.id) ?? true }.map { workload in
            guard let systems = options.systems else { return workload }
            return workload.keeping { systems.contains($0.name) }
        }
    }

    static func runAllocationCounter(workloads: [String], systems: Set<String>?)
        -> [Key: (mallocs: Double, bytes: Double)]?
    {
        let path = executableDirectory + "/herald-benchmarks-mallocs"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            print(
                "(not found: \(path); build all products with `swift build -c release`) ",
                terminator: "")
            return nil
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments =
            ["--only", workloads.joined(separator: ",")]
            + (systems.map { ["--systems", $0.joined(separator: ",")] } ?? [])
        let pipe = Pipe()
        process.standardOutput = pipe
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        var counts: [Key: (Double, Double)] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t").map(String.init)
            guard fields.count == 5, fields[0] == "ALLOC", let system = System(rawValue: fields[2]),
                let mallocs = Double(fields[3]), let bytes = Double(fields[4])
            else { continue }
            counts[Key(workload: fields[1], system: system)] = (mallocs, bytes)
        }
        return counts
    }

    static var executableDirectory: String {
        let path =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: path).deletingLastPathComponent().path
    }

    /// `Benchmarks/`, found from this source file's path.
    static var packageDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }

    static let docsBegin = "<!-- benchmark-results:begin -->"
    static let docsEnd = "<!-- benchmark-results:end -->"

    /// Replaces the generated part of `Docs/Performance.md` (between the two markers).
    static func updateDocs(with markdown: String) {
        let path = packageDirectory + "/../Docs/Performance.md"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let begin = text.range(of: docsBegin), let end = text.range(of: docsEnd),
            begin.upperBound <= end.lowerBound
        else {
            print("Docs/Performance.md has no \(docsBegin) … \(docsEnd) markers; not updated")
            return
        }
        let updated = text[..<begin.upperBound] + "\n" + markdown + "\n" + text[end.lowerBound...]
        write(String(updated), to: path)
        print("updated Docs/Performance.md")
    }

    static func write(_ text: String, to path: String) {
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            print("could not write \(path): \(error)")
        }
    }

    static func flush() { fflush(nil) }  // flushes every output stream, stdout included

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var index = 0
        func value() -> String {
            index += 1
            guard index < arguments.count else {
                usage("missing value for \(arguments[index - 1])")
            }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--quick": options.quick = true
            case "--only": options.only = Set(value().split(separator: ",").map(String.init))
            case "--rounds": options.rounds = number(value(), "--rounds")
            case "--warmup": options.warmup = number(value(), "--warmup")
            case "--systems": options.systems = Set(value().split(separator: ",").map(String.init))
            case "--no-mallocs": options.countMallocs = false
            case "--update-docs": options.updateDocs = true
            case "--output": options.output = value()
            case "--floor": options.floor = true
            case "--floor-selftest": options.floorSelfTest = true
            case "--help", "-h": usage(nil)
            default: usage("unknown argument \(arguments[index])")
            }
            index += 1
        }
        return options
    }

    static func number(_ text: String, _ flag: String) -> Int {
        guard let value = Int(text), value >= 0 else { usage("\(flag) takes a number") }
        return value
    }

    static func usage(_ problem: String?) -> Never {
        if let problem { print("error: \(problem)") }
        print(
            """
            usage: herald-benchmarks [--quick] [--only W1,W3] [--systems Herald,RAW] [--rounds N] [--warmup N]
                                     [--no-mallocs] [--update-docs] [--output DIR]
                   herald-benchmarks --floor [--quick] [--only W12-lazy,W13-deep] [--systems RAW,Herald,Observation,Floor]
                                             [--rounds N] [--warmup N]
                   herald-benchmarks --floor-selftest
              --quick        1 warm-up + 3 measured rounds (default 3 + 11)
              --only         run only these workloads
              --systems      run only these systems (e.g. Herald, for profiling)
              --no-mallocs   skip the allocation-counting process
              --update-docs  rewrite the generated part of ../Docs/Performance.md
              --output       where to write latest.csv/.md/.svg (default Benchmarks/results)
              --floor        time W12 and W13 on the floor engine too (Docs/Performance.md), print only
              --floor-selftest  check the floor engine with threads; exits non-zero on a mismatch
            """)
        exit(problem == nil ? 0 : 2)
    }
}
