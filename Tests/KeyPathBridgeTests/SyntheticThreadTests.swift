import Dispatch
import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge
@testable import Messaging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// A synthetic property whose function sets a variable while it computes (once, when `armed`).
final class SettingWhileComputing: @unchecked Sendable {
    let v1 = Var(0)
    let armed = Atomic<Bool>(false)
    @Synthetic({ (m: SettingWhileComputing) in
        if m.armed.exchange(false, ordering: .sequentiallyConsistent) { m.v1.value = 1 }
        return 7
    }) var s: Int
}

/// `p` declares a path through `slow`, which can be held at a gate while computed.
final class BoundSlowly: @unchecked Sendable {
    @ObservableVar var base = 1
    @ObservableVar var source = 0
    let gate = HoldingGate()
    @Synthetic(dependsOn: [.path(\BoundSlowly.$slow)], { (m: BoundSlowly) in m.base }) var p: Int
    @Synthetic({ (m: BoundSlowly) in
        m.gate.pass()
        return m.source
    })
    var slow: Int
}

/// `p` declares paths through `q`, which reads `p` (held at a gate), and through `tick`; its
/// value is read outside Herald.
final class ReenteredThenTicked: @unchecked Sendable {
    let raw = Atomic<Int>(0)
    @ObservableVar var tick = 0
    let gate = HoldingGate()
    @Synthetic(
        dependsOn: [.path(\ReenteredThenTicked.$q), .path(\ReenteredThenTicked.$tick)],
        { (m: ReenteredThenTicked) in m.raw.load(ordering: .sequentiallyConsistent) })
    var p: Int
    @Synthetic({ (m: ReenteredThenTicked) in
        let value = m.p
        m.gate.pass()
        return value + 1
    })
    var q: Int
}

/// `p` (held at a gate while computed) declares a path through `slow` (held at another while
/// its path is observed); its value is read outside Herald.
final class SlowRaw: @unchecked Sendable {
    let raw = Atomic<Int>(0)
    @ObservableVar var source = 0
    let wiring = HoldingGate()
    let pGate = HoldingGate()
    @Synthetic(
        dependsOn: [.path(\SlowRaw.$slow)],
        { (m: SlowRaw) in
            m.pGate.pass()
            return m.raw.load(ordering: .sequentiallyConsistent)
        })
    var p: Int
    @Synthetic({ (m: SlowRaw) in
        m.wiring.pass()
        return m.source
    })
    var slow: Int
}

/// A compute function that does everything it may: sets, invalidates, reads, observes.
final class LAReentrant: @unchecked Sendable {
    let observer = TestObserver()
    let heardOther = Recording<Int>()
    @ObservableVar var a = 1
    @ObservableVar var sideEffect = 0
    @Synthetic({ (m: LAReentrant) in m.a + 100 }) var other: Int
    @Synthetic({ (m: LAReentrant) in m.sideEffect * 3 }) var fromSideEffect: Int
    @Synthetic({ (m: LAReentrant) in m.a - 1 }) var unrelated: Int
    @Synthetic({ (m: LAReentrant) in
        let value = m.a * 2
        m.sideEffect = value
        m.$unrelated.invalidate()  // observed: queues work inside the evaluation
        let other = m.other
        let heard = m.heardOther
        m.observer.observe(m.$other) { heard.append($0.new) }
        m.observer.stopObserving(m.$other)
        _ = m.fromSideEffect
        return value + other
    })
    var busy: Int
}

/// A sign whose label can be held at a gate after reading `positive`.
final class Sign: @unchecked Sendable {
    @ObservableVar var x = -1
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let holding = Atomic<Bool>(false)
    @Synthetic({ (s: Sign) in s.x >= 0 }) var positive: Bool
    @Synthetic({ (s: Sign) in
        let positive = s.positive
        if s.holding.load(ordering: .sequentiallyConsistent) {
            s.entered.signal()
            s.gate.wait()
        }
        return positive ? "positive" : "negative"
    })
    var label: String
}

/// A ring of `count` properties: flag true: `r[i]` = `r[i+1]` + 1 and the last = base; flag
/// false: the last = `r[0]` + 1, the others base. Each `r[i]` also reads `v[i % 2]`. The last
/// can be held at a gate after it read flag.
final class LongRing: @unchecked Sendable {
    @ObservableVar var flag = false
    @ObservableVar var v0 = 0
    @ObservableVar var v1 = 0
    @ObservableVar var base = 1
    let gate = HoldingGate()
    var r: [Synthetic<LongRing, Int>] = []

    init(count: Int) {
        for i in 0..<count {
            r.append(
                Synthetic(owner: self, name: "r\(i)") { (m: LongRing) in
                    _ = i % 2 == 0 ? m.v0 : m.v1
                    let flag = m.flag
                    if i == count - 1 {
                        m.gate.pass()
                        return flag ? m.base : m.r[0].value + 1
                    }
                    return flag ? m.r[i + 1].value + 1 : m.base
                })
        }
    }
}

