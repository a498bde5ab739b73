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

/// How many rounds of thread-local destructors `aDestructorRunningAfterHeraldsMayUseHerald` uses Herald in
/// (PC_DESTRUCTOR_ROUNDS, default 2; 3 crashes the thread sanitizer, 4 leaks).
private let pcDestructorRounds =
    Int(ProcessInfo.processInfo.environment["PC_DESTRUCTOR_ROUNDS"] ?? "") ?? 2

/// A lock-protected slot whose object threads swap and copy out.
final class PCSlot<Object: AnyObject>: @unchecked Sendable {
    private let lock = NSLock()
    private var object: Object?
    init(_ object: Object?) { self.object = object }
    func get() -> Object? {
        lock.lock()
        defer { lock.unlock() }
        return object
    }
    /// Puts `new` in; the old object is released by the caller (returned).
    func swap(_ new: Object?) -> Object? {
        lock.lock()
        defer { lock.unlock() }
        let old = object
        object = new
        return old
    }
}

/// An owner of run-time synthetic properties over a shared variable, counting its deaths.
final class PCHolder: @unchecked Sendable {
    let source: Variable<Int>
    let deaths: PCCounter
    nonisolated(unsafe) var kept: [AnyObject] = []
    init(source: Variable<Int>, deaths: PCCounter) {
        self.source = source
        self.deaths = deaths
    }
    deinit { deaths.add() }
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

/// A property holds its owner and its dependents weakly: nothing leaks, an owner may die at any
/// moment (reads then give the last value), and nothing is released under Herald's locks.
@Suite("Synthetic properties: held weakly, freed, and safe when their owner dies", .serialized)
struct SyntheticLifetimeTests {
    @Test("leaks: a synthetic property, its owner, its dependencies and observers are freed")
    func aPropertyItsOwnerItsDependenciesAndItsObserversAreFreed() {
        weak var contact: Contact?
        weak var fullName: Synthetic<Contact, String>?
        weak var source: Variable<String>?
        weak var watch: Canary?
        do {
            let strong = Contact()
            let observer = TestObserver()
            let canary = Canary()
            watch = canary
            observer.observe(strong.$address) { _ in _ = canary }
            strong.first = "Grace"
            contact = strong
            fullName = strong.$fullName
            source = strong.$first
        }
        #expect(contact == nil)
        #expect(fullName == nil)
        #expect(source == nil)
        #expect(watch == nil)
    }

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

    /// A reader waits for another thread's evaluation while the owner's last outside reference
    /// goes; once the owner is dead, reads abandon their evaluations and give the last value,
    /// also through a dependent that checks the property; the source change after it, and
    /// freeing the property, leave every dependents list empty.
    @Test("an owner dies while its property is evaluated; abandoned evaluations; then freed")
    func afterItsOwnerDiedAPropertyGivesItsLastValueAndLeavesNoDependent() {
        let deaths = PCCounter()
        var model: PCGated? = PCGated(deaths: deaths)
        let x = model!.$x
        let y = model!.$y
        var slow: Synthetic<PCGated, Int>? = model!.$slow
        let otherSource = Variable(1000)
        let otherHolder = PCHolder(source: otherSource, deaths: PCCounter())
        var dependent: Synthetic<PCHolder, Int>? = Synthetic(owner: otherHolder, name: "dependent")
        {
            [slow] h in slow!.value + h.source.value
        }
        #expect(dependent!.value == 1011)
        x.value = 2  // invalid now; nobody reads it before the owner dies
        model = nil
        // The owner is gone (nothing held it but the box).
        #expect(deaths.count == 1)
        // Abandoned: the last value (x = 1), from the property and through its dependent.
        #expect(slow!.value == 11)
        #expect(dependent!.value == 1011)
        x.value = 3
        #expect(slow!.value == 11)
        #expect(dependent!.value == 1011)
        otherSource.value = 2000
        #expect(dependent!.value == 2011)
        slow = nil
        dependent = nil
        x.value = 4
        #expect(x.core.lock.withLock { x.core.dependents } == nil)
        #expect(y.core.lock.withLock { y.core.dependents } == nil)
        #expect(otherSource.core.lock.withLock { otherSource.core.dependents } == nil)
    }

