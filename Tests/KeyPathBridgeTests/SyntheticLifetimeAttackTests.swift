import Dispatch
import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import KeyPathBridge
@testable import Messaging

// MARK: Helpers (no `weak` on the objects under attack: they keep inline reference counts, so
// NativeWeak's swift_tryRetain works on them without a side table)

/// Counts deinits.
final class LACounter: Sendable {
    let value = Atomic<Int>(0)
    func add() { value.add(1, ordering: .sequentiallyConsistent) }
    var count: Int { value.load(ordering: .sequentiallyConsistent) }
}

/// A one-shot action a compute function fires (set from the test).
final class LAHook: @unchecked Sendable {
    private let lock = NSLock()
    private var action: (() -> Void)?
    func set(_ action: @escaping () -> Void) {
        lock.lock()
        self.action = action
        lock.unlock()
    }
    func fire() {
        lock.lock()
        let action = self.action
        self.action = nil
        lock.unlock()
        action?()
    }
}

/// An owner with a variable and synthetic properties over it, counting its deaths.
final class LAModel: @unchecked Sendable {
    let deaths: LACounter
    let hook = LAHook()
    @ObservableVar var x = 1
    @Synthetic({ (m: LAModel) in
        m.hook.fire()
        return m.x * 2
    })
    var double: Int
    @Synthetic({ (m: LAModel) in m.double + 1 }) var next: Int
    init(deaths: LACounter) { self.deaths = deaths }
    deinit { deaths.add() }
}

/// An owner of synthetic properties made at run time over a shared source.
final class LAHolder: @unchecked Sendable {
    let source: Variable<Int>
    let deaths: LACounter
    nonisolated(unsafe) var kept: [AnyObject] = []
    init(source: Variable<Int>, deaths: LACounter) {
        self.source = source
        self.deaths = deaths
    }
    deinit { deaths.add() }
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

/// A diamond over one variable.
final class LADiamond: @unchecked Sendable {
    let deaths: LACounter
    @ObservableVar var base = 1
    @Synthetic({ (d: LADiamond) in d.base * 2 }) var left: Int
    @Synthetic({ (d: LADiamond) in d.base * 3 }) var right: Int
    @Synthetic({ (d: LADiamond) in d.left + d.right }) var top: Int
    init(deaths: LACounter) { self.deaths = deaths }
    deinit { deaths.add() }
}

/// An owner whose deinit reads and writes Herald properties.
final class LADeinitToucher: @unchecked Sendable {
    let deaths: LACounter
    let shared: Variable<Int>
    @ObservableVar var x = 1
    @Synthetic({ (m: LADeinitToucher) in m.x + m.shared.value }) var sum: Int
    @Synthetic({ (m: LADeinitToucher) in m.x * 7 }) var neverReadBeforeDeinit: Int
    init(shared: Variable<Int>, deaths: LACounter) {
        self.shared = shared
        self.deaths = deaths
    }
    deinit {
        _ = sum
        _ = neverReadBeforeDeinit
        shared.value += 1
        x = 42
        deaths.add()
    }
}

/// An owner whose deinit reads its property and sets its own variable (for threads that exit).
final class LAThreadOwner: @unchecked Sendable {
    let deaths: LACounter
    let shared: Variable<Int>
    @ObservableVar var x = 1
    @Synthetic({ (m: LAThreadOwner) in m.x + m.shared.value }) var sum: Int
    init(shared: Variable<Int>, deaths: LACounter) {
        self.shared = shared
        self.deaths = deaths
    }
    deinit {
        _ = sum
        x = 42
        deaths.add()
    }
}

/// Whether `core`'s lock is held right now (by anyone: use only where no other thread can).
func laIsLocked<M>(_ core: MessengerCore<M>) -> Bool {
    core.lock.word.load(ordering: .sequentiallyConsistent) != 0
}

@Suite("Synthetic properties: lifetime attacks", .serialized)
struct SyntheticLifetimeAttackTests {
    // MARK: Owners dying during evaluations

