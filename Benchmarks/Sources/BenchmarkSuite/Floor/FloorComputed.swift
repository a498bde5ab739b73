import FloorShims

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A computed property of an `Owner`, cached until what it read changes.
final class FloorComputed<Owner: AnyObject, Value: Equatable>: FloorComputedBase {
    /// Computes the value from the owner (user code: never run under a lock).
    let compute: (Owner) -> Value
    /// The owner (unretained: it must outlive the property). Set once, before any read.
    @exclusivity(unchecked) var owner: Unmanaged<Owner>?
    /// The last value computed, nil before the first. Guarded by `lock`, as are `toldVersion`
    /// and `handler`.
    @exclusivity(unchecked) var cached: Value?
    /// The version the handler was last told of (or started from).
    @exclusivity(unchecked) var toldVersion: UInt64 = 0
    /// The observer's handler, set once by ``observe(_:)``.
    @exclusivity(unchecked) var handler: ((Value) -> Void)?

    /// A property that computes its value with `compute`; ``bind(to:)`` must follow.
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

    /// The value, brought up to date; inside an evaluation, the read is recorded first, and an
    /// outermost read ends by telling what writes inside its evaluations queued.
    var value: Value {
        var version: UInt64 = 0
        guard let pointer = floor_thread_frame() else {
            // An outermost read.
            let value = refresh(version: &version, told: nil)
            FloorEngine.propagateDeferred()
            return value
        }
        return Unmanaged<FloorFrame>.fromOpaque(pointer)._withUnsafeGuaranteedRef { frame in
            let index = frame.record(self, computed: self)
            let value = refresh(version: &version, told: nil)
            frame.setVersion(at: index, version)
            return value
        }
    }

    /// Brings the value up to date and returns its version (for a check of a property that
    /// read this one).
    func refreshVersion() -> UInt64 {
        var version: UInt64 = 0
        _ = refresh(version: &version, told: nil)
        return version
    }

    /// What a reader does, decided in the first critical section of ``refresh(version:told:)``.
    private enum Step {
        /// Use this value (the cached one, valid).
        case valid(Value)
        /// Check the computed sources (the thread now checks the property), from this marking.
        case check(marks: UInt64)
        /// Compute (the thread now computes the property), from this marking.
        case evaluate(marks: UInt64)
        /// Another thread checks or computes the property: read again.
        case wait
    }

    /// The value, brought up to date, and its version in `version`.
    ///
    /// `told` for ``tell()`` (nil for a read): the first critical section also clears
    /// `isQueued` (a mark after it queues the property again), and the critical section that
    /// finds the value valid sets `told` to whether its version is not the one the handler was
    /// told of (and records it as told). A value that is not valid when it is found (an
    /// evaluation that a mark overtook) is not told: the mark queued the property again. (A
    /// pointer, not a flag and an `inout`: one argument fewer for `check` and `evaluate`, about
    /// 1% of W13's instructions.)
    @inline(__always)
    func refresh(version: inout UInt64, told: UnsafeMutablePointer<Bool>?) -> Value {
        while true {
            // One critical section: valid, or this thread checks or computes.
            let step = lock.withLock { () -> Step in
                if told != nil { isQueued = false }
                if freshness == .valid {
                    version = self.version
                    if let told { told.pointee = takeTellWhileLocked() }
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
                let checked = check(marks: marks, version: &version, told: told)
                if let checked { return checked }
            case .evaluate(let marks):
                return evaluate(marks: marks, version: &version, told: told)
            }
        }
    }

    /// Whether to tell the handler of the valid value's version (`version`); records it as
    /// told. The caller holds `lock`.
    @inline(__always)
    private func takeTellWhileLocked() -> Bool {
        guard version != toldVersion else { return false }
        toldVersion = version
        return true
    }

    /// Checks the computed sources (this thread checks the property) and computes if one moved.
    /// Returns nil if a mark overtook the check (then the reader reads again).
    @inline(never)
    private func check(marks: UInt64, version: inout UInt64, told: UnsafeMutablePointer<Bool>?)
        -> Value?
    {
        if frame.sourcesMoved() {
            return evaluate(marks: marks, version: &version, told: told)
        }
        return lock.withLock { () -> Value? in
            isComputing = false
            guard self.marks == marks else { return nil }
            freshness = .valid
            version = self.version
            if let told { told.pointee = takeTellWhileLocked() }
            return cached
        }
    }

    /// Computes the value (this thread computes the property) and stores it; valid only if no
    /// mark overtook the evaluation. An overtaken value is stored with a new version all the
    /// same (what read it then has a version that the next computation moves if its value
    /// differs), but not told.
    @inline(never)
    private func evaluate(
        marks: UInt64, version: inout UInt64, told: UnsafeMutablePointer<Bool>?
    ) -> Value {
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
            version = self.version
            if self.marks == marks {
                freshness = .valid
                if let told { told.pointee = takeTellWhileLocked() }
            }
            return value
        }
    }

    /// Starts observing: the property is computed now and again after each change that marks
    /// it, and `handler` runs with each new value (outside any lock; on the thread that made
    /// the change, or on several at once when several threads change its sources).
    func observe(_ handler: @escaping (Value) -> Void) {
        var version: UInt64 = 0
        _ = refresh(version: &version, told: nil)
        let mustTell = lock.withLock { () -> Bool in
            self.handler = handler
            toldVersion = version
            isObserved = true
            // A change since the refresh above found the property unobserved and queued
            // nothing: queue it now (the value is then not the one the handler started from).
            guard freshness != .valid || self.version != version, !isQueued else {
                return false
            }
            isQueued = true
            return true
        }
        if mustTell {
            FloorContext.with { $0.queued.append(self) }
            FloorContext.propagateQueued()
        }
        FloorEngine.propagateDeferred()
    }

    /// Brings the property up to date and runs its handler if its version moved since the
    /// handler was last told, and the value is current. In the common case one critical
    /// section when the value is valid, two when it computes (as a read).
    func tell() {
        var version: UInt64 = 0
        var told = false
        let value = refresh(version: &version, told: &told)
        // Set before the property was observed, under the lock; this thread took the lock
        // since (a mark that found the property observed queued it): read unlocked.
        if told, let handler { handler(value) }
    }
}
