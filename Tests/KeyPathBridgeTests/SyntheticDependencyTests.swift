import HeraldTestSupport
import Testing

@testable import KeyPathBridge
@testable import Messaging

/// A function whose first use of a property with a declared path wires the path (whose key path
/// getter reads `useFirst`, with the frames hidden), then reads `after`.
private final class OFDeclaring: @unchecked Sendable {
    @ObservableVar var useFirst = true
    @ObservableVar var first = 1
    @ObservableVar var second = 2
    @ObservableVar var after = 1
    var chosen: Variable<Int> { useFirst ? $first : $second }
    @Synthetic(dependsOn: [.path(\OFDeclaring.chosen)], { (_: OFDeclaring) in 0 })
    var declared: Int
    @Synthetic({ (d: OFDeclaring) in
        _ = d.$declared  // its first use: the path is observed here
        return d.after
    })
    var wiring: Int
}

/// A function that starts an observation, sets a variable (observed, with an observed dependent)
/// and invalidates, then reads `after`.
private final class OFObserving: @unchecked Sendable {
    let observer = TestObserver()
    let problems = Recording<String>()
    nonisolated(unsafe) var runs = 0
    @ObservableVar var watchedSource = 1
    @ObservableVar var log = 0
    @ObservableVar var readByLogObserver = 0
    @ObservableVar var readByDependentObserver = 0
    @ObservableVar var viaKeyPath = 5
    @ObservableVar var after = 7
    @Synthetic({ (m: OFObserving) in
        if DependencyTracking.currentFrame?.takeUnretainedValue().parent != nil {
            m.problems.append("watched sees a parent frame")
        }
        return m.watchedSource * 2
    })
    var watched: Int
    @Synthetic({ (m: OFObserving) in m.log + 1 }) var fromLog: Int
    @Synthetic({ (m: OFObserving) in m.after - 1 }) var invalidatedInside: Int
    @Synthetic({ (m: OFObserving) in
        let mine = openFrame()
        m.observer.observe(m.$watched) { _ in }  // evaluates `watched`, the frames hidden
        m.runs += 1
        m.log = m.runs  // its observer runs here; its dependent's observer after the evaluation
        m.$invalidatedInside.invalidate()
        m.observer.stopObserving(m.$watched)
        if mine != openFrame() { m.problems.append("host's frame not restored") }
        return m[keyPath: \OFObserving.viaKeyPath] + m.after
    })
    var host: Int
}

/// A synthetic property whose function writes a variable (a side effect: a log).
final class Logging {
    @ObservableVar var input = 1
    @ObservableVar var log = 0
    @ObservableVar var unrelated = 0
    @Synthetic({ (l: Logging) in
        let value = l.input * 2
        l.log = value
        return value
    })
    var doubled: Int
}

/// `declaring` depends on a declared path through another synthetic property (`mid`); `outer`
/// reads `declaring` only (and is the first to touch it, so it is bound inside `outer`'s
/// evaluation).
final class DeclaredThroughSynthetic {
    @ObservableVar var input = 1
    @Synthetic({ (d: DeclaredThroughSynthetic) in d.input }) var mid: Int
    @Synthetic(
        dependsOn: [.path(\DeclaredThroughSynthetic.$mid)], { (_: DeclaredThroughSynthetic) in 7 })
    var declaring: Int
    @Synthetic({ (d: DeclaredThroughSynthetic) in d.declaring + 1 }) var outer: Int
}

/// One link of a long chain of synthetic properties over objects.
final class ChainLink {
    let previous: ChainLink?
    @ObservableVar var base = 0
    @Synthetic({ (l: ChainLink) in (l.previous?.total ?? l.base) + 1 }) var total: Int
    init(previous: ChainLink?) { self.previous = previous }
}

/// A branch chosen by a variable.
final class Branching {
    @ObservableVar var useFirst = true
    @ObservableVar var first = "a"
    @ObservableVar var second = "b"
    @Synthetic({ (b: Branching) in b.useFirst ? b.first : b.second }) var chosen: String
}

/// Subclasses keep the superclass's synthetic properties and may add their own.
class Shape: SyntheticPropertyOwner {
    @ObservableVar var side = 2.0
    @Synthetic({ (s: Shape) in s.side * s.side }) var area: Double
}

final class Cube: Shape {
    @Synthetic({ (c: Cube) in c.area * c.side }) var volume: Double
}

/// What a function reads (variables, collections and their parts, other synthetic properties,
/// declared paths) is what the property depends on; nothing else is.
@Suite("Synthetic properties: dependencies are what the function read")
struct SyntheticDependencyTests {
    @Test("a change of what the function read invalidates; the next read computes again")
    func aChangeOfWhatTheFunctionReadInvalidates() {
        let contact = Contact()
        _ = contact.fullName
        contact.last = "Byron"
        #expect(!contact.$fullName.isValid)
        #expect(contact.$fullName.evaluationCount == 1)
        #expect(contact.fullName == "Ada Byron")
        #expect(contact.$fullName.evaluationCount == 2)
    }

