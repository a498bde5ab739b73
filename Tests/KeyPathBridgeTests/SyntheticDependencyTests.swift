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
}
