import Dispatch
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge
@testable import Messaging

/// a → b → c, where c reads a once `closed` (the cycle tests make it close at a checked
/// property).
private final class Loop {
    @ObservableVar var closed = false
    @ObservableVar var x = 0
    @ObservableVar var base = 1
    @Synthetic({ (l: Loop) in l.x + l.b }) var a: Int
    @Synthetic({ (l: Loop) in l.c + 1 }) var b: Int
    @Synthetic({ (l: Loop) in l.closed ? l.a : l.base }) var c: Int

    /// The message's cycle.
    static let cycle = "synthetic property cycle: Loop.a → Loop.b → Loop.c → Loop.a."
}

/// An owner whose mirror hides its properties.
final class Hidden: CustomReflectable {
    @ObservableVar var x = 1
    @Synthetic({ (h: Hidden) in h.x + 1 }) var plusOne: Int
    @Synthetic({ (h: Hidden) in h.x + 2 }) var plusTwo: Int
    var customMirror: Mirror { Mirror(self, children: [:]) }
}

/// An owner with a mirror of its own, which counts how often it is asked for.
final class MirrorCounting: CustomReflectable, @unchecked Sendable {
    @ObservableVar var x = 1
    @Synthetic({ (m: MirrorCounting) in m.x * 3 }) var triple: Int
    private(set) var mirrorsMade = 0
    var customMirror: Mirror {
        mirrorsMade += 1
        return Mirror(self, children: ["triple": _triple])
    }
}

/// `p` = (count += 1; `s`), `s` = `p`: `p` overtakes itself (it changes what it read) on every
/// evaluation, and is a cycle.
final class SelfOvertaking: @unchecked Sendable {
    @ObservableVar var count = 0
    @Synthetic({ (m: SelfOvertaking) in
        m.count += 1
        return m.s
    })
    var p: Int
    @Synthetic({ (m: SelfOvertaking) in m.p }) var s: Int
}