/// `count` synthetic properties whose dependencies switch with `mode`: in each mode a seeded
/// permutation ranks them, and a property reads (after `mode`, and its bit of `flags`, which
/// picks one of two seeded subsets) only lower-ranked ones, so that no state has a cycle, while
/// a change of mode reverses reads, and makes threads wait for each other in circles.
final class SwitchGraph: @unchecked Sendable {
    @ObservableVar var mode = 0
    @ObservableVar var base = 1
    @ObservableVar var flags = 0
    let modes: Int
    /// `ranks[mode][i]`.
    private let ranks: [[Int]]
    /// `reads[mode][flag][i]`: bit `j` set if `i` reads `j` (when `j` ranks lower).
    private let reads: [[[UInt64]]]
    private let steps = Atomic<Int>(0)
    var properties: [Synthetic<SwitchGraph, Int>] = []
    private static let modulus = 1_000_003

    init(count: Int, modes: Int, seed: UInt64) {
        self.modes = modes
        var random = SeededGenerator(seed: seed)
        ranks = (0..<modes).map { _ in
            var rank = [Int](repeating: 0, count: count)
            for (position, i) in Array(0..<count).shuffled(using: &random).enumerated() {
                rank[i] = position
            }
            return rank
        }
        reads = (0..<modes).map { _ in (0..<2).map { _ in (0..<count).map { _ in random.next() } } }
        for i in 0..<count {
            properties.append(
                Synthetic(owner: self, name: "q\(i)") { (graph: SwitchGraph) in graph.compute(i) })
        }
    }

    /// What `i` reads in `mode` with its flag `flag`, in an order that differs from the ranks.
    private func sources(of i: Int, mode: Int, flag: Int) -> [Int] {
        let (rank, mask, count) = (ranks[mode], reads[mode][flag][i], properties.count)
        return (0..<count).filter { rank[$0] < rank[i] && (mask >> UInt64($0)) & 1 == 1 }
            .sorted { (rank[$0] * 7 + $0) % count < (rank[$1] * 7 + $1) % count }
    }

    /// Lets other threads in now and then, so that switches land inside evaluations.
    private func pause() {
        if steps.add(1, ordering: .relaxed).newValue % 3 == 0 { sched_yield() }
    }

    private func compute(_ i: Int) -> Int {
        let mode = self.mode % modes
        pause()
        let flag = (flags >> i) & 1
        pause()
        var value = (mode * 7 + i * 13 + base) % Self.modulus
        for j in sources(of: i, mode: mode, flag: flag) {
            value = (value + properties[j].value * 3) % Self.modulus
            pause()
        }
        return value
    }

    /// Every property's value computed from scratch in the current state.
    func fromScratch() -> [Int] {
        let (mode, flags, base) = (self.mode % modes, self.flags, self.base)
        var known = [Int?](repeating: nil, count: properties.count)
        func value(_ i: Int) -> Int {
            if let result = known[i] { return result }
            var result = (mode * 7 + i * 13 + base) % Self.modulus
            for j in sources(of: i, mode: mode, flag: (flags >> i) & 1) {
                result = (result + value(j) * 3) % Self.modulus
            }
            known[i] = result
            return result
        }
        return (0..<properties.count).map(value)
    }
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

/// Reads, sets and invalidations may come from any thread: no change or set is lost, nothing deadlocks, and once the threads are done every value
/// is the one computed from scratch and observers were told it.
@Suite("Synthetic properties: from any thread", .serialized)
struct SyntheticThreadTests {
    @Test("threads: reads, sets and invalidations from many threads agree with the sources")
    func readsSetsAndInvalidationsFromManyThreadsAgreeWithTheSources() {
        let gated = Gated()
        let box = UncheckedBox(gated)
        concurrently(threads: 4) { index in
            for step in 0..<300 {
                switch (index + step) % 3 {
                case 0: box.value.input = step
                case 1: _ = box.value.doubled
                default: box.value.$doubled.invalidate()
                }
            }
        }
        #expect(gated.doubled == gated.input * 2)
        #expect(gated.mostRunning.load(ordering: .sequentiallyConsistent) == 1)
    }

    @Test("threads: observed properties from many threads end with the right value")
    func anObservedPropertySetFromManyThreadsEndsWithTheRightValue() {
        let gated = Gated()
        let observer = TestObserver()
        let last = Recording<Int>()
        observer.observe(gated.$doubled) { last.append($0.new) }
        let box = UncheckedBox(gated)
        concurrently(threads: 4) { index in
            for step in 0..<200 { box.value.input = index * 1000 + step }
        }
        #expect(gated.doubled == gated.input * 2)
        #expect(last.elements.last == gated.input * 2)
    }

