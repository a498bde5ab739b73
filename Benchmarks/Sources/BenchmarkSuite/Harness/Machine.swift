import Foundation

/// A one-line description of the machine and toolchain, for the report.
enum Machine {
    static func describe() -> String {
        var parts: [String] = []
        if let cpu = firstValue(in: "/proc/cpuinfo", key: "model name") { parts.append(cpu) }
        parts.append("\(ProcessInfo.processInfo.activeProcessorCount) cores")
        let memory = ProcessInfo.processInfo.physicalMemory
        parts.append("\(Int((Double(memory) / 1_073_741_824).rounded())) GiB")
        var name = utsname()
        uname(&name)
        parts.append("\(text(of: name.sysname)) \(text(of: name.machine))")
        parts.append(compiler)
        return parts.joined(separator: ", ")
    }

    /// The operating system as Foundation names it, and the kernel's name and release (what
    /// `uname -sr` prints): "Debian GNU/Linux 12 (bookworm); Linux 6.1.0".
    static var operatingSystem: String {
        var name = utsname()
        uname(&name)
        return "\(ProcessInfo.processInfo.operatingSystemVersionString); "
            + "\(text(of: name.sysname)) \(text(of: name.release))"
    }

    /// A field of `utsname` (a fixed-size C string) as text.
    private static func text<Field>(of field: Field) -> String {
        withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// The 1-minute load average when the run started (another build on the machine shows here).
    static var loadAverage: String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))
            .map { String($0.split(separator: " ").first ?? "?") } ?? "?"
    }

    /// Herald's revision: the commit, and whether its sources had uncommitted changes.
    static func heraldRevision(repository: String) -> String {
        guard let commit = git(["-C", repository, "rev-parse", "--short", "HEAD"]) else {
            return "unknown"
        }
        let changes =
            git(["-C", repository, "status", "--porcelain", "--", "Sources", "Package.swift"]) ?? ""
        return changes.isEmpty ? commit : commit + " with uncommitted changes to Sources"
    }

    private static func git(_ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static var compiler: String {
        #if compiler(>=6.4)
            "Swift ≥ 6.4"
        #elseif compiler(>=6.3)
            "Swift 6.3"
        #elseif compiler(>=6.2)
            "Swift 6.2"
        #else
            "Swift < 6.2"
        #endif
    }

    private static func firstValue(in path: String, key: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key) {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}