    @Test("automatic dependencies: a branch not taken is not a dependency")
    func aBranchNotTakenIsNoDependency() {
        let branching = Branching()
        #expect(branching.chosen == "a")
        branching.second = "B"
        #expect(branching.$chosen.isValid)
        branching.useFirst = false
        #expect(branching.chosen == "B")
        branching.first = "A"
        #expect(branching.$chosen.isValid)
        #expect(branching.$chosen.evaluationCount == 2)
    }

    @Test("automatic dependencies: re-taking a branch gives a fresh value")
    func reTakingABranchGivesAFreshValue() {
        let branching = Branching()
        _ = branching.chosen
        branching.useFirst = false
        _ = branching.chosen
        branching.first = "changed while not a dependency"
        branching.useFirst = true
        #expect(branching.chosen == "changed while not a dependency")
    }

    @Test("automatic dependencies: collections, their parts, and other objects")
    func collectionsTheirPartsAndOtherObjectsAreDependencies() {
        final class Basket {
            let items = ObservableArray<Int>([1, 2])
            let other = Contact()
            @Synthetic({ (b: Basket) in "\(b.items.count):\(b.items.last ?? 0):\(b.other.first)" })
            var summary: String
        }
        let basket = Basket()
        #expect(basket.summary == "2:2:Ada")
        basket.items.append(5)
        #expect(basket.summary == "3:5:Ada")
        basket.other.first = "Grace"
        #expect(basket.summary == "3:5:Grace")
        basket.items[0] = 9
        #expect(!basket.$summary.isValid)
    }

    @Test(
        "automatic dependencies: what an observer of a variable the function sets reads is an extra dependency, never a wrong value"
    )
    func observerReadsDuringEvaluationAreExtraDependencies() {
        // Documented: a function should not set variables; if it does, their observers run
        // inside its evaluation, and what they read counts as read by it (a send does not check
        // for open evaluations: that would cost every send).
        let logging = Logging()
        let observer = TestObserver()
        observer.observe(logging.$log) { _ in _ = logging.unrelated }
        #expect(logging.doubled == 2)
        logging.unrelated = 1
        #expect(logging.doubled == 2)
        logging.input = 5
        #expect(logging.doubled == 10)
        #expect(logging.log == 10)
    }

    @Test("dependencies as paths: typed and string, unreachable at first, re-wired")
    func declaredPathsAreDependenciesEvenWhileUnreachable() {
        let declared = Declared()
        #expect(declared.typed == "x-!")
        #expect(declared.text == "!")
        declared.plainSuffix = "?"
        // A value outside Herald: no invalidation.
        #expect(declared.typed == "x-!")
        let settings = DisplaySettings()
        declared.settings = settings
        #expect(declared.typed == "x+?")
        #expect(declared.text == "?")
        declared.plainSuffix = "."
        settings.separator = "-"
        #expect(declared.typed == "x+.")
        #expect(declared.text == ".")
    }

    @Test(
        "automatic dependencies: binding a declared path inside another evaluation adds no dependency to it"
    )
    func declaredPathWiringIsNotADependencyOfTheReader() {
        let object = DeclaredThroughSynthetic()
        #expect(object.outer == 8)  // `declaring` is first touched (bound) inside `outer`
        object.input = 2  // mid changes; declaring recomputes 7 (equal)
        #expect(object.outer == 8)
        #expect(object.$declaring.evaluationCount == 2)
        // An equal recomputation of its only source: outer must not compute again.
        #expect(object.$outer.evaluationCount == 1)
    }

    @Test("wiring a declared path inside an evaluation records nothing; later reads are recorded")
    func wiringADeclaredPathInsideAnEvaluationRecordsNothing() {
        let m = OFDeclaring()
        #expect(m.wiring == 1)
        (m.useFirst, m.first) = (false, 10)  // `useFirst`: read by the key path, frames hidden
        #expect(m.$wiring.isValid && !m.$declared.isValid)
        m.after = 2
        #expect(m.wiring == 2)
    }

