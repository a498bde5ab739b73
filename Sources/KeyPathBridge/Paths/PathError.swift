import Transforms

/// Why a string path cannot be observed.
public enum PathError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The path text does not follow the grammar (see ``PropertyPath/init(_:)-(String)``);
    /// `reason` says what is wrong and where.
    case malformed(path: String, reason: String)
    /// An object along the path has no observable property of that name.
    case unknownProperty(String, type: String, path: String, known: [String])
    /// A component that names an element by position (`#3`, `3`) was applied to an object of
    /// `type`, which is not an observable array.
    case notACollection(String, type: String, path: String)
    /// An object-following element (`3`) names an index that the array does not have when the
    /// observation starts (it must exist then; `#3` may be observed beyond the end).
    case indexOutOfRange(Int, count: Int, path: String)
    /// A component's property holds a value of `type`, not an object, so the path cannot go on
    /// from it.
    case notAnObject(String, type: String, path: String)
    /// ``Inspector/trigger(_:)-(String)`` named a stored observable collection of `type`: a
    /// collection has no value to send as if it changed (its observers get its edits).
    case notTriggerable(String, type: String)

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
                + ". String paths name observable properties (Var, @ObservableVar, @Synthetic), "
                + "observable collections and stored properties holding objects (a property of an"
                + " @Observable class needs a typed path: PropertyPath(tracking:))."
        case .notACollection(let component, let type, let path):
            return
                "Herald: \(type) is not an observable collection: \"\(component)\" (in the path "
                + "\"\(path)\") names an element by its position, which only an observable array "
                + "has. To name a key or property that looks like this, escape it: \"\\\(component)\"."
        case .indexOutOfRange(let index, let count, let path):
            return
                "Herald: the element \(index) (in the path \"\(path)\") does not exist: the array "
                + "has \(count) element\(count == 1 ? "" : "s"). An object-following element must "
                + "exist when the observation starts; \"#\(index)\" follows the index instead and "
                + "may be observed beyond the end."
        case .notAnObject(let component, let type, let path):
            return
                "Herald: \"\(component)\" (in the path \"\(path)\") holds \(article(type)) \(type), "
                + "not an object, so the path cannot go on from it."
        case .notTriggerable(let name, let type):
            return
                "Herald: \"\(name)\" of \(type) is an observable collection, which cannot be "
                + "triggered: it has no value to send as if it changed (its observers get its "
                + "edits). Trigger a property of its elements, or change the collection."
        }
    }
}

/// "a" or "an", for a type's name.
private func article(_ type: String) -> String {
    guard let first = type.first?.lowercased() else { return "a" }
    return "aeiou".contains(first) ? "an" : "a"
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
