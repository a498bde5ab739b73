import Transforms

/// Why a string path cannot be observed.
public enum PathError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The path text is malformed (empty, or with an empty component, or `*` not at its end).
    case malformed(path: String, reason: String)
    /// An object along the path has no observable property of that name.
    case unknownProperty(String, type: String, path: String, known: [String])

    /// A readable explanation that names the property and the type.
    public var description: String {
        switch self {
        case .malformed(let path, let reason):
            return "Herald: the path \"\(path)\" is malformed: \(reason)."
        case .unknownProperty(let name, let type, let path, let known):
            let choices = known.isEmpty ? "it has none" : "it has: \(known.joined(separator: ", "))"
            return
                "Herald: \(type) has no observable property \"\(name)\" (in the path \"\(path)\"); "
                + choices
                + ". String paths name Var and @ObservableVar properties (a property of an"
                + " @Observable class needs a typed path: PropertyPath(tracking:))."
        }
    }
}

/// Where problems with string paths are reported that cannot be thrown: an unknown property on
/// an object that became reachable only after the path was set up.
///
/// By default they are printed to standard error. Set a handler to route them elsewhere (a
/// logger, a test):
///
/// ```swift
/// PathDiagnostics.setHandler { error in logger.error("\(error)") }
/// ```
public enum PathDiagnostics {
    private static let state = DiagnosticsState()

    /// Routes diagnostics to `handler` (pass nil to restore the default).
    public static func setHandler(_ handler: (@Sendable (PathError) -> Void)?) {
        state.setHandler(handler)
    }

    static func report(_ error: PathError) {
        state.report(error)
    }
}

/// The diagnostics handler, behind a lock.
private final class DiagnosticsState: @unchecked Sendable {
    private let lock = Lock()
    @exclusivity(unchecked) private var handler: (@Sendable (PathError) -> Void)?

    func setHandler(_ handler: (@Sendable (PathError) -> Void)?) {
        lock.withLock { self.handler = handler }
    }

    func report(_ error: PathError) {
        if let handler = lock.withLock({ handler }) {
            handler(error)
        } else {
            Debugger.log("\(error)")
        }
    }
}