/// A cycle among synthetic properties stops the process with a message naming the properties of
/// the cycle, in order; what no state of the program has is no cycle. (The names come from the
/// owner's mirror, or from where the property was made.)
@Suite("Synthetic properties: a cycle is a runtime error that names its properties")
struct SyntheticCycleTests {
    @Test("a cycle is a runtime error, not a stack overflow or a hang")
    func aCycleIsARuntimeErrorNotAStackOverflowOrAHang() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Loop {
                @ObservableVar var closed = true
                @Synthetic({ (l: Loop) in l.closed ? l.b + 1 : 0 }) var a: Int
                @Synthetic({ (l: Loop) in l.a + 1 }) var b: Int
            }
            _ = Loop().a
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("synthetic property cycle: Loop.a → Loop.b → Loop.a"))
        }
    }

    @Test("a cycle that closes at a property being checked names every property, in order")
    func aCycleClosingAtACheckedPropertyNamesEveryPropertyInOrder() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = Loop()
            _ = loop.a  // valid, through b and c
            // c now reads a: a and b are checked (they may be stale), c is evaluated.
            loop.closed = true
            _ = loop.a
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains(Loop.cycle), "\(text)")
        }
    }

    @Test("a cycle through a property checked inside an evaluation names it in its place")
    func aCycleThroughACheckInsideAnEvaluationNamesItInItsPlace() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = Loop()
            _ = loop.a
            loop.closed = true  // c invalid; b and a may be stale
            loop.x = 1  // a invalid: it is evaluated, and checks b, which evaluates c
            _ = loop.a
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains(Loop.cycle), "\(text)")
        }
    }

    /// c (checked) → s (evaluated) → starts observing b (withoutFrames hides s's frame) → b
    /// reads s. The cycle is s → b → s; c is not part of it.
    @Test("a cycle that closes in an observer started by an evaluation names only its own")
    func aCycleClosingInAnObserverStartedByAnEvaluationNamesOnlyItsOwn() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Outside {
                @ObservableVar var closed = false
                let observer = TestObserver()
                @Synthetic({ (o: Outside) in o.s + 1 }) var c: Int
                @Synthetic({ (o: Outside) in
                    if o.closed { o.observer.observe(o.$b) { _ in } }
                    return 1
                })
                var s: Int
                @Synthetic({ (o: Outside) in o.s }) var b: Int
            }
            let model = Outside()
            _ = model.c  // c and s valid
            model.closed = true  // s invalid, c may be stale
            _ = model.c  // c is checked; s evaluates, observes b, b reads s
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                text.contains("synthetic property cycle: Outside.s → Outside.b → Outside.s."),
                "\(text)")
        }
    }

    /// Wiring a declared path runs without frames; the message once lost the properties
    /// evaluated around it.
    @Test("a cycle found while a declared path is wired names the properties around it")
    func aCycleFoundWhileADeclaredPathIsWiredNamesThePropertiesAroundIt() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Wired {
                @ObservableVar var base = 1
                @Synthetic({ (w: Wired) in w.b + 1 }) var a: Int
                // Reading b binds it: observing its declared path evaluates c, which reads a.
                @Synthetic(dependsOn: [.path(\Wired.$c)], { (w: Wired) in w.base }) var b: Int
                @Synthetic({ (w: Wired) in w.a + 1 }) var c: Int
            }
            _ = Wired().a
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                text.contains("synthetic property cycle: Wired.a → Wired.c → Wired.a."),
                "\(text)")
        }
    }

    @Test("a cycle among properties made at run time, closing at a checked one, is a loop")
    func aCycleAmongPropertiesMadeAtRunTimeIsNamedAsALoop() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Sheet {
                @ObservableVar var closed = false
                var cells: [Synthetic<Sheet, Int>] = []
            }
            let sheet = Sheet()
            sheet.cells = [
                Synthetic(owner: sheet, name: "cell0") { $0.cells[1].value + 1 },
                Synthetic(owner: sheet, name: "cell1") { $0.closed ? $0.cells[0].value : 0 },
            ]
            _ = sheet.cells[0].value
            sheet.closed = true
            _ = sheet.cells[0].value
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                text.contains("synthetic property cycle: Sheet.cell0 → Sheet.cell1 → Sheet.cell0."),
                "\(text)")
        }
    }

    @Test("a cycle found while checking (dependencies changed by a branch) names both")
    func aCycleFoundWhileCheckingNamesBothProperties() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Loop {
                @ObservableVar var closed = false
                @ObservableVar var base = 1
                @Synthetic({ (l: Loop) in l.inner + 1 }) var outer: Int
                @Synthetic({ (l: Loop) in l.closed ? l.outer : l.base }) var inner: Int
            }
            let loop = Loop()
            _ = loop.outer  // valid; reads inner
            loop.closed = true  // inner now reads outer: outer checks inner
            _ = loop.outer
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("synthetic property cycle"))
            #expect(text.contains("Loop.outer") && text.contains("Loop.inner"), "\(text)")
        }
    }

    /// A property whose function changes a variable it read, and then reads itself through
    /// another, would overtake itself on every evaluation: the write is reported, never retried.
    @Test("a cycle through a function that overtakes itself is reported, not retried forever")
    func aCycleThroughAFunctionThatOvertakesItselfIsReportedNotRetried() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = SelfOvertaking()
            model.p = 5  // a value (hybrid), to read while p is computed
            model.$p.invalidate()
            _ = model.p
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                text.contains(
                    "SelfOvertaking.p changed SelfOvertaking.count, which its evaluation"),
                "\(text)")
        }
    }

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

    @Test("a synthetic property made at run time names itself in messages")
    func aPropertyMadeAtRunTimeNamesItselfInMessages() {
        let contact = Contact()
        let initials = Synthetic(owner: contact, name: "initials") { (c: Contact) in
            String(c.first.prefix(1)) + String(c.last.prefix(1))
        }
        #expect(initials.value == "AL")
        #expect(initials.debugName == "initials")
        contact.first = "Grace"
        #expect(initials.value == "GL")
    }

    @Test("a declared property, read first through its getter, is named after its declaration")
    func aDeclaredPropertyIsNamedAfterItsDeclaration() {
        let contact = Contact()
        #expect(contact.fullName == "Ada Lovelace")
        #expect(contact.$fullName.debugName == "fullName")
    }

    @Test("naming a property never runs its owner's custom mirror")
    func namingAPropertyNeverRunsTheOwnersCustomMirror() {
        let owner = MirrorCounting()
        #expect(owner.triple == 3)
        owner.x = 2
        #expect(owner.triple == 6)
        #expect(owner.$triple.debugName?.hasPrefix("<unnamed Int ") == true)
        #expect(owner.mirrorsMade == 0)
    }

    @Test("a property that the owner's mirror hides, read first through its getter, has a name")
    func aPropertyTheOwnersMirrorHidesHasANameOfItsOwn() {
        let hidden = Hidden()
        #expect(hidden.plusOne == 2)
        #expect(hidden.plusTwo == 3)
        let names = [hidden.$plusOne.debugName, hidden.$plusTwo.debugName]
        #expect(names.allSatisfy { $0?.hasPrefix("<unnamed Int ") == true })
        #expect(names[0] != names[1])
    }

    @Test("the cycle message names the properties of the cycle")
    func theCycleMessageNamesThePropertiesOfTheCycleInOrder() {
        let message = SyntheticCycle.message(cycle: ["A.b", "A.c", "A.b"])
        #expect(message.hasPrefix("Herald: synthetic property cycle: A.b → A.c → A.b."))
    }
}

