import FloorShims
import Synchronization

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// The floor engine: the least that a thread-safe, pull-based design with automatic dependencies
// does, to measure how close to RAW such a design can come at all (`herald-benchmarks --floor`,
// Docs/Performance.md). It is not a library and nothing else uses it.
//
// What it does, as Herald does and at the least cost found:
// - one lock per property (Herald's: a compare-exchange to take it, a store to let it go);
// - a read finds the thread's open evaluation in a C thread-local variable, and records itself
//   there; an evaluation that reads what the last one read, in the same order, moves a cursor;
// - a change marks what depends on it before anything reads the new value (invalid for direct
//   dependents, to check for the rest), under the locks of what it marks;
// - a property to check brings its computed sources up to date first, and computes only if one
//   has another version than it read (an equal value makes nothing downstream compute);
// - one evaluation of a property at a time (a second reader waits);
// - an observed property is brought up to date after the change that marked it, and its
//   handler runs if its version moved.
//
// What it leaves out, each of which Herald pays for: dependents held weakly (here a dependent
// must outlive its sources), cycles (here a stack overflow or a hang), a thread waiting for
// another without deadlock (here it spins), sets of computed properties (hybrids), authors,
// delivery order between threads, declared paths, and any observer other than one handler.

/// Herald's lock: a compare-exchange to take it, a store to let it go; a waiter yields.
struct FloorLock: ~Copyable, @unchecked Sendable {
    let word = Atomic<UInt32>(0)

    @inline(__always)
    borrowing func withLock<Result>(_ body: () -> Result) -> Result {
        if !word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            waitForHolder()
        }
        defer { word.store(0, ordering: .releasing) }
        return body()
    }

    @inline(never)
    borrowing func waitForHolder() {
        while word.load(ordering: .relaxed) != 0
            || !word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
        {
            sched_yield()
        }
    }
}

/// What one thread keeps: the observed properties that its changes marked, to be told.
final class FloorContext {
    @exclusivity(unchecked) var queued: [FloorComputedBase] = []
    @exclusivity(unchecked) var isPropagating = false

    /// `body` applied to this thread's context (made on first use and kept for the thread's
    /// life: the floor never frees one).
    @inline(__always)
    static func with<Result>(_ body: (FloorContext) -> Result) -> Result {
        if let pointer = floor_thread_context() {
            return Unmanaged<FloorContext>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
        }
        let made = Unmanaged.passRetained(FloorContext())
        floor_set_thread_context(made.toOpaque())
        return made._withUnsafeGuaranteedRef(body)
    }

    /// Tells what the changes queued, unless an evaluation is open or this thread tells already.
    static func propagateQueued() {
        guard floor_thread_frame() == nil else { return }
        with { context in
            guard !context.isPropagating, !context.queued.isEmpty else { return }
            context.isPropagating = true
            var next = 0
            while next < context.queued.count {
                let property = context.queued[next]
                property.propagate(property)
                next += 1
            }
            // Popped: `removeAll(keepingCapacity:)` goes through the generic `replaceSubrange`.
            while context.queued.popLast() != nil {}
            context.isPropagating = false
        }
    }
}

/// A source: a variable or a computed property, and what depends on it.
class FloorNode {
    final let lock = FloorLock()
    /// Guarded by `lock`. Unretained: a dependent must outlive its sources.
    @exclusivity(unchecked) final var dependents: [Unmanaged<FloorComputedBase>] = []

    final func addDependent(_ dependent: Unmanaged<FloorComputedBase>) {
        lock.withLock { dependents.append(dependent) }
    }

    final func removeDependent(_ dependent: Unmanaged<FloorComputedBase>) {
        lock.withLock { dependents.removeAll { $0.toOpaque() == dependent.toOpaque() } }
    }

    /// Marks the dependents; the caller holds `lock`.
    @inline(__always)
    final func markDependentsWhileLocked(definitely: Bool, in context: FloorContext) {
        // Indexed, not iterated: iterating retains the array.
        var index = 0
        while index < dependents.count {
            dependents[index]._withUnsafeGuaranteedRef {
                $0.mark(definitely: definitely, in: context)
            }
            index += 1
        }
    }
}

/// What an evaluation read: a source, and for a computed one the version it had.
struct FloorLink {
    let node: Unmanaged<FloorNode>
    let computed: Unmanaged<FloorComputedBase>?
    var version: UInt64
}

/// The reads of one computed property's evaluations (one at a time).
final class FloorFrame {
    @exclusivity(unchecked) var dependent: Unmanaged<FloorComputedBase>?
    @exclusivity(unchecked) var links: [FloorLink] = []
    @exclusivity(unchecked) var cursor = 0
    /// Once the reads differ from the last evaluation's: what this one read.
    @exclusivity(unchecked) var next: [FloorLink]? = nil

