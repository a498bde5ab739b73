import Foundation
import HeraldTestSupport
import Testing

@testable import KeyPathBridge
@testable import Messaging

/// The frame open on this thread, as reads find it (the C thread-local variable).
private func openFrame() -> UnsafeMutableRawPointer? { DependencyTracking.currentFrame?.toOpaque() }

/// A chain and a diamond under one outer property, which reads `c` after the inner ones end.
private final class OFNest: @unchecked Sendable {
    let problems = Recording<String>()
    @ObservableVar var a = 1
    @ObservableVar var b = 10
    @ObservableVar var c = 100
    @Synthetic({ (m: OFNest) in m.a + 1 }) var inner: Int
    @Synthetic({ (m: OFNest) in m.inner + m.b }) var middle: Int
    @Synthetic({ (m: OFNest) in m.inner * 2 }) var side: Int
    @Synthetic({ (m: OFNest) in
        let mine = openFrame()
        let value = m.middle + m.side
        if mine == nil || mine != openFrame() { m.problems.append("outer lost its frame") }
        return value + m.c
    })
    var outer: Int
}

/// A function that reads on other threads (which must not count) and on its own (which must).
private final class OFThreads: @unchecked Sendable {
    let sawFrame = Recording<Bool>()  // whether the other thread found a frame open
    let list = ObservableArray<Int>([1])
    @ObservableVar var mine = 1
    @ObservableVar var theirs = 2
    @ObservableVar var viaQueue = 3
    @Synthetic({ (m: OFThreads) in m.theirs * 10 }) var theirSynthetic: Int
    @Synthetic({ (m: OFThreads) in
        let got = Recording<Int>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            m.sawFrame.append(openFrame() != nil)
            got.append(m.theirs + m.theirSynthetic + m.list.count)
            done.signal()
        }.start()
        done.wait()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { got.append(m.viaQueue) }
        group.wait()
        return got.elements.reduce(0, +) + m.mine
    })
    var total: Int
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

@Suite("Dependency tracking: the frame open on each thread", .serialized)
struct OpenFrameTests {
    @Test("after an inner evaluation ends (chain, diamond), the outer's reads go to the outer")
    func innerEndsOuterContinues() {
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

    @Test("reads on threads a function starts are not recorded; its own reads are")
    func otherThreadsNotRecorded() {
        let m = OFThreads()
        #expect(m.total == 2 + 20 + 1 + 3 + 1)
        (m.theirs, m.viaQueue) = (4, 30)
        m.list.append(9)
        // `theirSynthetic` recorded its read in its own frame, on the other thread.
        #expect(m.$total.isValid && !m.$theirSynthetic.isValid)
        m.mine = 5
        #expect(m.total == 4 + 40 + 2 + 30 + 5)
        #expect(!m.sawFrame.elements.contains(true))
    }

    @Test("observers inside an evaluation: frames hidden, then restored; later ones record nothing")
    func observersInsideEvaluation() {
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

    @Test("wiring a declared path inside an evaluation records nothing; later reads are recorded")
    func declaredPathWiredInsideEvaluation() {
        let m = OFDeclaring()
        #expect(m.wiring == 1)
        (m.useFirst, m.first) = (false, 10)  // `useFirst`: read by the key path, frames hidden
        #expect(m.$wiring.isValid && !m.$declared.isValid)
        m.after = 2
        #expect(m.wiring == 2)
    }

    @Test("short-lived threads evaluate nested properties; frames never leak across threads")
    func threadsThatExit() {
        let shared = OFNest()
        let problems = Recording<String>()
        for round in 0..<8 {
            concurrently(threads: 6) { index in
                if openFrame() != nil { problems.append("new thread starts with a frame") }
                let own = OFNest()
                own.c = round * 10 + index
                if own.outer != 16 + own.c { problems.append("own value") }
                _ = shared.outer
                own.c += 1
                if !own.$inner.isValid || own.$outer.isValid { problems.append("misrecorded") }
                if openFrame() != nil { problems.append("frame left open") }
                for p in own.problems.elements { problems.append(p) }
            }
        }
        #expect(problems.elements.isEmpty, "\(problems.elements)")
        #expect(shared.problems.elements.isEmpty)
    }

    @Test("threads evaluate different properties over shared variables while others set them")
    func sharedVariablesStress() {
        final class Reader: @unchecked Sendable {
            let (vars, k): ([Variable<Int>], Int)
            init(_ vars: [Variable<Int>], _ k: Int) { (self.vars, self.k) = (vars, k) }
            @Synthetic({ (r: Reader) in r.vars[r.k % 4].value + r.vars[(r.k + 1) % 4].value })
            var pair: Int
            @Synthetic({ (r: Reader) in r.pair * 10 + r.vars[(r.k + 2) % 4].value })
            var chained: Int
        }
        let vars = (0..<4).map { Variable($0) }
        let readers = (0..<6).map { Reader(vars, $0) }
        let problems = Recording<String>()
        concurrently(threads: 4) { index in
            for step in 0..<20_000 {
                if index < 2 {
                    vars[(step + index) % 4].value = step * (index + 1)
                } else {
                    let reader = readers[(step + index) % readers.count]
                    _ = (step % 2 == 0) ? reader.chained : reader.pair
                    if openFrame() != nil { problems.append("frame left open") }
                }
            }
        }
        let values = vars.map(\.value)
        for r in readers {
            let pair = values[r.k % 4] + values[(r.k + 1) % 4]
            #expect(r.pair == pair && r.chained == pair * 10 + values[(r.k + 2) % 4])
        }
        #expect(problems.elements.isEmpty, "\(problems.elements)")
    }
}