    @Test("threads: the observers of an observed property always end told of its final value")
    func theObserversOfAnObservedPropertyEndToldOfItsFinalValue() {
        for _ in 0..<50 {
            let model = PairOfSources()
            let observer = TestObserver()
            let last = Recording<Int>()
            observer.observe(model.$tenfold) { update in last.append(update.new) }
            let box = UncheckedBox(model)
            concurrently(threads: 4) { index in
                for step in 0..<200 { box.value.x = index * 1000 + step }
            }
            #expect(last.elements.last == model.tenfold)
        }
    }

    @Test("threads: an invalidation during an evaluation is not lost")
    func anInvalidationDuringAnEvaluationIsNotLost() {
        let gated = Gated()
        gated.holdAtGate.store(true, ordering: .sequentiallyConsistent)
        let done = DispatchSemaphore(value: 0)
        let box = UncheckedBox(gated)
        let first = Recording<Int>()
        DispatchQueue.global().async {
            first.append(box.value.doubled)
            done.signal()
        }
        gated.entered.wait()
        gated.input = 5  // the running evaluation read 1 before the gate
        gated.holdAtGate.store(false, ordering: .sequentiallyConsistent)
        gated.gate.signal()
        done.wait()
        #expect(first.elements == [2])
        #expect(!gated.$doubled.isValid)
        #expect(gated.doubled == 10)
    }

    @Test("an evaluation dropped because of a change meanwhile leaves no stale value behind")
    func anEvaluationDroppedForAChangeMeanwhileLeavesNoStaleValue() {
        let sign = Sign()
        #expect(sign.label == "negative")
        sign.x = 1
        sign.holding.store(true, ordering: .sequentiallyConsistent)
        let done = DispatchSemaphore(value: 0)
        let box = UncheckedBox(sign)
        DispatchQueue.global().async {
            _ = box.value.label
            done.signal()
        }
        sign.entered.wait()  // label read the new `positive` and is held
        sign.holding.store(false, ordering: .sequentiallyConsistent)
        // Makes label possibly stale while it computes: its result is not stored. `positive`
        // will compute the same value again, so its version will not move.
        sign.$positive.invalidate()
        sign.gate.signal()
        done.wait()
        #expect(sign.label == "positive")
    }

    @Test("order: another thread's change queued behind a delivery is heard before the value")
    func anotherThreadsChangeQueuedBehindADeliveryIsHeardBeforeTheValue() {
        let tens = Tens()
        let observer = TestObserver()
        let log = Recording<String>()
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        observer.observe(tens.$a) { update in
            log.append("a \(update.new)")
            if update.new == 1 {
                entered.signal()
                gate.wait()
            }
        }
        observer.observe(tens.$tenfold) { update in log.append("tenfold \(update.new)") }
        let box = UncheckedBox(tens)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            box.value.a = 1
            done.signal()
        }
        entered.wait()
        // The other thread delivers: this change is queued behind its delivery of 1.
        tens.a = 2
        gate.signal()
        done.wait()
        #expect(log.elements == ["a 1", "a 2", "tenfold 20"])
    }

    @Test("threads: no deadlock when properties of two objects depend on each other's")
    func propertiesOfTwoObjectsThatReadEachOthersDoNotDeadlock() {
        let a = Partner()
        let b = Partner()
        a.other = b
        b.other = a
        let boxA = UncheckedBox(a)
        let boxB = UncheckedBox(b)
        let finished = finishes(within: 60) {
            concurrently(threads: 4) { index in
                for step in 0..<500 {
                    switch index {
                    case 0: _ = boxA.value.withOther
                    case 1: _ = boxB.value.withOther
                    case 2: boxA.value.base = step
                    default: boxB.value.base = step
                    }
                }
            }
        }
        #expect(finished)
        #expect(a.withOther == a.base + 1 + b.base + 1)
        #expect(b.withOther == a.withOther)
    }