    func begin() {
        cursor = 0
        next = nil
    }

    /// Records a read of `node` and returns where its link is (for `setVersion(at:_:)`).
    @inline(__always)
    func record(_ node: FloorNode, computed: FloorComputedBase?) -> Int {
        let identity = Unmanaged.passUnretained(node).toOpaque()
        if next == nil, cursor < links.count, links[cursor].node.toOpaque() == identity {
            cursor += 1
            return cursor - 1
        }
        return recordOther(node, computed: computed)
    }

    @inline(never)
    private func recordOther(_ node: FloorNode, computed: FloorComputedBase?) -> Int {
        let identity = Unmanaged.passUnretained(node).toOpaque()
        if next == nil {
            // The same source again.
            if cursor > 0, links[cursor - 1].node.toOpaque() == identity { return cursor - 1 }
            next = Array(links[..<cursor])
        }
        if let index = next!.firstIndex(where: { $0.node.toOpaque() == identity }) {
            return index
        }
        if !links.contains(where: { $0.node.toOpaque() == identity }) {
            node.addDependent(dependent.unsafelyUnwrapped)
        }
        next!.append(
            FloorLink(
                node: .passUnretained(node), computed: computed.map { .passUnretained($0) },
                version: 0))
        return next!.count - 1
    }

    @inline(__always)
    func setVersion(at index: Int, _ version: UInt64) {
        if next == nil { links[index].version = version } else { next![index].version = version }
    }

    /// Ends the evaluation: what it read becomes the links; what it no longer reads stops
    /// telling the property.
    func finish() {
        if let read = next {
            for link in links
            where !read.contains(where: { $0.node.toOpaque() == link.node.toOpaque() }) {
                link.node._withUnsafeGuaranteedRef {
                    $0.removeDependent(dependent.unsafelyUnwrapped)
                }
            }
            links = read
            next = nil
        } else if cursor < links.count {
            for link in links[cursor...] {
                link.node._withUnsafeGuaranteedRef {
                    $0.removeDependent(dependent.unsafelyUnwrapped)
                }
            }
            links.removeSubrange(cursor...)
        }
    }

    /// Whether a computed source has another version than the last evaluation read, once
    /// brought up to date (in the order read; stops at the first).
    func sourcesMoved() -> Bool {
        var index = 0
        while index < links.count {
            if let computed = links[index].computed,
                computed._withUnsafeGuaranteedRef({ $0.refreshedVersion($0) })
                    != links[index].version
            {
                return true
            }
            index += 1
        }
        return false
    }
}

/// A computed property, without its value's type.
class FloorComputedBase: FloorNode {
    enum Freshness: UInt8 {
        case valid, check, invalid
    }
    // Guarded by `lock`.
    @exclusivity(unchecked) final var freshness = Freshness.invalid
    @exclusivity(unchecked) final var isComputing = false
    @exclusivity(unchecked) final var version: UInt64 = 0
    /// Counts markings, so that an evaluation or a check that one overtook stores no validity.
    @exclusivity(unchecked) final var marks: UInt64 = 0
    @exclusivity(unchecked) final var isObserved = false
    @exclusivity(unchecked) final var isQueued = false
    final let frame = FloorFrame()
    /// Bring the property (the argument) up to date and return its version; bring it up to
    /// date and tell its handler. Closures made where the value's type is known, so that they
    /// run specialized (an override in a generic class runs the generic code).
    final let refreshedVersion: (FloorComputedBase) -> UInt64
    final let propagate: (FloorComputedBase) -> Void

    init(
        refreshedVersion: @escaping (FloorComputedBase) -> UInt64,
        propagate: @escaping (FloorComputedBase) -> Void
    ) {
        self.refreshedVersion = refreshedVersion
        self.propagate = propagate
        super.init()
        frame.dependent = Unmanaged.passUnretained(self)
    }

    /// A source changed (`definitely`) or may have: marks the property, and what depends on it
    /// if it was valid, under its lock (a change takes locks downwards only).
    final func mark(definitely: Bool, in context: FloorContext) {
        lock.withLock {
            marks &+= 1
            let wasValid = freshness == .valid
            if definitely {
                freshness = .invalid
            } else if wasValid {
                freshness = .check
            }
            if isObserved, !isQueued {
                isQueued = true
                context.queued.append(self)
            }
            if wasValid { markDependentsWhileLocked(definitely: false, in: context) }
        }
    }
}

