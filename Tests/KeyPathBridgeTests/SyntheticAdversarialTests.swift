import Dispatch
import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge

// Adversarial tests of synthetic properties: each failing test is named after the promise it
// shows broken.

/// Two synthetic properties over a value outside Herald (invalidated by hand).
final class ManualSource: SyntheticPropertyOwner, @unchecked Sendable {
    nonisolated(unsafe) var data = 1
    @Synthetic({ (m: ManualSource) in m.data + 1 }) var plusOne: Int
    @Synthetic({ (m: ManualSource) in m.data * 10 }) var timesTen: Int
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

@Suite("Synthetic properties: adversarial", .serialized)
struct SyntheticAdversarialTests {
    // MARK: Observed means eager / Update(old, new)

    @Test(
        "observed means eager: an observer that starts during an evaluation hears a change made meanwhile"
    )
    func observerStartingDuringEvaluationHearsConcurrentChange() {
        let gated = Gated()
        gated.holdAtGate.store(true, ordering: .sequentiallyConsistent)
        let property = ObjectIdentifier(gated.$doubled)
        // The changing thread finds the first evaluation running and waits for it: let it go.
        let waitHook = SyntheticCycle.TestHooks.add(at: .wait) { id in
            guard id == property else { return }
            gated.holdAtGate.store(false, ordering: .sequentiallyConsistent)
            gated.gate.signal()
        }
        defer { SyntheticCycle.TestHooks.remove(waitHook) }
        let observer = TestObserver()
        let updates = Recording<Update<Int>>()
        let box = UncheckedBox((gated, observer))
        let observing = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            // The first observer: the property is evaluated at once (held at the gate).
            box.value.1.observe(box.value.0.$doubled) { updates.append($0) }
            observing.signal()
        }
        gated.entered.wait()
        gated.input = 5  // after the observation started
        observing.wait()
        #expect(gated.doubled == 10)
        // The observation started while the value was 2, and it became 10 afterwards.
        #expect(updates.elements == [Update(2, 10)])
    }

    @Test(
        "lazy while unobserved: a property whose last observer left during a propagation is not computed"
    )
    func lazyAfterLastObserverLeavesDuringPropagation() {
        let diamond = Diamond()
        let first = TestObserver()
        let second = TestObserver()
        first.observe(diamond.$left) { _ in second.stopObserving(diamond.$right) }
        second.observe(diamond.$right) { _ in }
        #expect(diamond.$right.evaluationCount == 1)
        diamond.source = 2  // left's observer ends right's only observation before right's turn
        #expect(diamond.$right.observationCount == 0)
        // Nobody reads or observes `right` any more: it must stay invalid, not computed.
        #expect(diamond.$right.evaluationCount == 1)
        #expect(!diamond.$right.isValid)
    }

    // MARK: Hybrid

    @Test(
        "hybrid: a value set while the property waits for its propagation is authored by the setter"
    )
    func hybridSetDuringPropagationIsAuthoredBySetter() {
        let diamond = Diamond()
        let editor = Author("editor")
        let observer = TestObserver()
        let received = Recording<String>()
        // left and right are both queued by the change of source; left's observer sets right.
        observer.observe(diamond.$left) { _ in diamond.$right.set(999, as: editor) }
        observer.observe(diamond.$right) { update, author in
            received.append(
                "\(update.old)->\(update.new) by \(author === editor ? "editor" : "other")")
        }
        diamond.source = 2
        #expect(diamond.right == 999)
        #expect(received.elements == ["10->999 by editor"])
    }

    // MARK: Glitch-free

    @Test("glitch-free: invalidate-all marks every property before any observer runs")
    func invalidateAllIsGlitchFree() {
        let manual = ManualSource()
        let observer = TestObserver()
        let seen = Recording<String>()
        observer.observe(manual.$plusOne) { update in
            seen.append("\(update.new) \(manual.timesTen)")
        }
        #expect(manual.timesTen == 10)
        manual.data = 2
        manual.invalidateAllSyntheticProperties()
        // plusOne's observer read timesTen: it must see timesTen from the same data (2).
        #expect(seen.elements == ["3 20"])
    }

    // MARK: Dependencies are what the function reads

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

    // MARK: Cycles

    @Test("cycles: a function that sets a variable an observed property reads is no cycle")
    func settingAVariableInAFunctionIsNoCycle() async {
        await #expect(processExitsWith: .success) {
            final class Stamped {
                @ObservableVar var input = 1
                @ObservableVar var stamp = 0
                @Synthetic({ (s: Stamped) in
                    let value = s.input + 1
                    s.stamp = value
                    return value
                })
                var a: Int
                // Reads stamp, then a (whose function sets stamp): no property reads itself.
                @Synthetic({ (s: Stamped) in s.stamp + s.a }) var b: Int
            }
            let stamped = Stamped()
            let observer = TestObserver()
            observer.observe(stamped.$b) { _ in }
            stamped.input = 2
            _ = observer
        }
    }

    // MARK: Deep chains

    @Test(
        "chains: a chain 2,000 properties long is computed, checked and observed on the main thread"
    )
    func deepChain() async {
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

    // MARK: Leaks

    @Test(
        "leaks: an owner with declared paths, and a property another object's property read, are freed"
    )
    func declaredPathsAndCrossObjectDependenciesAreFreed() {
        weak var declared: Declared?
        weak var settings: DisplaySettings?
        weak var a: Partner?
        weak var b: Partner?
        do {
            let strong = Declared()
            _ = strong.typed
            _ = strong.text
            let strongSettings = DisplaySettings()
            strong.settings = strongSettings
            _ = strong.typed
            let observer = TestObserver()
            observer.observe(strong.$typed) { _ in }
            strongSettings.separator = "-"
            declared = strong
            settings = strongSettings
            let partnerA = Partner()
            let partnerB = Partner()
            partnerB.other = partnerA
            _ = partnerB.withOther
            observer.observe(partnerB.$withOther) { _ in }
            partnerA.base = 3
            a = partnerA
            b = partnerB
        }
        #expect(declared == nil)
        #expect(settings == nil)
        #expect(a == nil)
        #expect(b == nil)
    }
}
