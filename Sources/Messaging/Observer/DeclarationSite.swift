/// Where an observation was declared in source: the `#fileID` and `#line` that `observe` captured.
///
/// Herald records the site of every observation so that debugging tools can print who observes
/// what:
///
/// ```swift
/// for site in number.observationSites { print(site) }
/// // Prints "MyApp/ViewModel.swift:42"
/// ```
public struct DeclarationSite: Hashable, Sendable, CustomStringConvertible {
    // `#fileID` literals live in static memory for the life of the process, so keeping their
    // address (instead of a 17-byte `StaticString`) keeps every observation small.
    private nonisolated(unsafe) let fileIDStart: UnsafePointer<UInt8>?
    private let fileIDCount: UInt32
    /// The line on which the observation was declared.
    public let line: UInt32

    /// Creates a site from the literals the compiler provides.
    ///
    /// - Parameters:
    ///   - fileID: The `#fileID` of the declaration, such as `"MyApp/ViewModel.swift"`.
    ///   - line: The `#line` of the declaration.
    public init(fileID: StaticString = #fileID, line: UInt = #line) {
        if fileID.hasPointerRepresentation {
            fileIDStart = fileID.utf8Start
            fileIDCount = UInt32(truncatingIfNeeded: fileID.utf8CodeUnitCount)
        } else {
            fileIDStart = nil
            fileIDCount = 0
        }
        self.line = UInt32(truncatingIfNeeded: line)
    }

    /// The `#fileID` of the declaration: the module name and file name, such as
    /// `"MyApp/ViewModel.swift"`.
    public var fileID: String {
        guard let fileIDStart else { return "?" }
        let bytes = UnsafeBufferPointer(start: fileIDStart, count: Int(fileIDCount))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `"fileID:line"`, the form compilers and debuggers print.
    public var description: String { "\(fileID):\(line)" }

    /// Two sites are equal when their file IDs and lines are.
    public static func == (lhs: DeclarationSite, rhs: DeclarationSite) -> Bool {
        lhs.line == rhs.line && lhs.fileID == rhs.fileID
    }

    /// Hashes the file ID and line.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(fileID)
        hasher.combine(line)
    }
}
