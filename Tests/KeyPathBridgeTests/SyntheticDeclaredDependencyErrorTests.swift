import HeraldTestSupport
import Testing

@testable import KeyPathBridge

/// What a declared string dependency reaches: a variable, and an object with a variable.
final class DependencyErrorSettings {
    @ObservableVar var separator = " "
}

/// Synthetic properties whose declared string paths name nothing, beside ones that are fine. Each
/// function reads only `plain`, a value outside Herald, so that only a declared path that works
/// invalidates its property. (Resolving a name on an object lists its observable properties,
/// which binds its synthetic ones: wiring one of these binds them all. The tests of one property
/// use a class that has only it.)
final class DependencyErrorModel {
    @ObservableVar var trigger = 0
    @ObservableVar var settings: DependencyErrorSettings? = DependencyErrorSettings()
    @ObservableVar var later: AnyObject? = nil
    nonisolated(unsafe) var plain = "a"

    /// Text that does not follow the grammar.
    @Synthetic(
        dependsOn: [.path("trigger..neverWellFormed")], { (m: DependencyErrorModel) in m.plain })
    var malformed: String
    /// A first name the owner has no observable property of.
    @Synthetic(dependsOn: [.path("triggr")], { (m: DependencyErrorModel) in m.plain })
    var misspelled: String
    /// A name the object the path reaches (a `DependencyErrorSettings`) lacks, declared before a
    /// path that works.
    @Synthetic(
        dependsOn: [.path("settings.separatr"), .path("trigger")],
        { (m: DependencyErrorModel) in m.plain })
    var mixed: String
    /// A path that works, and one whose object is not there when it is wired (nothing known yet).
    @Synthetic(
        dependsOn: [.path("trigger"), .path("later.neverThere")],
        { (m: DependencyErrorModel) in m.plain })
    var fine: String
}

/// One synthetic property whose declared path does not follow the grammar.
final class MalformedDependencyModel {
    @ObservableVar var trigger = 0
    nonisolated(unsafe) var plain = "a"
    @Synthetic(
        dependsOn: [.path("trigger..neverWellFormed")], { (m: MalformedDependencyModel) in m.plain }
    )
    var malformed: String
}

/// One synthetic property whose declared path's first name the owner lacks.
final class MisspelledDependencyModel {
    @ObservableVar var trigger = 0
    nonisolated(unsafe) var plain = "a"
    @Synthetic(dependsOn: [.path("triggr")], { (m: MisspelledDependencyModel) in m.plain })
    var misspelled: String
}

/// An object that has what `MixedDependencyModel`'s bad path names.
final class DependencyErrorMisspelling {
    @ObservableVar var separatr = " "
}

/// One synthetic property with a declared path whose second name the object it reaches lacks,
/// and a path that works.
final class MixedDependencyModel {
    @ObservableVar var trigger = 0
    @ObservableVar var settings: AnyObject? = DependencyErrorSettings()
    nonisolated(unsafe) var plain = "a"
    @Synthetic(
        dependsOn: [.path("settings.separatr"), .path("trigger")],
        { (m: MixedDependencyModel) in m.plain })
    var mixed: String
}

/// The error that `text` is as a path from `root`, found as `ObservedPath(_:path:)` finds it.
private func pathError<Root: AnyObject>(_ text: String, from root: Root) -> PathError? {
    do {
        _ = try ObservedPath(root, path: text)
        return nil
    } catch {
        return error
    }
}

/// The reports among `reports` about the paths of `DependencyErrorModel`'s declarations (another
/// suite's tests may report meanwhile, and the handler is global).
private func ours(_ reports: Recording<PathError>) -> [PathError] {
    let texts = ["trigger..neverWellFormed", "triggr", "settings.separatr", "later.neverThere"]
    return reports.elements.filter { error in texts.contains { error.description.contains($0) } }
}

// In the serialized "String paths" suite, which owns the global PathDiagnostics handler.
extension StringPathTests {
    @Suite("Synthetic properties: a declared string dependency that names nothing")
    struct DeclaredDependencyErrors {
        @Test func aMalformedDeclaredDependencyIsAPathErrorOnTheFirstReadNotACrash() throws {
            let reports = Recording<PathError>()
            PathDiagnostics.setHandler { reports.append($0) }
            defer { PathDiagnostics.setHandler(nil) }
            let model = MalformedDependencyModel()
            #expect(ours(reports).isEmpty)  // nothing is wired before the property is used

            #expect(model.malformed == "a")  // the read that binds the declared paths

            let expected = try #require(pathError("trigger..neverWellFormed", from: model))
            guard case .malformed(path: "trigger..neverWellFormed", _) = expected else {
                Issue.record("not a malformed path: \(expected)")
                return
            }
            #expect(ours(reports) == [expected])
            model.plain = "b"
            model.$malformed.invalidate()
            #expect(model.malformed == "b")  // the property still computes
            #expect(ours(reports) == [expected])  // reported once, when it was wired
        }

        @Test func aMalformedDependencyOfAPropertyMadeAtRunTimeIsAnError() {
            let reports = Recording<PathError>()
            PathDiagnostics.setHandler { reports.append($0) }
            defer { PathDiagnostics.setHandler(nil) }
            let model = MalformedDependencyModel()

            let property = Synthetic(
                owner: model, name: "madeAtRunTime", dependsOn: [.path("trigger..neverWellFormed")]
            ) { $0.plain + "!" }

            #expect(property.value == "a!")
            #expect(ours(reports) == [pathError("trigger..neverWellFormed", from: model)])
        }