    /// A set while another thread checks the property's sources (it may be stale) must be kept,
    /// as it is when the set comes during an evaluation. (The check once saw the marks move and
    /// evaluated, storing its value over the one set.)
    @Test func aSetDuringACheckIsKept() {
        let model = HeldCheck()
        #expect(model.label == "yes")
        model.hold.store(true, ordering: .sequentiallyConsistent)
        model.input = 2  // positive: invalid; label: may be stale
        let box = UncheckedBox(model)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = box.value.label  // checks label's sources: evaluates positive, held at the gate
            done.signal()
        }
        model.entered.wait()
        model.label = "set"  // hybrid: valid until the next invalidation
        model.hold.store(false, ordering: .sequentiallyConsistent)
        model.gate.signal()
        done.wait()
        // positive is still true: nothing invalidated label after the set.
        #expect(model.label == "set")
        #expect(model.$label.evaluationCount == 1)
    }

    /// The same set during an evaluation is kept (for comparison).
    @Test func aSetDuringAnEvaluationIsKept() {
        let model = HeldCheck()
        #expect(model.label == "yes")
        model.hold.store(true, ordering: .sequentiallyConsistent)
        model.$label.invalidate()
        model.$positive.invalidate()
        let box = UncheckedBox(model)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = box.value.label  // evaluates label, which evaluates positive, held at the gate
            done.signal()
        }
        model.entered.wait()
        model.label = "set"
        model.hold.store(false, ordering: .sequentiallyConsistent)
        model.gate.signal()
        done.wait()
        #expect(model.label == "set")
    }

    /// A set arrives while an evaluation is held at the gate; the evaluation then reads a new
    /// source (`z`, not `y`). The set wins; the evaluation's reads still count: a change of the
    /// new source invalidates the property, one of the old one does not.
    @Test("a hybrid set during an evaluation that changes its sources stands; its reads count")
    func aSetDuringAnEvaluationThatChangesItsSourcesStands() {
        let deaths = PCCounter()
        let model = PCGated(deaths: deaths)
        #expect(model.slow == 11)
        model.hold.store(true, ordering: .sequentiallyConsistent)
        model.useZ = true
        let box = UncheckedBox(model)
        let result = Recording<Int>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            result.append(box.value.slow)
            done.signal()
        }.start()
        model.entered.wait()
        model.slow = 999
        model.gate.signal()
        done.wait()
        #expect(result.elements == [101])  // the reader gets what it computed
        #expect(model.slow == 999)
        #expect(model.$slow.isValid)
        model.y = 20  // no longer read
        #expect(model.$slow.isValid)
        #expect(model.slow == 999)
        model.z = 200  // read by the dropped evaluation
        #expect(!model.$slow.isValid)
        #expect(model.slow == 201)
        let slowID = ObjectIdentifier(model.$slow)
        #expect(model.$y.core.lock.withLock { model.$y.core.dependents } == nil)
        #expect(
            model.$z.core.lock.withLock { model.$z.core.dependents }?.entries.map(\.identity) == [
                slowID
            ])
    }

    /// Threads set the property (hybrid), change its sources (and which it reads), invalidate
    /// and read it at once; once still, a change of each source it now reads brings it back to
    /// its function's value, and sources it does not read do not hold it.
    @Test("hybrid sets racing evaluations and branch changes, from threads")
    func setsRacingEvaluationsEndWhenASourceTheFunctionReadsChanges() {
        let deaths = PCCounter()
        let model = PCGated(deaths: deaths)
        let observer = TestObserver()
        let heard = Mutex<Int?>(nil)
        observer.observe(model.$slow) { update in heard.withLock { $0 = update.new } }
        let box = UncheckedBox(model)
        let barrier = PCBarrier(parties: 4)
        let failures = Recording<String>()
        pcConcurrently(threads: 4) { index in
            let model = box.value
            var random = SeededGenerator(seed: 77 + UInt64(index))
            for round in 0..<150 {
                for _ in 0..<10 {
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0: model.slow = Int.random(in: 1000...2000, using: &random)
                    case 1: model.x = Int.random(in: 0...3, using: &random)
                    case 2: model.useZ.toggle()
                    case 3: model.$slow.invalidate()
                    case 4: model.y = Int.random(in: 10...13, using: &random)
                    default: _ = model.slow
                    }
                }
                barrier.wait()
                if index == 0 {
                    // Still: a change of a source it reads brings it back to its function.
                    model.x += 1
                    let expected = model.x + (model.useZ ? model.z : model.y)
                    if model.slow != expected {
                        failures.append("round \(round): \(model.slow), expected \(expected)")
                    }
                    if heard.withLock({ $0 }) != expected {
                        failures.append("round \(round): heard \(heard.withLock { $0 } as Any)")
                    }
                    let id = ObjectIdentifier(model.$slow)
                    let unread = model.useZ ? model.$y : model.$z
                    if unread.core.lock.withLock({ unread.core.dependents })?.entries.contains(
                        where: { $0.identity == id }) == true
                    {
                        failures.append("round \(round): still depends on the unread source")
                    }
                }
                barrier.wait()
            }
        }
        #expect(failures.elements.isEmpty, "\(failures.elements.prefix(10))")
    }

    /// While one thread binds `p` (held observing its declared path, through `slow`), another
    /// reads `p`, which is computed and cached; then a source along the path changes, before
    /// the path is observed. The binding must not leave that value valid: the binding thread's
    /// own read then computes again.
    @Test("threads: a change along a declared path while it is being wired is not missed")
    func aChangeAlongADeclaredPathWhileItIsWiredIsNotMissed() {
        let model = BoundSlowly()
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let t1 = JoinableThread { _ = box.value.p }  // binds p: evaluates slow, held there
        model.gate.entered.wait()
        let t2 = JoinableThread { _ = box.value.p }  // reads p meanwhile: computed, cached
        t2.join()
        #expect(model.$p.evaluationCount == 1)
        model.source = 1  // along p's declared path, not yet observed
        model.gate.open()
        t1.join()  // T1's read, after the binding, computes again
        #expect(model.$p.evaluationCount == 2)
    }

    /// A hybrid set made while another thread binds the property was once thrown away by the
    /// binding's invalidation.
    @Test("threads: a hybrid set made while another thread binds the property stands")
    func aSetMadeWhileAnotherThreadBindsThePropertyStands() {
        let model = BoundSlowly()
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let t1 = JoinableThread { _ = box.value.p }  // binds p; held in slow while wiring
        model.gate.entered.wait()
        let t2 = JoinableThread { box.value.p = 42 }
        t2.join()
        model.gate.open()
        t1.join()
        #expect(model.p == 42)
        #expect(model.$p.evaluationCount == 0)
    }

    /// Observing the first declared path (through `q`, which
    /// reads `p`) computes `p` on the binding thread; a change along the second path, not yet
    /// observed, was once missed.
    @Test("a value the binding thread computes before its last path is observed is not kept")
    func aValueTheBindingThreadComputesBeforeItsLastPathIsObservedIsNotKept() {
        let model = ReenteredThenTicked()
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let t1 = JoinableThread { _ = box.value.p }  // observing q computes p, held in q
        model.gate.entered.wait()
        model.raw.store(1, ordering: .sequentiallyConsistent)
        model.tick = 1  // along p's second path, not yet observed
        model.gate.open()
        t1.join()
        #expect(model.p == 1)
    }

    /// A read during the binding once marked the property, and a set after it was thrown away.
    @Test("threads: a hybrid set after a read during another thread's binding stands")
    func aSetAfterAReadDuringAnotherThreadsBindingStands() {
        let model = SlowRaw()
        model.wiring.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let binder = JoinableThread { _ = box.value.p }  // binds p; held in slow
        model.wiring.entered.wait()
        JoinableThread { _ = box.value.p }.join()  // computed meanwhile: 0
        JoinableThread { box.value.p = 42 }.join()
        model.wiring.open()
        binder.join()
        #expect(model.p == 42)
    }

    /// An evaluation during the binding, overtaken by a set (so its value is dropped), once still
    /// marked the property, and the set was thrown away.
    @Test("threads: a hybrid set during an evaluation during another thread's binding stands")
    func aSetDuringAnEvaluationDuringAnotherThreadsBindingStands() {
        let model = SlowRaw()
        model.wiring.hold.store(true, ordering: .sequentiallyConsistent)
        model.pGate.hold.store(true, ordering: .sequentiallyConsistent)
        let box = UncheckedBox(model)
        let binder = JoinableThread { _ = box.value.$p }  // binds p; held in slow
        model.wiring.entered.wait()
        let reader = JoinableThread { _ = box.value.p }  // held in p
        model.pGate.entered.wait()
        JoinableThread { box.value.p = 42 }.join()
        model.pGate.open()
        reader.join()
        model.wiring.open()
        binder.join()
        #expect(model.p == 42)
    }

    /// A set that marks an observed synthetic property, behind another thread's delivery: the
    /// propagation it queues and its message are both behind, and the setting thread waits for
    /// its turn once, when everything else its set does is done. (It registered twice, once for
    /// each, and waited on the second while the role was handed to the first, which nobody
    /// waited on: nothing was delivered until both waits had run out.)
    @Test func aSetThatMarksAnObservedSyntheticPropertyWaitsForItsTurnOnce() {
        let tens = Tens()
        let observer = TestObserver()
        let ready = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let core = tens.$a.core
        observer.observe(tens.$tenfold) { _ in }
        observer.observe(tens.$a) { update in
            if update.new == 1 { for i in 2..<40 { tens.a = i } }  // queued: the turn is behind
            if update.new == 39 { tens.a = 40 }
            if update.new == 40 {
                ready.signal()
                gate.wait()
            }
        }
        let box = UncheckedBox(tens)
        let mostWaiting = Atomic<Int>(0)
        let finished = finishes(within: 60) {
            let deliverer = JoinableThread { box.value.a = 1 }
            ready.wait()
            let setter = JoinableThread { box.value.a = 100 }
            // The setter waits now (the delivering thread is held), until its wait runs out.
            while true {
                let (waiting, withdrawn) = core.lock.withLock {
                    (core.state.turn.takers.count, core.state.turn.withdrawals)
                }
                mostWaiting.max(waiting, ordering: .relaxed)
                if withdrawn > 0 { break }
            }
            gate.signal()
            deliverer.join()
            setter.join()
        }
        #expect(finished)
        #expect(mostWaiting.load(ordering: .relaxed) <= 1, "the setter waited twice at once")
        #expect(tens.tenfold == 1_000)
    }

    /// A thread computing `s` sets `v1`, whose handler sets `v2`, which another thread delivers
    /// and is behind; that thread's handler then reads `s`, and so waits for the computation.
    /// The computing thread must not wait for `v2`'s turn (it would wait for a thread that waits
    /// for it): it forgets the turn it owes, since it is computing.
    @Test func aComputationWhoseSetIsRelayedBehindAnotherThreadDoesNotWaitForThatThread() {
        let withdrawn = Atomic<Int>(-1)
        let finished = finishes(within: 10) {
            let model = SettingWhileComputing()
            let v2 = Var(0)
            let observer = TestObserver()
            let dReady = DispatchSemaphore(value: 0)
            let gate = DispatchSemaphore(value: 0)
            let inCompute = DispatchSemaphore(value: 0)
            observer.observe(model.v1) { _ in
                v2.value = 1_000  // queued behind d, which is behind: owed
                inCompute.signal()
            }
            observer.observe(v2) { update in
                guard update.new == 1 else { return }
                for i in 2..<42 { v2.value = i }  // re-entrant: 40 queued, the turn is behind
                dReady.signal()
                gate.wait()
                _ = model.s  // waits for e, which computes s
            }
            let d = JoinableThread { v2.value = 1 }
            dReady.wait()
            model.armed.store(true, ordering: .sequentiallyConsistent)
            let e = JoinableThread { _ = model.s }
            inCompute.wait()
            gate.signal()
            d.join()
            e.join()
            withdrawn.store(
                v2.core.lock.withLock { v2.core.state.turn.withdrawals }, ordering: .relaxed)
        }
        #expect(finished)
        // Had the computing thread waited, it would have withdrawn: the thread it waited for
        // took no step, waiting for it.
        #expect(withdrawn.load(ordering: .relaxed) == 0)
    }

    /// Two changes from another thread, each marking a different observed property, while a
    /// delivery of the variable is in progress: each hands its marked work to the variable's
    /// turn. When the delivering thread drains its queue, each work item sees the other pending
    /// (`hasPending`) and queues itself behind it again, forever.
    @Test("two hand-overs of marked work queued behind one delivery are both run")
    func twoHandOversOfMarkedWorkQueuedBehindOneDeliveryAreBothRun() {
        let observer = TestObserver()
        let source = Variable(0)
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        observer.observe(source) { update in
            if update.new == 1 {
                entered.signal()
                gate.wait()
            }
        }
        let holder = LAHolder(source: source, deaths: LACounter())
        let a = Synthetic(owner: holder, name: "a") { $0.source.value * 2 }
        let b = Synthetic(owner: holder, name: "b") { $0.source.value * 3 }
        let heard = Recording<String>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            source.value = 1  // delivers; held in the observer
            done.signal()
        }.start()
        entered.wait()
        observer.observe(a) { heard.append("a:\($0.new)") }
        source.value = 2  // marks a: its work goes behind the delivery
        observer.observe(b) { heard.append("b:\($0.new)") }
        source.value = 3  // marks b: a second work item in the same queue
        gate.signal()
        let finished = done.wait(timeout: .now() + 10) == .success
        #expect(finished, "the delivering thread never finished its queue")
        if finished {
            #expect(heard.elements.last(where: { $0.hasPrefix("a") }) == "a:6")
            #expect(heard.elements.last(where: { $0.hasPrefix("b") }) == "b:9")
        }
    }

    @Test("a compute function that sets, invalidates, reads and observes, from several threads")
    func aFunctionThatSetsInvalidatesReadsAndObservesIsRightFromThreads() {
        let model = LAReentrant()
        let observer = TestObserver()
        let heard = Recording<Int>()
        observer.observe(model.$busy) { heard.append($0.new) }
        observer.observe(model.$fromSideEffect) { _ in }
        observer.observe(model.$unrelated) { _ in }
        model.a = 2
        #expect(model.busy == 4 + 102)
        #expect(model.sideEffect == 4)
        concurrently(threads: 3) { index in
            for value in 0..<100 {
                if index == 0 {
                    model.a = value
                } else {
                    _ = model.busy
                    _ = model.fromSideEffect
                }
            }
        }
        model.a = 1000
        #expect(model.busy == 2000 + 1100)
        #expect(model.sideEffect == 2000)
        #expect(model.fromSideEffect == 6000)
        #expect(heard.elements.last == 3100)
    }

    /// A function that sets a variable another synthetic reads, then reads that synthetic,
    /// reads one variable many times and the others once, with its order changing, while other
    /// threads read it.
    @Test("a function that sets and reads inside, read from threads")
    func aFunctionThatSetsAndReadsInsideIsRightFromThreads() {
        final class Model: @unchecked Sendable {
            @ObservableVar var a = 0
            @ObservableVar var b = 0
            @ObservableVar var mirror = 0
            @Synthetic({ (m: Model) in m.mirror * 2 }) var twiceMirror: Int
            @Synthetic({ (m: Model) in
                let a = m.a
                m.mirror = a
                var sum = 0
                if a % 2 == 0 {
                    for _ in 0..<5 { sum += m.a }
                    sum += m.b
                } else {
                    sum += m.b + m.a + m.b + m.a
                }
                return sum * 1000 + m.twiceMirror
            })
            var busy: Int
        }
        let model = Model()
        let box = UncheckedBox(model)
        let barrier = PCBarrier(parties: 3)
        let failures = Recording<String>()
        pcConcurrently(threads: 3) { index in
            let model = box.value
            for round in 0..<200 {
                if index == 0 { model.a = round % 7 } else { model.b = round % 5 }
                _ = model.busy
                barrier.wait()
                let a = model.a
                let b = model.b
                let sum = a % 2 == 0 ? 5 * a + b : 2 * a + 2 * b
                let value = model.busy
                if value != sum * 1000 + 2 * a {
                    failures.append("round \(round): \(value) for a \(a) b \(b)")
                }
                barrier.wait()
            }
        }
        #expect(failures.elements.isEmpty, "\(failures.elements.prefix(5))")
    }

    /// A reader computes `r[0]`, and inside it every `r[i]`
    /// (flag true), held in the last, whose previous evaluation (flag false) read `r[0]`: what
    /// the properties read last forms a ring, all of it computing. Two writers mark it at once
    /// (through v0 and v1): each marking once found the other's identity in every property's
    /// `toldInMarking`, and they chased each other round the ring until the stack overflowed.
    @Test("threads: two markings at once round a ring of computing properties end")
    func twoMarkingsAtOnceRoundARingOfComputingPropertiesEnd() {
        let count = 200
        let model = LongRing(count: count)
        #expect(model.r[count - 1].value == 2)  // the last read r[0]
        model.flag = true
        let box = UncheckedBox(model)
        model.gate.hold.store(true, ordering: .sequentiallyConsistent)
        let reader = JoinableThread { _ = box.value.r[0].value }
        model.gate.entered.wait()
        concurrently(threads: 2) { index in
            for _ in 0..<1_000 {
                if index == 0 { box.value.v0 += 1 } else { box.value.v1 += 1 }
            }
        }
        model.gate.open()
        reader.join()
        #expect(model.r[0].value == count)
    }

    @Test("tasks that hop threads read, set and observe synthetics")
    func tasksThatHopThreadsBetweenReadsGetTheRightValues() async {
        let model = PCBranchy()
        let box = UncheckedBox(model)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let model = box.value
                    let observer = TestObserver()
                    for round in 0..<200 {
                        if round % 3 == index % 3 { model.write(.a, (round + index) % 6) }
                        if round % 7 == 0 { model.flag = (round / 7 + index) % 5 }
                        _ = model.top
                        if round % 10 == 0 { observer.observe(model.$branch) { _ in } }
                        await Task.yield()
                        _ = model.branch
                        if round % 10 == 5 { observer.stopObserving() }
                    }
                }
            }
        }
        let values = model.values
        #expect(model.branch == values.branch.value)
        #expect(model.top == values.top)
    }

    /// Seeded stress of dependencies that switch while threads compute: readers read random
    /// properties while writers switch which properties read which, change a variable, and
    /// invalidate or set properties. No state of the program has a cycle, so none may be
    /// reported; once the threads are done, every
    /// value is the one computed from scratch. (It once found two markings chasing each other
    /// round a circle of what properties read last.)
    @Test(
        "threads: values as from scratch, and no cycle reported, while dependencies switch",
        arguments: [(false, false, 0), (true, false, 0), (false, true, 0), (true, true, 2)])
    func switchingDependenciesUnderStressEndAsFromScratch(
        invalidations: Bool, sets: Bool, observed: Int
    ) {
        for seed in UInt64(1)...4 {
            Self.stress(
                seed: seed, invalidations: invalidations, sets: sets, observed: observed)
        }
    }

    static func stress(seed: UInt64, invalidations: Bool, sets: Bool, observed: Int) {
        let (readers, writers, rounds) = (3, 2, 3_000)
        let graph = SwitchGraph(count: 8, modes: 3, seed: seed)
        // Every property gets a value in every mode (a circle through one that has none is a
        // documented limit).
        for mode in 0..<graph.modes {
            graph.mode = mode
            _ = graph.properties.map(\.value)
        }
        graph.mode = 0
        let observer = TestObserver()
        for property in graph.properties.prefix(observed) { observer.observe(property) { _ in } }
        let box = UncheckedBox(graph)
        let writersDone = Atomic<Int>(0)
        concurrently(threads: readers + writers) { index in
            let graph = box.value
            var random = SeededGenerator(seed: seed &* 31 &+ UInt64(index))
            let count = graph.properties.count
            guard index >= readers else {
                while writersDone.load(ordering: .relaxed) < writers {
                    _ = graph.properties[Int.random(in: 0..<count, using: &random)].value
                }
                return
            }
            for _ in 0..<rounds {
                let property = graph.properties[Int.random(in: 0..<count, using: &random)]
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<4: graph.mode = Int.random(in: 0..<graph.modes, using: &random)
                case 4..<6: graph.flags = Int.random(in: 0..<(1 << count), using: &random)
                case 6: graph.base = Int.random(in: 0..<100, using: &random)
                case 7 where invalidations: property.invalidate()
                case 8 where sets:
                    property.set(Int.random(in: 0..<1_000, using: &random), as: graph.properties[0])
                default: _ = property.value
                }
            }
            writersDone.add(1, ordering: .relaxed)
        }
        // A change above every property: no set value outlasts it.
        if sets { graph.base += 1_000 }
        let expected = graph.fromScratch()
        #expect(graph.properties.map(\.value) == expected, "seed \(seed)")
        withExtendedLifetime(observer) {}
    }

    /// Threads write, read, observe and stop observing, invalidate and set (hybrid) the
    /// properties of one branchy model at once; then, with the variables still, every property
    /// equals its value from scratch, ran at most once more, its steady observers last heard that
    /// value, and every dependents list matches what the last evaluation read.
    @Test("branchy dependencies under threads: values, counts, observers, dependents")
    func underThreadsBranchyPropertiesEndAsFromScratchToldAndListedAsLastRead() {
        let model = PCBranchy()
        let threads = 4
        let phases = 120
        let barrier = PCBarrier(parties: threads)
        let steady = TestObserver()
        let lastBranch = Mutex<Int>(model.branch)
        let lastTop = Mutex<Int>(model.top)
        steady.observe(model.$branch) { update in lastBranch.withLock { $0 = update.new } }
        steady.observe(model.$top) { update in lastTop.withLock { $0 = update.new } }
        let countsBefore = Mutex<[Int]>([])
        let failures = Recording<String>()
        pcConcurrently(threads: threads) { index in
            var random = SeededGenerator(seed: 0x5EED_0000 + UInt64(index))
            let churn = TestObserver()
            let branch = ObjectIdentifier(model.$branch)
            for phase in 0..<phases {
                // Phase A: everything at once.
                for _ in 0..<12 {
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0...3:
                        let source = PCSource.base.randomElement(using: &random)!
                        model.write(
                            source, Int.random(in: 0...(source == .flag ? 9 : 5), using: &random))
                    case 4: _ = model.branch
                    case 5: _ = model.top
                    case 6: churn.observe(model.$branch) { _ in _ = model.top }
                    case 7: churn.stopObserving()
                    case 8:
                        [model.$twiceA, model.$bc, model.$branch].randomElement(using: &random)!
                            .invalidate()
                    default:
                        model.$bc.set(Int.random(in: 0...9, using: &random), as: model.$bc)
                    }
                }
                barrier.wait()
                // Undo the hybrid sets; then nobody writes.
                if index == 0 {
                    model.$bc.invalidate()
                    model.$twiceA.invalidate()
                    countsBefore.withLock { $0 = model.evaluationCounts }
                }
                barrier.wait()
                // Phase B: everyone reads.
                let values = model.values
                let expected = values.branch
                for _ in 0..<3 {
                    let branchValue = model.branch
                    let topValue = model.top
                    if branchValue != expected.value || topValue != values.top {
                        failures.append(
                            "phase \(phase): branch \(branchValue) top \(topValue), expected \(expected.value) \(values.top) for \(values)"
                        )
                    }
                }
                barrier.wait()
                if index == 0 {
                    let before = countsBefore.withLock { $0 }
                    let after = model.evaluationCounts
                    for (old, new) in zip(before, after) where new - old > 1 {
                        failures.append(
                            "phase \(phase): ran \(new - old) times (\(before) → \(after))")
                    }
                    let heard = (lastBranch.withLock { $0 }, lastTop.withLock { $0 })
                    if heard != (expected.value, values.top) {
                        failures.append(
                            "phase \(phase): steady observers last heard \(heard), value \((expected.value, values.top))"
                        )
                    }
                    for source in PCSource.allCases
                    where model.dependents(of: source).contains(branch)
                        != expected.read.contains(source)
                    {
                        failures.append(
                            "phase \(phase): \(source) dependents \(model.dependents(of: source).contains(branch)), read \(expected.read)"
                        )
                    }
                }
                barrier.wait()
            }
            churn.stopObserving()
        }
        #expect(failures.elements.isEmpty, "\(failures.elements.prefix(10))")
    }

    @Test("reads on threads a function starts are not recorded; its own reads are")
    func readsOnThreadsAFunctionStartsAreNotItsDependencies() {
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

    @Test("short-lived threads evaluate nested properties; frames never leak across threads")
    func threadsThatExitLeaveNoEvaluationStateBehind() {
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
    func propertiesReadWhileThreadsSetTheirSharedVariablesEndRight() {
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