    @Test("an owner dropped on another thread while a propagation evaluates its observed property")
    func ownerDiesDuringPropagatedEvaluation() {
        let deaths = LACounter()
        let observer = TestObserver()
        let heard = Recording<Int>()
        var model: LAModel? = LAModel(deaths: deaths)
        let box = Box(model!)
        let x = model!.$x
        let double = model!.$double
        observer.observe(double) { heard.append($0.new) }
        let hook = model!.hook
        model = nil
        let entered = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        hook.set {
            entered.signal()
            go.wait()
        }
        Thread {
            x.value = 5  // marks `double`, then evaluates it in the propagation: held in compute
            done.signal()
        }.start()
        entered.wait()
        // A reader on a third thread waits for that evaluation.
        let readerDone = DispatchSemaphore(value: 0)
        let read = Recording<Int>()
        Thread {
            read.append(double.value)
            readerDone.signal()
        }.start()
        _ = box.take()  // the last reference but the evaluation's
        #expect(deaths.count == 0)
        go.signal()
        done.wait()
        readerDone.wait()
        #expect(deaths.count == 1)
        #expect(heard.elements == [10])
        #expect(read.elements == [10])
        #expect(double.value == 10)
        x.value = 6  // the owner is gone: no crash, the last value stays
        #expect(double.value == 10)
    }

    @Test(
        "an owner whose deinit reads and sets Herald properties (one never read) dies on a thread")
    func ownerDeinitTouchesProperties() {
        let deaths = LACounter()
        let shared = Variable(0)
        let observer = TestObserver()
        let heard = Recording<Int>()
        for round in 0..<50 {
            var owner: LADeinitToucher? = LADeinitToucher(shared: shared, deaths: deaths)
            observer.observe(owner!.$sum) { heard.append($0.new) }
            owner!.x = round
            let box = Box(owner!)
            owner = nil
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = box.take()
                done.signal()
            }.start()
            done.wait()
        }
        #expect(deaths.count == 50)
        #expect(shared.value == 50)
        #expect(shared.core.dependents == nil)
    }

    @Test("an owner's last reference dropped inside the compute function of its property")
    func ownerDroppedInsideCompute() {
        let deaths = LACounter()
        for useProjected in [false, true] {
            var model: LAModel? = LAModel(deaths: deaths)
            let box = Box(model!)
            let double = model!.$double
            let next = model!.$next
            model!.hook.set { _ = box.take() }
            model = nil
            // Through the projected property (reader nil: evaluate loads the owner), or through
            // a dependent whose check refreshes `double`.
            if useProjected {
                #expect(double.value == 2)
            } else {
                #expect(next.value == 3)
            }
            if useProjected { _ = double.value } else { _ = next.value }  // valid, cached
            #expect(deaths.count == (useProjected ? 2 : 1))
        }
    }

    @Test("a function that replaces its own property's storage does not free it under the read")
    func storageReplacedInsideCompute() {
        // The getter holds the property while it reads it: the function is the owner's code.
        let replacer = LAStorageReplacer()
        #expect(replacer.value == 1)
        #expect(replacer.replacedWhileAlive == true)
        #expect(replacer.value == 2)  // the new property
    }

    // MARK: Synthetics dying while queued, observed, or telling

    @Test("an observer of the variable drops the owner whose observed property is queued")
    func ownerDroppedWhileItsPropertyIsQueued() {
        let deaths = LACounter()
        let observer = TestObserver()
        let heard = Recording<Int>()
        let source = Variable(0)
        var holder: LAHolder? = LAHolder(source: source, deaths: deaths)
        let box = Box(holder!)
        // Registered first: hears the change before the synthetic's propagation runs.
        observer.observe(source) { update in
            if update.new == 1 { _ = box.take() }
        }
        var property: Synthetic<LAHolder, Int>? = Synthetic(owner: holder!, name: "s") {
            $0.source.value * 2
        }
        let propertyBox = Box(property!)
        observer.observe(property!) { heard.append($0.new) }
        property = nil
        holder = nil
        source.value = 1  // marks and queues `s`, whose owner the observer then drops
        _ = propertyBox.take()  // its last reference (if the queue let go of it)
        #expect(deaths.count == 1)
        source.value = 2
        #expect(source.core.dependents == nil)
        #expect(heard.elements.allSatisfy { $0 == 2 || $0 == 0 })
    }