    @Test("an owner dropped on another thread while a propagation evaluates its observed property")
    func anOwnerDroppedDuringAPropagatedEvaluationDiesAfterItWithItsValueTold() {
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
    func anOwnerWhoseDeinitUsesHeraldPropertiesDiesCleanlyOnAThread() {
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
    func anOwnerDroppedInsideItsPropertysFunctionDiesAfterTheRead() {
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
    func aFunctionThatReplacesItsPropertysStorageDoesNotFreeItUnderTheRead() {
        // The getter holds the property while it reads it: the function is the owner's code.
        let replacer = LAStorageReplacer()
        #expect(replacer.value == 1)
        #expect(replacer.replacedWhileAlive == true)
        #expect(replacer.value == 2)  // the new property
    }

    @Test("an observer of the variable drops the owner whose observed property is queued")
    func anOwnerDroppedWhileItsObservedPropertyIsQueuedDiesCleanly() {
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
    func anObserverMayDropTheLastReferencesToItsPropertyAndOwner() {
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
    func workHandedOverToAnotherThreadsTurnMayOutliveItsProperty() {
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

    @Test("a throwaway author of a hybrid set is not released under Herald's locks")
    func aThrowawayAuthorOfASetIsNotReleasedUnderHeraldsLocks() {
        let model = PairOfSources()
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

    @Test("a dependent dying in the marking's keep-alive does not run another change's work first")
    func aDependentDyingInTheMarkingsKeepAliveDoesNotRunOtherWorkFirst() {
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

    @Test("synthetics made, read, observed and dropped on threads while another marks the source")
    func propertiesDroppedOnThreadsWhileTheirSourceIsMarkedAreFreed() {
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
                let floor = source.value  // the source only grows
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
                // Any interleaving, but each value read is one the source had since the
                // properties were made (`second` through `first`).
                let ceiling = source.value
                #expect((floor...ceiling).contains(a), "first \(a), source \(floor)...\(ceiling)")
                #expect((floor + 1...ceiling + 1).contains(b), "second \(b), first \(a)")
                if round % 3 == 0 { observer.stopObserving(second) }
                if round % 5 == 0 { holder.kept = [first, second] }  // dies with its owner
            }
        }
        #expect(deaths.count == made.load(ordering: .relaxed))
        source.value = -1
        #expect(source.core.dependents == nil)
    }

    @Test("many threads drop dependents of one source at once")
    func dependentsDroppedByManyThreadsAtOnceLeaveNone() {
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
    func dependentsMadeAndDroppedByTwoThreadsLeaveNone() {
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

    @Test("threads evaluate, observe and exit, some holding the last references to owners")
    func ownersWhoseLastReferencesGoWithExitingThreadsAreFreed() {
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

    @Test("a deep chain observed at its end, set and read from threads, then freed")
    func aDeepChainUsedFromThreadsIsRightAndFreed() {
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
        // The helper threads' closures (which captured the chain) go as those threads exit,
        // and their deinits edit the list meanwhile: it is read under its lock.
        func dependents() -> DependentList? { source.core.lock.withLock { source.core.dependents } }
        let deadline = Date().addingTimeInterval(30)
        while dependents()?.entries.isEmpty == false, Date() < deadline {
            source.value += 1  // marking skips what died
            sched_yield()
            if dependents()?.entries.allSatisfy({ !$0.isLive }) == true { break }
        }
        // Whatever is left must be dead entries only if a deinit is still running: wait again.
        while dependents() != nil, Date() < deadline { sched_yield() }
        let entries = dependents()?.entries ?? []
        #expect(
            dependents() == nil,
            "\(entries.count) entries, live: \(entries.map(\.isLive)), nodes: \(entries.map { identities.firstIndex(of: $0.identity) ?? -1 })"
        )
    }

    @Test("diamonds made and dropped on threads while their bases are set")
    func diamondsMadeAndDroppedOnThreadsAreFreed() {
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

    @Test(
        "owners die on threads while other threads set what their properties read",
        arguments: [false, true])
    func ownersDyingWhileTheirSourceIsSetLeaveNoLiveDependent(observed: Bool) {
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

    /// The setter of a hybrid set (the `released` of a marking) and the dependents lists that
    /// marking hands over are freed on every marking path: a variable's change (kept alive
    /// under its lock), a manual invalidation, and nested marking below it.
    @Test("marking hands over setters and dependents lists once: all freed")
    func markingFreesTheSettersAndDependentsListsItHandsOver() {
        let authors = PCCounter()
        weak var list: DependentList?
        weak var nestedList: DependentList?
        do {
            let model = PCBranchy()
            let observer = TestObserver()
            model.flag = 1  // branch reads twiceA, d, bc, parityA
            observer.observe(model.$top) { _ in }
            observer.observe(model.$branch) { _ in }
            observer.observe(model.$bc) { _ in }
            list = model.$d.core.lock.withLock { model.$d.core.dependents }
            nestedList = model.$bc.core.lock.withLock { model.$bc.state.dependents }
            #expect(list != nil && nestedList != nil)
            for round in 0..<50 {
                // Setters on observed properties are kept until the next marking releases them.
                model.$bc.set(
                    500 + round, as: OnDeinit { authors.add() })
                model.$branch.set(
                    900 + round, as: OnDeinit { authors.add() })
                switch round % 4 {
                case 0: model.b += 1  // marks bc (definitely), branch and top (maybe)
                case 1: model.$bc.invalidate()  // marks bc, then nested: branch, top
                case 2: model.$twiceA.invalidate()  // nested marking reaches branch's setter
                default: model.d += 1
                }
            }
            model.$bc.invalidate()
            model.$branch.invalidate()
            #expect(model.top == model.values.top)
            observer.stopObserving()
        }
        #expect(authors.count == 100)
        #expect(list == nil)
        #expect(nestedList == nil)
    }
}

/// Properties and owners freed while other threads read, check, mark and observe them; threads
/// that exit free what they made.
@Suite("Synthetic properties: freed while threads use them (concurrency)", .serialized)
struct SyntheticLifetimeConcurrencyTests {
    /// Subscribing a property to a variable sweeps the variable's dependents list for dead
    /// entries under the variable's lock. If that sweep took a retain (and a release) of each
    /// live entry, a property whose last reference another thread dropped meanwhile died right
    /// there, and its deinit took the variable's lock again. (A stress test: the window is a
    /// few instructions wide and no hook can hold a thread inside the runtime's release.)
    @Test("threads: properties made and dropped on one thread while another subscribes others")
    func propertiesDroppedWhileAnotherThreadSubscribesOthersAreFreedSafely() {
        let tens = Tens()
        let box = UncheckedBox(tens)
        concurrently(threads: 2) { index in
            for step in 0..<3_000 {
                let property = Synthetic(owner: box.value, name: "p\(index)-\(step)") {
                    $0.a + step
                }
                _ = property.value
                if index == 0 { box.value.a = step }
            }
        }
        #expect(tens.tenfold == tens.a * 10)
    }

    /// Pairs of run-time synthetic properties (a chain over a shared variable, the second
    /// checking the first) are swapped in and out of a slot while readers evaluate and check
    /// them, and the last reference often goes on a reader thread right after its read, while
    /// another thread marks the shared variable. Everything is freed and the variable's
    /// dependents list ends empty.
    @Test("synthetics freed while other threads check, evaluate and mark them")
    func propertiesFreedWhileOtherThreadsCheckEvaluateAndMarkThemLeaveNothing() {
        let deaths = PCCounter()
        let closures = PCCounter()
        let source = Variable(0)
        let made = Atomic<Int>(0)
        final class Pair: @unchecked Sendable {
            let holder: PCHolder
            let first: Synthetic<PCHolder, Int>
            let second: Synthetic<PCHolder, Int>
            init(
                holder: PCHolder, first: Synthetic<PCHolder, Int>, second: Synthetic<PCHolder, Int>
            ) {
                self.holder = holder
                self.first = first
                self.second = second
            }
        }
        @Sendable func makePair() -> Pair {
            made.add(1, ordering: .relaxed)
            let holder = PCHolder(source: source, deaths: deaths)
            let canary = OnDeinit { closures.add() }
            let first = Synthetic(owner: holder, name: "first") { [canary] h in
                _ = canary
                return h.source.value % 3
            }
            let second = Synthetic(owner: holder, name: "second") { [first] h in
                first.value + h.source.value
            }
            return Pair(holder: holder, first: first, second: second)
        }
        let slot = PCSlot<Pair>(makePair())
        let stop = Atomic<Bool>(false)
        pcConcurrently(threads: 4) { index in
            switch index {
            case 0:
                for value in 1...6000 { source.value = value }
                stop.store(true, ordering: .sequentiallyConsistent)
            case 1:
                while !stop.load(ordering: .sequentiallyConsistent) {
                    _ = slot.swap(makePair())
                }
            default:
                let observer = TestObserver()
                var round = 0
                while round < 3000 || !stop.load(ordering: .sequentiallyConsistent) {
                    round += 1
                    guard let pair = slot.get() else { continue }
                    if round % 4 == 0 { observer.observe(pair.second) { _ in } }
                    _ = pair.second.value
                    _ = pair.first.value
                    if round % 8 == 0 { observer.stopObserving() }
                    // `pair` (maybe the last reference) goes here.
                }
                observer.stopObserving()
            }
        }
        _ = slot.swap(nil)
        let count = made.load(ordering: .relaxed)
        #expect(deaths.count == count)
        #expect(closures.count == count)
        source.value = -1
        #expect(source.core.lock.withLock { source.core.dependents } == nil)
    }

    /// A diamond with a chain under it, all run-time properties of one owner: threads set the
    /// base, invalidate and set (hybrid) nodes, read, and start and stop observing nodes at once.
    /// Once still and the hybrid values invalidated away, the end of the chain is its value from
    /// scratch and its steady observer heard it; then everything is freed and the base's
    /// dependents list ends empty.
    @Test("a diamond and chain under threads that invalidate, set and drop observers; all freed")
    func aDiamondAndChainUnderThreadsEndAsFromScratchAndAreFreed() {
        let deaths = PCCounter()
        let closures = PCCounter()
        let base = Variable(1)
        weak var weakObserver: TestObserver?
        do {
            let holder = PCHolder(source: base, deaths: deaths)
            let canary = OnDeinit { closures.add() }
            let s1 = Synthetic(owner: holder, name: "s1") { [canary] h in
                _ = canary
                return h.source.value + 1
            }
            let left = Synthetic(owner: holder, name: "left") { [s1] _ in s1.value * 2 }
            let right = Synthetic(owner: holder, name: "right") { [s1] _ in s1.value * 3 }
            let top = Synthetic(owner: holder, name: "top") { [left, right] _ in
                left.value + right.value
            }
            var nodes = [s1, left, right, top]
            for index in 0..<20 {
                let previous = nodes.last!
                nodes.append(
                    Synthetic(owner: holder, name: "c\(index)") { [previous, s1] _ in
                        // Reads `s1` on odd values only: the chain's sources change too.
                        previous.value + (previous.value % 2 == 1 ? s1.value : 1)
                    })
            }
            let steady = TestObserver()
            weakObserver = steady
            let lastHeard = Mutex<Int?>(nil)
            steady.observe(nodes.last!) { update in lastHeard.withLock { $0 = update.new } }
            let shared = UncheckedBox(nodes)
            let barrier = PCBarrier(parties: 4)
            let failures = Recording<String>()
            @Sendable func expectedEnd(_ base: Int) -> Int {
                let s1 = base + 1
                var value = s1 * 5
                for _ in 0..<20 { value = value + (value % 2 == 1 ? s1 : 1) }
                return value
            }
            pcConcurrently(threads: 4) { index in
                let nodes = shared.value
                var random = SeededGenerator(seed: 0xD1A + UInt64(index))
                let churn = TestObserver()
                for round in 0..<60 {
                    for _ in 0..<40 {
                        let node = nodes.randomElement(using: &random)!
                        switch (index, Int.random(in: 0..<4, using: &random)) {
                        case (0, _), (1, 0): base.value = Int.random(in: 0...50, using: &random)
                        case (1, 1): node.invalidate()
                        case (1, _): node.set(Int.random(in: 0...9, using: &random), as: node)
                        case (_, 0): churn.observe(node) { _ in _ = nodes.last!.value }
                        case (_, 1): churn.stopObserving(node)
                        default: _ = node.value
                        }
                    }
                    barrier.wait()
                    if index == 0 {
                        for node in nodes { node.invalidate() }
                        let expected = expectedEnd(base.value)
                        let end = nodes.last!.value
                        if end != expected {
                            failures.append("round \(round): end \(end), expected \(expected)")
                        }
                        if lastHeard.withLock({ $0 }) != expected {
                            failures.append(
                                "round \(round): heard \(lastHeard.withLock { $0 } as Any), expected \(expected)"
                            )
                        }
                    }
                    barrier.wait()
                }
                churn.stopObserving()
            }
            #expect(failures.elements.isEmpty, "\(failures.elements.prefix(10))")
            steady.stopObserving()
        }
        #expect(deaths.count == 1)
        #expect(closures.count == 1)
        #expect(weakObserver == nil)
        base.value = -1
        #expect(base.core.lock.withLock { base.core.dependents } == nil)
    }

    /// Threads read, observe and set synthetic properties and exit: each one's context, and
    /// every observer, is freed with it.
    @Test("threads that exit right after using synthetics free their contexts")
    func threadsThatExitRightAfterUsingPropertiesFreeTheirContexts() {
        let model = PCBranchy()
        let steady = TestObserver()
        let heard = Recording<Int>()
        steady.observe(model.$top) { heard.append($0.new) }
        let box = UncheckedBox(model)
        final class Seen: @unchecked Sendable {
            weak var context: ThreadContext?
            weak var observer: TestObserver?
        }
        for index in 0..<100 {
            let seen = Seen()
            runOnThreadAndJoin {
                let model = box.value
                let observer = TestObserver()
                seen.observer = observer
                observer.observe(model.$branch) { _ in _ = model.top }
                model.flag = index % 5
                model.a = index % 6
                _ = model.top
                seen.context = ThreadContext.current
            }
            #expect(seen.context == nil)
            #expect(seen.observer == nil)
        }
        #expect(model.top == model.values.top)
        #expect(heard.elements.last == model.top || heard.elements.isEmpty)
    }

    /// In a fresh process, a thread-local key made before Herald's (so its destructor runs
    /// first in each round) on a thread that never used Herald: the destructor uses Herald
    /// (reads, sets observed properties, frees an owner), which makes the thread's context there
    /// and then; Herald's destructor, later in the same round, frees it.
    @Test("a destructor that runs before Herald's, on a thread that never used Herald")
    func aDestructorRunningBeforeHeraldsOnAFreshThreadMayUseHerald() async {
        await #expect(processExitsWith: .success) {
            final class Payload {
                let work: () -> Void
                init(_ work: @escaping () -> Void) { self.work = work }
                deinit { work() }
            }
            var key = pthread_key_t()
            let status = pthread_key_create(&key) { pointer in
                #if canImport(Darwin)
                    Unmanaged<Payload>.fromOpaque(pointer).release()
                #else
                    Unmanaged<Payload>.fromOpaque(pointer!).release()
                #endif
            }
            precondition(status == 0)
            globalPCKey = key
            // Herald's key only now.
            let model = PCBranchy()
            let observer = TestObserver()
            let heard = Recording<Int>()
            observer.observe(model.$top) { heard.append($0.new) }
            let contexts = Recording<WeakBox<ThreadContext>>()
            let owners = Recording<WeakBox<PCBranchy>>()
            let box = UncheckedBox(model)
            for round in 0..<20 {
                runOnThreadAndJoin {
                    let payload = Payload {
                        precondition(ThreadContext.current == nil)
                        let model = box.value
                        model.a = round % 6
                        model.flag = round % 5
                        _ = model.branch
                        let temporary = PCBranchy()
                        owners.append(WeakBox(temporary))
                        observer.observe(temporary.$top) { _ in }
                        temporary.b = round
                        _ = temporary.top
                        contexts.append(WeakBox(ThreadContext.current!))
                    }
                    pthread_setspecific(globalPCKey, Unmanaged.passRetained(payload).toOpaque())
                }
            }
            precondition(contexts.count == 20 && contexts.elements.allSatisfy { $0.isFreed })
            precondition(owners.elements.allSatisfy { $0.isFreed })
            precondition(model.top == model.values.top)
            precondition(heard.elements.last == model.top)
        }
    }

    /// A thread-local value of the test's own, whose destructor runs after Herald's has let the
    /// thread's context go (a key made later is destroyed later), and again in the next round of
    /// destructors: its deinit reads synthetic properties (evaluating them), sets a variable
    /// whose observed synthetic dependents propagate, invalidates and sets (hybrid). It gets
    /// fresh contexts, which are freed too, and observers hear the right values.
    @Test("deinit code run by a thread-local destructor after Herald's uses Herald")
    func aDestructorRunningAfterHeraldsMayUseHerald() {
        _ = DependencyTracking.thisThread  // Herald's key exists first
        final class Trace: @unchecked Sendable {
            let lock = NSLock()
            var log: [String] = []
            var contexts: [WeakBox<ThreadContext>] = []
            var hadContextOnEntry: [Bool] = []
            var temporaries: [WeakBox<PCBranchy>] = []
            func add(_ line: String) {
                lock.lock()
                log.append(line)
                lock.unlock()
            }
        }
        let trace = Trace()
        let model = PCBranchy()
        let observer = TestObserver()
        observer.observe(model.$top) { trace.add("top \($0.new)") }
        observer.observe(model.$bc) { trace.add("bc \($0.new)") }
        let box = UncheckedBox(model)
        final class Payload {
            let rounds: Int
            let work: () -> Void
            init(rounds: Int, work: @escaping () -> Void) {
                self.rounds = rounds
                self.work = work
            }
        }
        nonisolated(unsafe) var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            #if canImport(Darwin)
                let payload = Unmanaged<Payload>.fromOpaque(pointer).takeRetainedValue()
            #else
                let payload = Unmanaged<Payload>.fromOpaque(pointer!).takeRetainedValue()
            #endif
            payload.work()
            if payload.rounds > 1 {
                // Run again in the next round of destructors (after Herald's again).
                let again = Payload(rounds: payload.rounds - 1, work: payload.work)
                pthread_setspecific(globalPCKey, Unmanaged.passRetained(again).toOpaque())
            }
        }
        precondition(status == 0)
        globalPCKey = key
        defer { pthread_key_delete(key) }
        runOnThreadAndJoin {
            let model = box.value
            _ = model.top  // this thread has a context
            let payload = Payload(rounds: pcDestructorRounds) {
                trace.lock.lock()
                trace.hadContextOnEntry.append(ThreadContext.current != nil)
                trace.lock.unlock()
                model.a += 1
                model.flag = (model.flag + 1) % 5
                _ = model.branch
                model.$twiceA.invalidate()
                model.$bc.set(77, as: model.$bc)
                model.b += 1
                // An owner made, observed and freed here, in the destructor.
                do {
                    let temporary = PCBranchy()
                    trace.lock.lock()
                    trace.temporaries.append(WeakBox(temporary))
                    trace.lock.unlock()
                    observer.observe(temporary.$top) { trace.add("temporary top \($0.new)") }
                    temporary.a = 3
                    _ = temporary.top
                }
                let context = ThreadContext.current
                trace.lock.lock()
                if let context { trace.contexts.append(WeakBox(context)) }
                trace.lock.unlock()
            }
            pthread_setspecific(globalPCKey, Unmanaged.passRetained(payload).toOpaque())
        }
        #if canImport(Glibc)
            // glibc runs a round's destructors in the order the keys were made: Herald's first,
            // so each round finds the context freed (what this test is about).
            #expect(trace.hadContextOnEntry == Array(repeating: false, count: pcDestructorRounds))
        #endif
        #expect(trace.contexts.count == pcDestructorRounds)
        #expect(trace.contexts.allSatisfy { $0.isFreed })
        #expect(trace.temporaries.count == pcDestructorRounds)
        #expect(trace.temporaries.allSatisfy { $0.isFreed })
        #expect(trace.log.filter { $0 == "temporary top 39" }.count == pcDestructorRounds)
        #expect(model.top == model.values.top)
        #expect(trace.log.last(where: { $0.hasPrefix("top") }) == "top \(model.top)")
        #expect(trace.log.last(where: { $0.hasPrefix("bc") }) == "bc \(model.bc)")
    }
}