/// A computed property of an `Owner`, cached until what it read changes.
final class FloorComputed<Owner: AnyObject, Value: Equatable>: FloorComputedBase {
    let compute: (Owner) -> Value
    @exclusivity(unchecked) var owner: Unmanaged<Owner>?
    // Guarded by `lock`.
    @exclusivity(unchecked) var cached: Value?
    @exclusivity(unchecked) var toldVersion: UInt64 = 0
    @exclusivity(unchecked) var handler: ((Value) -> Void)?

    init(_ compute: @escaping (Owner) -> Value) {
        self.compute = compute
        super.init(
            refreshedVersion: { unsafeDowncast($0, to: Self.self).refreshVersion() },
            propagate: { unsafeDowncast($0, to: Self.self).tell() })
    }

    /// Learns the owner, which must outlive the property.
    func bind(to owner: Owner) {
        self.owner = Unmanaged.passUnretained(owner)
    }

    var value: Value {
        guard let pointer = floor_thread_frame() else {
            var version: UInt64 = 0
            return refresh(version: &version)
        }
        return Unmanaged<FloorFrame>.fromOpaque(pointer)._withUnsafeGuaranteedRef { frame in
            let index = frame.record(self, computed: self)
            var version: UInt64 = 0
            let value = refresh(version: &version)
            frame.setVersion(at: index, version)
            return value
        }
    }

    func refreshVersion() -> UInt64 {
        var version: UInt64 = 0
        _ = refresh(version: &version)
        return version
    }

    private enum Step {
        case valid(Value)
        case check(marks: UInt64)
        case evaluate(marks: UInt64)
        case wait
    }

    /// The value, brought up to date, and its version in `version`.
    @inline(__always)
    func refresh(version: inout UInt64) -> Value {
        while true {
            // One critical section: valid, or this thread checks or computes.
            let step = lock.withLock { () -> Step in
                if freshness == .valid {
                    version = self.version
                    return .valid(cached.unsafelyUnwrapped)
                }
                if isComputing { return .wait }
                isComputing = true
                return freshness == .check ? .check(marks: marks) : .evaluate(marks: marks)
            }
            switch step {
            case .valid(let value):
                return value
            case .wait:
                sched_yield()
            case .check(let marks):
                if let value = check(marks: marks, version: &version) { return value }
            case .evaluate(let marks):
                return evaluate(marks: marks, version: &version)
            }
        }
    }

    @inline(never)
    private func check(marks: UInt64, version: inout UInt64) -> Value? {
        if frame.sourcesMoved() { return evaluate(marks: marks, version: &version) }
        return lock.withLock { () -> Value? in
            isComputing = false
            guard self.marks == marks else { return nil }
            freshness = .valid
            version = self.version
            return cached
        }
    }

    @inline(never)
    private func evaluate(marks: UInt64, version: inout UInt64) -> Value {
        frame.begin()
        let outer = floor_thread_frame()
        floor_set_thread_frame(Unmanaged.passUnretained(frame).toOpaque())
        let value = owner.unsafelyUnwrapped._withUnsafeGuaranteedRef(compute)
        floor_set_thread_frame(outer)
        frame.finish()
        return lock.withLock {
            isComputing = false
            if cached.map({ $0 != value }) ?? true {
                cached = value
                self.version &+= 1
            }
            if self.marks == marks { freshness = .valid }
            version = self.version
            return value
        }
    }

    /// Starts observing: the property is computed now and again after each change that marks
    /// it, and `handler` runs with each new value.
    func observe(_ handler: @escaping (Value) -> Void) {
        var version: UInt64 = 0
        _ = refresh(version: &version)
        lock.withLock {
            self.handler = handler
            toldVersion = version
            isObserved = true
        }
    }

    /// Brings the property up to date and runs its handler if its version moved.
    func tell() {
        lock.withLock { isQueued = false }
        var version: UInt64 = 0
        let value = refresh(version: &version)
        let moved = lock.withLock { () -> Bool in
            guard version != toldVersion else { return false }
            toldVersion = version
            return true
        }
        // Set before the property was observed, under the lock taken above: read unlocked.
        if moved, let handler { handler(value) }
    }
}

/// A variable.
final class FloorVariable<Value: Equatable>: FloorNode {
    // Guarded by `lock`.
    @exclusivity(unchecked) var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get {
            if let pointer = floor_thread_frame() {
                _ = Unmanaged<FloorFrame>.fromOpaque(pointer)._withUnsafeGuaranteedRef {
                    $0.record(self, computed: nil)
                }
            }
            return lock.withLock { stored }
        }
        set {
            let marked = lock.withLock { () -> Bool in
                guard stored != newValue else { return false }
                stored = newValue
                guard !dependents.isEmpty else { return false }
                FloorContext.with { markDependentsWhileLocked(definitely: true, in: $0) }
                return true
            }
            if marked { FloorContext.propagateQueued() }
        }
    }
}