    @Test("the synthetic's own observer drops the last references to it and its owner")
    func observerDropsItsObserved() {
        let deaths = LACounter()
        let observer = TestObserver()
        let heard = Recording<Int>()
        var model: LAModel? = LAModel(deaths: deaths)
        let box = Box(model!)
        let propertyBox = Box(model!.$next)
        let x = model!.$x
        observer.observe(model!.$next) { update in
            heard.append(update.new)
            _ = box.take()
            _ = propertyBox.take()
        }
        observer.observe(model!.$double) { update in heard.append(update.new) }
        model = nil
        x.value = 3
        #expect(deaths.count == 1)
        #expect(heard.elements.sorted() == [6, 7])
        x.value = 4
        #expect(x.core.dependents == nil)
    }

    @Test("a marked property handed over to another thread's turn dies before that turn runs it")
    func handedOverWorkOutlivesOwner() {
        let deaths = LACounter()
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
        var holder: LAHolder? = LAHolder(source: source, deaths: deaths)
        var property: Synthetic<LAHolder, Int>? = Synthetic(owner: holder!, name: "s") {
            $0.source.value * 2
        }
        let heard = Recording<Int>()
        observer.observe(property!) { heard.append($0.new) }
        let box = Box(holder!)
        let propertyBox = Box(property!)
        holder = nil
        property = nil
        let done = DispatchSemaphore(value: 0)
        Thread {
            source.value = 1  // delivers; held in the observer
            done.signal()
        }.start()
        entered.wait()
        source.value = 2  // marks `s`; its work goes to the delivering thread's turn
        _ = box.take()
        _ = propertyBox.take()
        gate.signal()
        done.wait()
        #expect(deaths.count == 1)
        source.value = 3
        #expect(source.core.dependents == nil)
    }

    // MARK: Hybrid setter released under a lock

    @Test("a throwaway author of a hybrid set is not released under Herald's locks")
    func setterAuthorReleasedUnderLock() {
        let model = Adv2Pair()
        let observer = TestObserver()
        let ranUnderLock = Recording<Bool>()
        let tenfoldCore = model.$tenfold.core
        let xCore = model.$x.core
        observer.observe(model.$hundredfold) { _ in
            // In a propagation pass: the set queues tenfold and keeps its author as the setter.
            model.$tenfold.set(
                999,
                as: OnDeinit {
                    ranUnderLock.append(laIsLocked(tenfoldCore) || laIsLocked(xCore))
                })
            model.x = 7  // marks tenfold: the setter goes
        }
        observer.observe(model.$tenfold) { _ in }
        model.y = 2
        #expect(model.tenfold == 70)
        #expect(ranUnderLock.elements == [false])
    }

    // MARK: Marking against dying dependents

    @Test("synthetics made, read, observed and dropped on threads while another marks the source")
    func dyingWhileMarked() {
        let deaths = LACounter()
        let source = Variable(0)
        let made = Atomic<Int>(0)
        let rounds = 300
        concurrently(threads: 4) { index in
            if index == 0 {
                for value in 1...(rounds * 4) { source.value = value }
                return
            }
            let observer = TestObserver()
            for round in 0..<rounds {
                let holder = LAHolder(source: source, deaths: deaths)
                made.add(1, ordering: .relaxed)
                let first = Synthetic(owner: holder, name: "first") { $0.source.value }
                let second = Synthetic(owner: holder, name: "second") { [first] _ in
                    first.value + 1
                }
                if round % 2 == 0 {
                    observer.observe(second) { _ in }
                }
                let a = first.value
                let b = second.value
                #expect(b >= a + 1 || b <= a)  // any interleaving, but no crash
                if round % 3 == 0 { observer.stopObserving(second) }
                if round % 5 == 0 { holder.kept = [first, second] }  // dies with its owner
            }
        }
        #expect(deaths.count == made.load(ordering: .relaxed))
        source.value = -1
        #expect(source.core.dependents == nil)
    }