/// A cycle spread over threads is reported as one, not a hang; threads that wait for each other
/// only because dependencies switched meanwhile are no cycle.
@Suite("Synthetic properties: cycles across threads (concurrency)", .serialized)
struct SyntheticCycleConcurrencyTests {
    /// A seeded graph: property `i` reads a few lower-numbered ones, and the ring `ring` (each
    /// member reads the next, the last the first) closes a real cycle. Threads read random
    /// properties at once: whichever reaches the ring first reports it, naming its members.
    @Test func aRealCycleInARandomGraphReadByThreadsIsReportedNamingIt() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (ring, seed): ([Int], UInt64) = ([3, 7, 5], 1)
            final class Graph: @unchecked Sendable {
                var properties: [Synthetic<Graph, Int>] = []
                init(count: Int, ring: [Int], seed: UInt64) {
                    var random = SeededGenerator(seed: seed)
                    let reads: [[Int]] = (0..<count).map { i in
                        if let at = ring.firstIndex(of: i) { return [ring[(at + 1) % ring.count]] }
                        return (0..<i).filter { _ in random.next() % 3 == 0 }
                    }
                    for i in 0..<count {
                        properties.append(
                            Synthetic(owner: self, name: "g\(i)") { (graph: Graph) in
                                reads[i].reduce(i) { $0 + graph.properties[$1].value }
                            })
                    }
                }
            }
            let graph = UncheckedBox(Graph(count: 12, ring: ring, seed: seed))
            concurrently(threads: 3) { index in
                var random = SeededGenerator(seed: seed &* 7 &+ UInt64(index))
                for _ in 0..<1_000 {
                    _ = graph.value.properties[Int(random.next() % 12)].value
                }
            }
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("synthetic property cycle: "), "\(text)")
            for member in [3, 7, 5] { #expect(text.contains("Graph.g\(member)"), "\(text)") }
        }
    }

    @Test("a cycle spread over two threads is a runtime error, not a hang")
    func aCycleSpreadOverTwoThreadsIsARuntimeErrorNotAHang() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Pair: @unchecked Sendable {
                let xStarted = DispatchSemaphore(value: 0)
                let yStarted = DispatchSemaphore(value: 0)
                @Synthetic({ (p: Pair) in
                    p.xStarted.signal()
                    p.yStarted.wait()
                    return p.y + 1
                })
                var x: Int
                @Synthetic({ (p: Pair) in
                    p.yStarted.signal()
                    p.xStarted.wait()
                    return p.x + 1
                })
                var y: Int
            }
            let pair = UncheckedBox(Pair())
            _ = pair.value.$x
            _ = pair.value.$y
            DispatchQueue.global().async { _ = pair.value.y }
            _ = pair.value.x
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            // Either thread may find it first.
            #expect(
                text.contains("synthetic property cycle: Pair.x → Pair.y → Pair.x.")
                    || text.contains("synthetic property cycle: Pair.y → Pair.x → Pair.y."),
                "\(text)")
        }
    }

    @Test("a cycle over three threads names its properties in a loop, in order")
    func aCycleOverThreeThreadsNamesItsPropertiesInALoopInOrder() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            // x → y → z → x, each started on its own thread: each reads the next once all three
            // are computing. Between two properties of the loop, an intermediate one (`viaY`).
            final class Ring: @unchecked Sendable {
                let started = DispatchSemaphore(value: 0)
                let go = DispatchSemaphore(value: 0)
                let meetings = Atomic<Int>(0)
                /// The first three runs (one per thread) meet; a run computed aside goes on.
                func meet() {
                    guard meetings.wrappingAdd(1, ordering: .sequentiallyConsistent).oldValue < 3
                    else { return }
                    started.signal()
                    go.wait()
                }
                @Synthetic({ (r: Ring) in
                    r.meet()
                    return r.viaY + 1
                })
                var x: Int
                @Synthetic({ (r: Ring) in r.y }) var viaY: Int
                @Synthetic({ (r: Ring) in
                    r.meet()
                    return r.z + 1
                })
                var y: Int
                @Synthetic({ (r: Ring) in
                    r.meet()
                    return r.x + 1
                })
                var z: Int
            }
            let ring = UncheckedBox(Ring())
            _ = (ring.value.$x, ring.value.$viaY, ring.value.$y, ring.value.$z)
            let threads = [
                JoinableThread { _ = ring.value.x },
                JoinableThread { _ = ring.value.y },
                JoinableThread { _ = ring.value.z },
            ]
            for _ in 0..<3 { ring.value.started.wait() }
            for _ in 0..<3 { ring.value.go.signal() }
            for thread in threads { thread.join() }  // the cycle ends the process first
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            let loops = [
                "Ring.x → Ring.viaY → Ring.y → Ring.z → Ring.x.",
                "Ring.y → Ring.z → Ring.x → Ring.viaY → Ring.y.",
                "Ring.z → Ring.x → Ring.viaY → Ring.y → Ring.z.",
            ]
            #expect(loops.contains { text.contains("synthetic property cycle: " + $0) }, "\(text)")
        }
    }

    /// Two instances of one class, each computed on its own thread, reading each other.
    @Test("a cycle over threads between two same-named properties names both")
    func aCycleOverThreadsBetweenTwoSameNamedPropertiesNamesBoth() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Peer: @unchecked Sendable {
                var other: Peer?
                let started: DispatchSemaphore
                let go: DispatchSemaphore
                init(_ started: DispatchSemaphore, _ go: DispatchSemaphore) {
                    self.started = started
                    self.go = go
                }
                let firstRun = Atomic<Bool>(true)
                @Synthetic({ (p: Peer) in
                    // The first run meets the other thread's; a run computed aside goes on.
                    if p.firstRun.exchange(false, ordering: .sequentiallyConsistent) {
                        p.started.signal()
                        p.go.wait()
                    }
                    return p.other!.value + 1
                })
                var value: Int
            }
            let started = DispatchSemaphore(value: 0)
            let go = DispatchSemaphore(value: 0)
            let a = Peer(started, go)
            let b = Peer(started, go)
            a.other = b
            b.other = a
            _ = (a.$value, b.$value)
            let box = UncheckedBox((a, b))
            let threads = [
                JoinableThread { _ = box.value.0.value },
                JoinableThread { _ = box.value.1.value },
            ]
            for _ in 0..<2 { started.wait() }
            for _ in 0..<2 { go.signal() }
            for thread in threads { thread.join() }
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                text.contains("synthetic property cycle: Peer.value → Peer.value → Peer.value."),
                "\(text)")
        }
    }

    /// No cycle at all: `x` reads `l`. Threads compute `l` and then read `x`, while others
    /// compute `x` (waiting for `l`). A thread that computes `x` and waits for `l` must not
    /// take the thread that just finished `l` and now waits for `x` for a cycle.
    @Test("threads handing an evaluation over are not reported as a cycle")
    func threadsHandingAnEvaluationOverAreNoCycle() async {
        await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            final class Model: @unchecked Sendable {
                @ObservableVar var v = 0
                @Synthetic({ (m: Model) in
                    var sum = m.v
                    for index in 0..<500 { sum &+= index & 1 }  // takes a while
                    return sum
                })
                var l: Int
                @Synthetic({ (m: Model) in m.l * 2 }) var x: Int
            }
            let models = (0..<4).map { _ in Model() }
            let box = UncheckedBox(models)
            pcConcurrently(threads: 8) { index in
                let model = box.value[index / 2]
                for round in 0..<20000 {
                    if index % 2 == 0 {
                        model.v = round
                        _ = model.l
                        _ = model.x
                    } else {
                        _ = model.x
                    }
                }
            }
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(!text.contains("cycle"), "\(text.prefix(400))")
        }
    }

    /// One thread: T1 computes `p` (flag is false: it reads `s`) and `s` inside it; another
    /// thread turns flag before `s` reads it, so `s` reads `p`, which T1 is computing. `s` gets
    /// the value `p` had; neither that `s` nor that `p` is stored, and the next reads compute
    /// them from the new state.
    @Test("threads: nested evaluations that read a variable before and after a change are no cycle")
    func nestedEvaluationsAcrossAChangeAreNoCycle() {
        let model = Self.computedOnce()
        let box = UncheckedBox(model)
        let results = model.results
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let t1 = JoinableThread { results.append("p \(box.value.p)") }
        model.gate.entered.wait()  // T1 computes p, and s inside it, held at the gate
        model.flag = true
        model.gate.open()
        t1.join()
        // T1 got a value (computed from p's last one), and nothing of it was stored.
        #expect(results.elements.count == 1)
        #expect(!model.$p.isValid)
        #expect(!model.$s.isValid)
        #expect(model.$p.evaluationCount == 2)
        #expect(model.$s.evaluationCount == 2)
        #expect(model.p == 0)
        #expect(model.s == 0)
        #expect(model.$p.isValid && model.$s.isValid)
        #expect(model.$p.evaluationCount == 3)
    }

    /// One thread checks `p` and computes `s` for the check;
    /// another turns flag meanwhile, and `s` reads `p`. The check was overtaken, so `p` is
    /// computed inside it (flag is true: `p` no longer reads `s`), not taken for a cycle.
    @Test("threads: a switch during a check, made by another thread, computes inside the check")
    func aSwitchMadeByAnotherThreadDuringACheckIsNoCycle() {
        let model = Switching()
        #expect(model.p == 2)
        model.base = 5  // s invalid, p may be stale
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let results = model.results
        let t1 = JoinableThread { results.append("p \(box.value.p)") }
        model.gate.entered.wait()  // T1 checks p and computes s, held before s reads anything
        model.flag = true  // overtakes p's check; s reads flag, and p, once base is above 3
        model.gate.open()
        t1.join()
        #expect(results.elements == ["p 0"])
        #expect(model.$p.isValid)
        #expect(model.$p.evaluationCount == 2)
        #expect(model.p == 0)
        #expect(model.s == 0)
    }

    /// A property computed inside its own overtaken check that reads itself is a cycle, not
    /// a computation inside that computation.
    @Test("threads: computed inside its overtaken check, a property that reads itself is a cycle")
    func selfReadInsideAnOvertakenCheckIsACycle() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = Switching()
            model.selfReading = true
            #expect(model.p == 2)
            model.base = 5
            model.gate.hold.store(true, ordering: .sequentiallyConsistent)
            let box = UncheckedBox(model)
            let t1 = JoinableThread { _ = box.value.p }
            model.gate.entered.wait()
            model.flag = true  // p now reads p
            model.gate.open()
            t1.join()
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("synthetic property cycle: Switching.p → Switching.p"), "\(text)")
        }
    }

    /// On one thread, a circle through an overtaken evaluation of a property that has no value
    /// yet (`p`) is no cycle: `p` is computed once more, inside (flag is true now: it reads no
    /// `s`), and the program goes on.
    @Test("one thread: an overtaken property with no value, re-entered, is computed once")
    func anOvertakenPropertyWithNoValueReenteredIsComputedOnce() async {
        await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let model = Switching()
            model.sReadsFlagAlways = true
            let box = UncheckedBox(model)
            model.gate.hold.store(true, ordering: .sequentiallyConsistent)
            let t1 = JoinableThread { _ = box.value.p }  // computes p, and s inside it
            model.gate.entered.wait()
            model.flag = true
            model.gate.open()
            t1.join()
            precondition(model.p == 0 && model.s == 0, "values as from scratch")
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(!text.contains("cycle"), "\(text)")
        }
    }

    /// `Switching` with `p` = `s` + 1 = 2 and `s` = base = 1 computed, then base 5 (`s` invalid)
    /// and `p` invalidated: the next read of `p` computes it, and `s` if no other thread does.
    static func computedOnce() -> Switching {
        let model = Switching()
        #expect(model.p == 2)
        model.base = 5
        model.$p.invalidate()
        return model
    }
}
