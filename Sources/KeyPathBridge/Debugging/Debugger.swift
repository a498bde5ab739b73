#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The platform side of debugging aids: is a debugger attached, stop in it, write a log line.
enum Debugger {
    /// Whether a debugger is attached to this process now. (On Linux: a tracer whose name is
    /// that of a debugger, gdb or lldb; under strace, raising `SIGTRAP` would end the process.)
    static var isAttached: Bool {
        #if canImport(Darwin)
            var info = kinfo_proc()
            var size = MemoryLayout<kinfo_proc>.stride
            var name: [Int32] = [CTL_KERN, KERN_PROC, KERN_PROC_PID, getpid()]
            guard sysctl(&name, 4, &info, &size, nil, 0) == 0 else { return false }
            return info.kp_proc.p_flag & P_TRACED != 0
        #elseif os(Linux)
            // "TracerPid:\t<pid>" in /proc/self/status is non-zero while a tracer is attached.
            guard let status = readFile("/proc/self/status") else { return false }
            for line in status.split(separator: "\n") where line.hasPrefix("TracerPid:") {
                let pid = line.dropFirst("TracerPid:".count).drop(while: \.isWhitespace)
                guard pid != "0", let name = readFile("/proc/\(pid)/comm") else { return false }
                return name.hasPrefix("gdb") || name.contains("lldb")
            }
            return false
        #else
            return false
        #endif
    }

    /// Stops in the attached debugger, as a breakpoint would; continuing resumes normally.
    static func stop() {
        #if canImport(Darwin) || canImport(Glibc) || canImport(Musl)
            raise(SIGTRAP)
        #endif
    }

    /// Writes `line` and a line break to standard error.
    static func log(_ line: String) {
        var text = line + "\n"
        text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    }

    #if os(Linux)
        /// The contents of a small text file, or nil if it cannot be read.
        private static func readFile(_ path: String) -> String? {
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, 4096) }
                guard count > 0 else { break }
                bytes += buffer[..<count]
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    #endif
}