    @Test("many threads drop dependents of one source at once")
    func concurrentDropsOfDependents() {
        let deaths = LACounter()
        let source = Variable(0)
        let threads = 4
        let perThread = 250
        for _ in 0..<20 {
            let holder = LAHolder(source: source, deaths: deaths)
            let boxes = (0..<threads).map { thread in
                let bag = LAHolder(source: source, deaths: deaths)
                bag.kept = (0..<perThread).map { index in
                    let property = Synthetic(owner: holder, name: "p\(thread).\(index)") {
                        $0.source.value + index
                    }
                    _ = property.value
                    return property
                }
                return UncheckedBox(Box(bag))
            }
            concurrently(threads: threads) { index in
                let bag = boxes[index].value.take()!
                while !bag.kept.isEmpty { bag.kept.removeLast() }
            }
            _ = holder
        }
        #expect(source.core.dependents == nil)
    }

    /// Two threads each make a synthetic over one source, read it (the source adds it to its
    /// dependents, filtering the list under its lock) and drop it (its deinit removes it,
    /// filtering again). The filter asks each entry whether it lives by retaining it and
    /// releasing it under the source's lock: when the other thread drops that entry's last
    /// reference meanwhile, the filter's release is the last one, and the synthetic's deinit
    /// runs under the source's lock, and locks it again (removeDependent).
    @Test("two threads churn dependents of one source")
    func twoThreadsChurnDependents() {
        let deaths = LACounter()
        let source = Variable(0)
        let holder = LAHolder(source: source, deaths: deaths)
        let box = UncheckedBox(holder)
        concurrently(threads: 2) { index in
            for round in 0..<50_000 {
                let property = Synthetic(owner: box.value, name: "p\(index)") {
                    $0.source.value + round
                }
                _ = property.value
            }
        }
        #expect(source.core.dependents == nil)
    }

    // MARK: Re-entrancy

    @Test("a compute function that sets, invalidates, reads and observes, from several threads")
    func reentrantCompute() {
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

    // MARK: Threads that exit

    @Test("threads evaluate, observe and exit, some holding the last references to owners")
    func threadsExitAfterEvaluating() {
        let deaths = LACounter()
        let shared = Variable(0)
        let sharedObserver = TestObserver()
        let threads = 200
        let done = DispatchSemaphore(value: 0)
        for index in 0..<threads {
            let owner = LAThreadOwner(shared: shared, deaths: deaths)
            let box = UncheckedBox(owner)
            if index % 2 == 0 { sharedObserver.observe(owner.$sum) { _ in } }
            Thread {
                let observer = TestObserver()
                observer.observe(box.value.$sum) { _ in }
                box.value.x = index
                _ = box.value.sum
                done.signal()
                // The thread's closure (and the owner with it) goes as the thread exits.
            }.start()
            shared.value = index  // only this thread sets it: marks sums of dying owners
        }
        for _ in 0..<threads { done.wait() }
        let deadline = Date().addingTimeInterval(30)
        while deaths.count < threads, Date() < deadline {
            shared.value += 1
            sched_yield()
        }
        #expect(deaths.count == threads)
        shared.value = -1
        #expect(shared.core.dependents == nil)
    }

    // MARK: Deep chains and diamonds

    @Test("a deep chain observed at its end, set and read from threads, then freed")
    func deepChainUnderThreads() {
        let deaths = LACounter()
        let source = Variable(0)
        var holder: LAHolder? = LAHolder(source: source, deaths: deaths)
        var chain: [Synthetic<LAHolder, Int>] = []
        chain.append(Synthetic(owner: holder!, name: "n0") { $0.source.value })
        for index in 1..<300 {
            let previous = chain[index - 1]
            chain.append(
                Synthetic(owner: holder!, name: "n\(index)") { [previous] _ in
                    previous.value + 1
                })
        }
        let observer = TestObserver()
        let last = Recording<Int>()
        observer.observe(chain[299]) { last.append($0.new) }
        do {
            let nodes = UncheckedBox(chain)
            concurrently(threads: 4) { index in
                for value in 0..<50 {
                    if index == 0 {
                        source.value = value
                    } else {
                        _ = nodes.value[(index * 97 + value * 31) % 300].value
                    }
                }
            }
        }
        source.value = 1000
        #expect(chain[299].value == 1299)
        #expect(last.elements.last == 1299)
        let identities = chain.map { ObjectIdentifier($0) }
        chain = []
        holder = nil
        #expect(deaths.count == 1)
        // The helper threads' closures (which captured the chain) go as those threads exit.
        let deadline = Date().addingTimeInterval(30)
        while source.core.dependents?.entries.isEmpty == false, Date() < deadline {
            source.value += 1  // marking skips what died
            sched_yield()
            if source.core.dependents?.entries.allSatisfy({ !$0.isLive }) == true { break }
        }
        // Whatever is left must be dead entries only if a deinit is still running: wait again.
        while source.core.dependents != nil, Date() < deadline { sched_yield() }
        let entries = source.core.dependents?.entries ?? []
        #expect(
            source.core.dependents == nil,
            "\(entries.count) entries, live: \(entries.map(\.isLive)), nodes: \(entries.map { identities.firstIndex(of: $0.identity) ?? -1 })"
        )
    }