    @Test(
        "chains: a chain 2,000 properties long is computed, checked and observed on the main thread"
    )
    func aChainTwoThousandPropertiesLongIsComputedCheckedAndObserved() async {
        // Holds on an 8 MB stack (the limit there lies between 2,000 and 5,000).
        await #expect(processExitsWith: .success) {
            var links = [ChainLink(previous: nil)]
            for _ in 1..<2_000 { links.append(ChainLink(previous: links.last)) }
            let last = links[links.count - 1]
            precondition(last.total == 2_000)
            links[0].base = 1
            precondition(last.total == 2_001)
            let observer = TestObserver()
            let seen = Recording<Int>()
            observer.observe(last.$total) { seen.append($0.new) }
            links[0].base = 2
            precondition(seen.elements == [2_002])
        }
    }

    @Test("subclasses keep their superclass's synthetic properties and add their own")
    func subclassesKeepTheirSuperclassesSyntheticProperties() {
        let cube = Cube()
        #expect(cube.area == 4)
        #expect(cube.volume == 8)
        cube.side = 3
        #expect(cube.volume == 27)
        #expect(Inspector(cube).validSyntheticProperties.sorted() == ["area", "volume"])
        cube.invalidateAllSyntheticProperties()
        #expect(Inspector(cube).invalidSyntheticProperties.sorted() == ["area", "volume"])
    }

    /// After each batch of writes, `branch` (or `top`) must equal its value computed from
    /// scratch, must have run exactly when a source it read changed (directly, or through a
    /// synthetic source whose value changed), and every source's dependents list must hold
    /// `branch` exactly when the last evaluation read it.
    @Test("branchy dependencies: values, exact evaluation counts and dependents lists")
    func aBranchyPropertyRunsExactlyWhenWhatItReadChangedAndDependsOnWhatItLastRead() {
        let model = PCBranchy()
        var random = SeededGenerator(seed: 0xB4A_17C4)
        let branch = ObjectIdentifier(model.$branch)
        let top = ObjectIdentifier(model.$top)
        var values = model.values
        #expect(model.branch == values.branch.value)
        #expect(model.top == values.top)
        for step in 0..<3000 {
            let before = values
            let counts = model.evaluationCounts
            var written: Set<PCSource> = []
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let source = PCSource.base.randomElement(using: &random)!
                let value = Int.random(in: 0...(source == .flag ? 9 : 5), using: &random)
                guard value != values[source] else { continue }
                values[source] = value
                written.insert(source)
                model.write(source, value)
            }
            // `top` is read every step (so that its baseline is the last step), before or after
            // `branch`.
            let expected = values.branch
            if step % 2 == 0 {
                #expect(model.top == values.top, "step \(step)")
                #expect(model.branch == expected.value, "step \(step)")
            } else {
                #expect(model.branch == expected.value, "step \(step)")
                #expect(model.top == values.top, "step \(step)")
            }
            // `branch` ran iff a variable it read was written or a synthetic source it read
            // changed its value.
            let read = before.branch.read
            let mustRun =
                !read.intersection(written).isEmpty
                || read.contains { PCSource.synthetic.contains($0) && before[$0] != values[$0] }
            let ran = model.$branch.evaluationCount - counts[3]
            #expect(ran == (mustRun ? 1 : 0), "step \(step): read \(read), wrote \(written)")
            let topMustRun = before.branch.value != expected.value || before.a * 2 != values.a * 2
            #expect(model.$top.evaluationCount - counts[4] == (topMustRun ? 1 : 0), "step \(step)")
            // The dependents lists agree with what the last evaluation read.
            for source in PCSource.allCases {
                let dependents = model.dependents(of: source)
                #expect(
                    dependents.contains(branch) == expected.read.contains(source),
                    "step \(step): \(source) \(expected.read)")
                if source == .twiceA { #expect(dependents.contains(top)) }
            }
        }
    }

    @Test("after an inner evaluation ends (chain, diamond), the outer's reads go to the outer")
    func afterAnInnerEvaluationEndsTheOutersReadsAreItsDependencies() {
        let m = OFNest()
        #expect(m.outer == (2 + 10) + 4 + 100)
        #expect(openFrame() == nil)
        m.c = 200  // read by outer only, after the inner evaluations ended
        #expect(!m.$outer.isValid && m.$inner.isValid && m.$middle.isValid && m.$side.isValid)
        #expect(m.outer == 216)
        m.b = 20
        #expect(m.$inner.isValid && m.$side.isValid && !m.$middle.isValid && !m.$outer.isValid)
        #expect(m.outer == 226)
        m.a = 2
        #expect(m.outer == (3 + 20) + 6 + 200)
        #expect(m.problems.elements.isEmpty, "\(m.problems.elements)")
    }

    @Test("observers inside an evaluation: frames hidden, then restored; later ones record nothing")
    func whatObserversReadInsideAnEvaluationIsNoDependencyBarTheSetVariablesOwn() {
        let m = OFObserving()
        let outside = TestObserver()
        outside.observe(m.$log) { _ in _ = m.readByLogObserver }
        outside.observe(m.$fromLog) { _ in
            if openFrame() != nil { m.problems.append("deferred observer sees a frame") }
            _ = m.readByDependentObserver
        }
        outside.observe(m.$invalidatedInside) { _ in }
        #expect(m.host == 12 && openFrame() == nil)
        m.watchedSource = 2  // read only with the frames hidden
        m.readByDependentObserver = 1  // read by an observer told after the evaluation
        #expect(m.$host.isValid)
        m.after = 8
        #expect(!m.$host.isValid && m.host == 13)
        m.viaKeyPath = 6
        #expect(!m.$host.isValid && m.host == 14)
        // Documented: what the set variable's own observer reads counts as read by the function.
        m.readByLogObserver = 1
        #expect(!m.$host.isValid)
        #expect(m.problems.elements.isEmpty, "\(m.problems.elements)")
    }
}