        @Test func aFirstNameTheOwnerLacksIsAPathErrorNamingTheComponentAndTheType() {
            let reports = Recording<PathError>()
            PathDiagnostics.setHandler { reports.append($0) }
            defer { PathDiagnostics.setHandler(nil) }
            let model = MisspelledDependencyModel()

            #expect(model.misspelled == "a")

            let errors = ours(reports)
            #expect(errors == [pathError("triggr", from: model)])
            guard case .unknownProperty(let name, let type, _, let known)? = errors.first else {
                Issue.record("not an unknown property: \(errors)")
                return
            }
            #expect(name == "triggr")
            #expect(type == "MisspelledDependencyModel")
            #expect(known.contains("trigger"))
        }

        @Test func aNameAnObjectAlongThePathLacksIsAPathErrorNamingTheComponentAndTheType() {
            let reports = Recording<PathError>()
            PathDiagnostics.setHandler { reports.append($0) }
            defer { PathDiagnostics.setHandler(nil) }
            let model = MixedDependencyModel()

            #expect(model.mixed == "a")

            let errors = ours(reports)
            #expect(errors == [pathError("settings.separatr", from: model)])
            guard case .unknownProperty(let name, let type, _, _)? = errors.first else {
                Issue.record("not an unknown property: \(errors)")
                return
            }
            #expect(name == "separatr")
            #expect(type == "DependencyErrorSettings")
        }

        @Test func aGoodDeclaredPathStillWorksBesideABadOneWhichObservesNothing() {
            PathDiagnostics.setHandler { _ in }
            defer { PathDiagnostics.setHandler(nil) }
            let model = MixedDependencyModel()
            #expect(model.mixed == "a")
            model.plain = "b"
            #expect(model.mixed == "a")  // a value outside Herald: no invalidation

            model.trigger += 1  // along the good path, declared after the bad one

            #expect(model.mixed == "b")
            #expect(model.$mixed.evaluationCount == 2)
            model.plain = "c"
            // An object that fits the bad path now: it was an error, and is observed no more.
            let fitting = DependencyErrorMisspelling()
            model.settings = fitting
            fitting.separatr = "-"
            #expect(model.mixed == "b")
            #expect(model.$mixed.evaluationCount == 2)
        }

        @Test func inspectorListsTheDeclaredDependencyErrorsOfEachPropertyByName() throws {
            let reports = Recording<PathError>()
            PathDiagnostics.setHandler { reports.append($0) }
            defer { PathDiagnostics.setHandler(nil) }
            let model = DependencyErrorModel()
            let malformed = try #require(pathError("trigger..neverWellFormed", from: model))
            let misspelled = try #require(pathError("triggr", from: model))
            let mixed = try #require(pathError("settings.separatr", from: model))

            // No property was read: asking binds them, and wires their declared paths.
            let errors = Inspector(model).syntheticDependencyErrors

            #expect(
                errors == ["malformed": [malformed], "misspelled": [misspelled], "mixed": [mixed]])
            #expect(Inspector(model).syntheticDependencyErrors == errors)  // the same, not again
            #expect(ours(reports).count == 3)  // each reported once, as it was wired
            #expect(Set(ours(reports).map(\.description)).count == 3)
            #expect(model.fine == "a" && model.mixed == "a" && model.malformed == "a")
        }

        @Test func anObjectWithoutBadDependenciesListsNone() {
            let declared = Declared()
            _ = declared.text
            #expect(Inspector(declared).syntheticDependencyErrors.isEmpty)
        }

        @Test func theDiagnosticsHandlerHearsOfEachOwnersBadDependencyOnItsFirstRead() {
            let reports = Recording<PathError>()
            PathDiagnostics.setHandler { reports.append($0) }
            defer { PathDiagnostics.setHandler(nil) }
            let first = MisspelledDependencyModel()
            let second = MisspelledDependencyModel()

            _ = first.misspelled
            _ = first.misspelled
            #expect(ours(reports).count == 1)
            _ = second.misspelled
            #expect(ours(reports).count == 2)
            _ = second.$misspelled  // the projection binds too; already bound
            #expect(ours(reports).map(\.description).allSatisfy { $0.contains("\"triggr\"") })
            #expect(ours(reports).count == 2)
        }

        @Test func aNameAnObjectReachedOnlyLaterLacksIsReportedWhenItIsReached() {
            let reports = Recording<PathError>()
            PathDiagnostics.setHandler { reports.append($0) }
            defer { PathDiagnostics.setHandler(nil) }
            let model = DependencyErrorModel()
            let later = { ours(reports).filter { $0.description.contains("later.neverThere") } }
            #expect(model.fine == "a")
            #expect(later().isEmpty)  // `later` is nil: nothing is known about it yet
            #expect(Inspector(model).syntheticDependencyErrors["fine"] == nil)

            model.later = DependencyErrorSettings()  // reached now: it has no `neverThere`

            let errors = later()
            #expect(errors.count == 1)
            guard case .unknownProperty(let name, let type, _, _)? = errors.first else {
                Issue.record("not an unknown property: \(errors)")
                return
            }
            #expect(name == "neverThere")
            #expect(type == "DependencyErrorSettings")
        }
    }
}