    @Test("diamonds made and dropped on threads while their bases are set")
    func diamondsUnderThreads() {
        let deaths = LACounter()
        let made = Atomic<Int>(0)
        concurrently(threads: 4) { index in
            let observer = TestObserver()
            for round in 0..<200 {
                let diamond = LADiamond(deaths: deaths)
                made.add(1, ordering: .relaxed)
                let counted = Recording<Int>()
                observer.observe(diamond.$top) { counted.append($0.new) }
                let box = UncheckedBox(diamond)
                let setter = Thread { box.value.base = round }
                setter.start()
                diamond.base = round + 1
                _ = diamond.top
                if round % 2 == 0 { observer.stopObserving(diamond.$top) }
            }
        }
        // Setter threads may still hold diamonds: wait for them.
        let deadline = Date().addingTimeInterval(30)
        while deaths.count < made.load(ordering: .relaxed), Date() < deadline { sched_yield() }
        #expect(deaths.count == 800)
    }

    // MARK: Marking's own re-entrancy

    @Test("a dependent dying in the marking's keep-alive does not run another change's work first")
    func nestedMarkingWhileReleasingKeptAlive() {
        let deaths = LACounter()
        let log = Recording<String>()
        let observer = TestObserver()
        let v = Variable(0)
        let w = Variable(0)
        let holder = LAHolder(source: v, deaths: deaths)
        let f = Synthetic(owner: holder, name: "f") { _ in v.value * 2 }
        observer.observe(f) { log.append("f:\($0.new)") }
        observer.observe(v) { log.append("v:\($0.new)") }
        let e = Synthetic(owner: holder, name: "e") { _ in w.value }
        observer.observe(e) { log.append("e:\($0.new)") }
        let canary = OnDeinit { w.value += 1 }
        var d: Synthetic<LAHolder, Int>? = Synthetic(owner: holder, name: "d") { [canary] _ in
            _ = canary
            return v.value
        }
        _ = d!.value  // d depends on v, after f
        let dBox = Box(d!)
        let dCore = d!.core
        let dPointer = Unmanaged.passUnretained(d!)
        d = nil
        _ = consume canary
        let baseline = dPointer._withUnsafeGuaranteedRef { _getRetainCount($0) }
        let done = DispatchSemaphore(value: 0)
        dCore.lock.withLock {
            Thread {
                v.value = 1  // marks f, then d: blocked on d's lock, d retained by the marking
                done.signal()
            }.start()
            while dPointer._withUnsafeGuaranteedRef({ _getRetainCount($0) }) == baseline {}
            _ = dBox.take()  // the marking holds the last reference now
        }
        done.wait()
        #expect(w.value == 1)
        let entries = log.elements
        #expect(entries.contains("v:1") && entries.contains("f:2"))
        #expect(
            (entries.firstIndex(of: "v:1") ?? 99) < (entries.firstIndex(of: "f:2") ?? -1),
            "\(entries)")
        _ = f
        _ = e
    }

    // MARK: Marked work handed over twice

    /// Two changes from another thread, each marking a different observed property, while a
    /// delivery of the variable is in progress: each hands its marked work to the variable's
    /// turn. When the delivering thread drains its queue, each work item sees the other pending
    /// (`hasPending`) and queues itself behind it again, forever.
    @Test("two hand-overs of marked work queued behind one delivery are both run")
    func twoHandOversInOneQueue() {
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

    // MARK: Values released by a set

    /// A value that a set replaces is released after the variable's lock, when only a synthetic
    /// property reads the variable (unobserved, such a set takes no delivery turn).
    @Test(
        "a replaced value is released after the lock of a variable only a synthetic reads",
        arguments: [false, true])
    func aReplacedValueIsReleasedOutsideTheLock(observed: Bool) {
        final class Model {
            let token = Var<OnDeinit?>(nil)
            let observer = TestObserver()
            @Synthetic({ (m: Model) in m.token.value != nil }) var hasToken: Bool
        }
        let model = Model()
        // The variable's only dependent: unobserved, a set of it reaches nobody and takes no
        // delivery turn; observed, it queues the property's propagation.
        if observed { model.observer.observe(model.$hasToken) { _ in } } else { _ = model.hasToken }
        let seen = Recording<Bool>()
        model.token.value = OnDeinit { [unowned model] in seen.append(model.token.value == nil) }
        model.token.value = nil
        #expect(seen.elements == [true])
        #expect(model.hasToken == false)
    }

    // MARK: Owners dying before a value is stored

    @Test("an observed property never stored, its owner dying in its evaluation, tells nothing")
    func observedPropertyNeverStoredOutlivesItsOwner() {
        let box = Box(LANeverStored())
        let double = { () -> Synthetic<LANeverStored, Int> in
            let owner = box.take()!
            defer { box.put(owner) }
            owner.hook.set { [unowned owner] in
                owner.$double.invalidate()  // overtakes the running evaluation: not stored
                _ = box.take()  // the evaluation now holds the owner's last reference
            }
            return owner.$double
        }()
        let observer = TestObserver()
        let heard = Recording<Int>()
        // Evaluates for the first observer (not stored); the owner dies; the propagation the
        // invalidation queued has no owner to compute from and no value: it tells nothing.
        observer.observe(double) { heard.append($0.new) }
        #expect(heard.elements.isEmpty)
        #expect(!double.isValid)
        #expect(double.evaluationCount == 1)
    }

    @Test(
        "owners die on threads while other threads set what their properties read",
        arguments: [false, true])
    func ownersDieWhileTheirSourceIsSet(observed: Bool) {
        let source = Variable(0)
        let box = Box(LASourceReader(source))
        concurrently(threads: 4) { index in
            for step in 0..<3_000 {
                if index < 2 {
                    let owner = LASourceReader(source)
                    if observed {
                        owner.observer.observe(owner.$twice) { _ in }
                    } else {
                        _ = owner.twice
                    }
                    if step % 2 == 0 { box.put(owner) } else { _ = box.take() }
                } else {
                    // May hold the last reference to an owner (while its work is queued, if
                    // observed): marking uses the source's dependents list unretained.
                    source.value = step * 4 + index
                }
            }
        }
        _ = box.take()
        source.value = -1
        let entries = source.core.lock.withLock { source.core.dependents?.entries ?? [] }
        #expect(entries.allSatisfy { !$0.isLive })
        let fresh = LASourceReader(source)
        let heard = Recording<Int>()
        fresh.observer.observe(fresh.$twice) { heard.append($0.new) }
        source.value = 5
        #expect(fresh.twice == 12)
        #expect(heard.elements == [12])
    }
}

/// An owner whose function replaces the property's own storage (`_value`, which the owner's code
/// may assign), and records whether the replaced property was still alive right after.
private final class LAStorageReplacer {
    var replacedWhileAlive: Bool?
    @Synthetic({ (replacer: LAStorageReplacer) in replacer.replaceStorage() }) var value: Int

    func replaceStorage() -> Int {
        weak let replaced = _value
        _value = Synthetic { _ in 2 }
        replacedWhileAlive = replaced != nil
        return 1
    }
}

/// An owner whose function fires `hook` as it ends (once).
private final class LANeverStored: @unchecked Sendable {
    let hook = LAHook()
    @ObservableVar var x = 1
    @Synthetic({ (owner: LANeverStored) in
        defer { owner.hook.fire() }
        return owner.x * 2
    })
    var double: Int
}

/// Two synthetic properties over a shared variable, and an observer the owner keeps.
private final class LASourceReader: @unchecked Sendable {
    let source: Variable<Int>
    let observer = TestObserver()
    init(_ source: Variable<Int>) { self.source = source }
    @Synthetic({ (owner: LASourceReader) in owner.source.value + 1 }) var next: Int
    @Synthetic({ (owner: LASourceReader) in owner.next * 2 }) var twice: Int
}
