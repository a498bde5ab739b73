import Messaging
import Transforms

extension Synthetic {
    /// The value: the cached one while valid, else computed now.
    @inlinable
    public var value: Value { value(readThrough: nil) }

    /// The value, read through `reader` (the owner, which the wrapper's getter has at hand) if
    /// given: an evaluation then computes from it instead of loading the owner, which the
    /// property does not keep alive (an atomic retain and release, or, on Apple platforms, where
    /// the owner is held `weak`, a slow one).
    @inlinable
    func value(readThrough reader: Owner?) -> Value {
        var version: UInt64 = 0
        var isCurrent = true
        // The frame, open further up this thread's stack, lives until this returns.
        guard let frame = DependencyTracking.currentFrame else {
            return refresh(readThrough: reader, version: &version, isCurrent: &isCurrent)
        }
        return frame._withUnsafeGuaranteedRef { frame in
            frame.record(self) { property in
                unsafeDowncast(property, to: Synthetic.self).refreshedVersion()
            }
            let value = refresh(readThrough: reader, version: &version, isCurrent: &isCurrent)
            if _slowPath(!isCurrent) {
                frame.readWhatIsNotCurrent()
                if awaitsSettling { frame.readWhatAMarkingWillReplace() }
            }
            frame.recordVersion(version)
            return value
        }
    }

    /// The value, read so that Swift's Observation sees the read: inside
    /// `withObservationTracking` (and so in a SwiftUI view's body), the tracking's `onChange`
    /// runs after the property next changes — when it is invalidated (it stays lazy: the next
    /// read computes it) or, if it is observed, when it recomputes to another value.
    ///
    /// ```swift
    /// Text(person.$fullName.tracked)   // the view renders again when fullName changes
    /// ```
    ///
    /// Only reads through `tracked` are reported (see Docs/Apps.md, "SwiftUI and Observation").
    @inlinable
    public var tracked: Value {
        // Reported first: a change after the value is read then finds the property tracked.
        observation.reportRead()
        core.lock.withLock { state.isTracked = true }
        return value
    }

    /// Whether the cached value is valid (reading it then runs nothing).
    public var isValid: Bool { core.lock.withLock { state.freshness == .valid } }

    /// How many times the function ran.
    package var evaluationCount: Int { core.lock.withLock { evaluations } }

    /// How many threads wait for the thread holding the property (for tests).
    package var waitingReaderCount: Int { core.lock.withLock { state.waiters.count } }

    /// Brings the value up to date and returns it.
    @inlinable
    func refreshedValue() -> Value {
        var version: UInt64 = 0
        var isCurrent = true
        return refresh(readThrough: nil, version: &version, isCurrent: &isCurrent)
    }

    /// For a check of a property that read this one: brings the value up to date and returns
    /// its version, or nil if the value is not current (see `EvaluationFrame.sourceMoved()`).
    @inlinable
    func refreshedVersion() -> UInt64? {
        var version: UInt64 = 0
        var isCurrent = true
        _ = refresh(readThrough: nil, version: &version, isCurrent: &isCurrent)
        return isCurrent ? version : nil
    }

    /// Brings the value up to date and returns it, and its version in `version`; an evaluation
    /// computes from `reader` if given (see `value(readThrough:)`). `isCurrent` is false if the
    /// value is one no result may be stored from (see `EvaluationFrame.readWhatIsNotCurrent()`).
    ///
    /// A thread that holds nothing and finds another thread holding the property (checking or
    /// computing it) waits for that thread. One that holds something (it is inside an
    /// evaluation or check) never waits: it computes the property aside, storing nothing, or,
    /// if it holds this property itself further up its stack, reports a cycle unless the
    /// property was overtaken meanwhile (see `reenter(readThrough:version:isCurrent:)`).
    @inlinable
    func refresh(readThrough reader: Owner?, version: inout UInt64, isCurrent: inout Bool)
        -> Value
    {
        // Valid: the common case, without finding out the thread.
        let valid = core.lock.withLock { () -> Value? in
            guard state.freshness == .valid else { return nil }
            version = state.version
            return cached
        }
        if let valid { return valid }
        let (thread, holdsNothing) = DependencyTracking.thisThreadAndWhetherItHoldsNothing
        var step = core.lock.withLock {
            state.beginRead(by: thread, knownNotReentering: holdsNothing)
        }
        while true {
            switch step {
            case .valid:
                // Read again under the lock with the version, which may have moved since.
                return core.lock.withLock {
                    version = state.version
                    return cached.unsafelyUnwrapped
                }
            case .busy where holdsNothing:
                waitForHolder()
                step = core.lock.withLock {
                    state.beginRead(by: thread, knownNotReentering: true)
                }
            case .busy:
                switch reenter(version: &version) {
                case .lastValue(let last):
                    isCurrent = false
                    return last
                case .computeAside:
                    return computeAside(
                        readThrough: reader, version: &version, isCurrent: &isCurrent)
                case .notReentering:
                    break
                }
                step = core.lock.withLock {
                    state.beginRead(by: thread, knownNotReentering: true)
                }
                if step == .busy {
                    return computeAside(
                        readThrough: reader, version: &version, isCurrent: &isCurrent)
                }
            case .check(let since):
                _ = DependencyTracking.beginWork(on: self, since: since)
                // This thread holds the property: no other thread uses the frame meanwhile.
                let moved = frame.sourceMoved()
                var checked: Value? = nil
                let (next, release) = core.lock.withLock {
                    () -> (SyntheticState.ReadStep, SyntheticState.Release) in
                    let (next, release) = state.finishChecking(sourceMoved: moved, since: since)
                    if case .valid = next {
                        version = state.version
                        checked = cached
                    }
                    return (next, release)
                }
                wake(release)
                guard case .evaluate(let since) = next else {
                    DependencyTracking.endWork(on: thread)
                    return checked.unsafelyUnwrapped
                }
                DependencyTracking.restartWork(since: since, on: thread)
                let value = evaluate(
                    readThrough: reader, since: since, on: thread, version: &version,
                    isCurrent: &isCurrent)
                DependencyTracking.endWork(on: thread)
                return value
            case .evaluate(let since):
                _ = DependencyTracking.beginWork(on: self, since: since)
                let value = evaluate(
                    readThrough: reader, since: since, on: thread, version: &version,
                    isCurrent: &isCurrent)
                DependencyTracking.endWork(on: thread)
                return value
            }
        }
    }

    /// Waits, holding nothing, until the thread holding the property lets go (at once if it
    /// did already).
    @usableFromInline
    func waitForHolder() {
        let parker = Parker()
        guard core.lock.withLock({ state.wait(with: parker) }) else { return }
        parker.park()
    }

    /// Wakes the threads that waited for this thread to let go of the property.
    @inlinable
    func wake(_ release: SyntheticState.Release) {
        if _slowPath(release.waiters != nil) {
            for waiter in release.waiters.unsafelyUnwrapped { waiter.unpark() }
        }
    }

    /// What a re-entry does (see `reenter(version:)`).
    @usableFromInline
    enum Reentry {
        /// No re-entry: this thread does not check or compute the property.
        case notReentering
        /// Overtaken: the last value, not current.
        case lastValue(Value)
        /// Overtaken, with no value: computed aside, once.
        case computeAside
    }

    /// A read by a thread that holds something, of a property that is busy (see
    /// `refresh(readThrough:version:isCurrent:)`). If this thread checks or computes it further
    /// up its stack, that is a re-entry: a cycle, unless the work since is overtaken (an
    /// invalidation or set moved the epoch of the property, or of one checked or computed
    /// since, or an evaluation open on the thread read a value that is not current). Then the
    /// dependencies may have switched meanwhile, so that no single state has the cycle: the
    /// read gets the last value, which is not current; or, if there is none, the property is
    /// computed aside, once (a re-entry into that is a cycle).
    @usableFromInline @inline(never)
    func reenter(version: inout UInt64) -> Reentry {
        let work = DependencyTracking.workOfThisThread
        guard let start = work.lastIndex(where: { $0.isOn(self) }) else { return .notReentering }
        let isFirst = work[..<start].allSatisfy { !$0.isOn(self) }
        let last = core.lock.withLock { () -> Value? in
            version = state.version
            return cached
        }
        let overtaken =
            epochNow != work[start].epoch
            || work[(start + 1)...].contains { item in
                (item.node.takeUnretainedValue() as? any SyntheticNode).map {
                    $0.epochNow != item.epoch
                } ?? false
            } || DependencyTracking.anOpenEvaluationIsTainted
        guard overtaken, isFirst else { SyntheticCycle.report(closingAt: self) }
        return last.map { .lastValue($0) } ?? .computeAside
    }

    /// Computes the value beside the thread holding the property, with a frame of its own,
    /// and stores nothing: the reader gets it, not current (see
    /// `SyntheticState.finishAside()`). The frame subscribes the property to nothing. If the
    /// thread is computing an observed property, it waits for this property's holder before it
    /// computes that again (see `DependencyTracking.oweWait(for:)`).
    @usableFromInline
    func computeAside(readThrough reader: Owner?, version: inout UInt64, isCurrent: inout Bool)
        -> Value
    {
        isCurrent = false
        let owner = core.lock.withLock { () -> Owner? in
            version = state.version
            let owner = reader ?? self.owner.object
            if owner != nil { state.beginAside() }
            return owner
        }
        guard let owner else { return lastValueOfDeadOwner(version: &version) }
        let thread = DependencyTracking.beginWork(on: self, since: epochNow)
        defer { DependencyTracking.endWork(on: thread) }
        let aside = EvaluationFrame()
        aside.dependent = self
        aside.subscribes = false
        aside.begin()
        let value = DependencyTracking.withFrame(aside, on: thread) { compute(owner) }
        _ = aside.finish()
        core.lock.withLock {
            evaluations += 1
            state.finishAside()
        }
        DependencyTracking.oweWait(for: self)
        return value
    }

    /// Computes the value as the thread holding the property (from `reader`, the owner, if
    /// given; else from the owner it refers to without keeping it alive), stores it unless it
    /// was invalidated or set meanwhile, or read something not current, and lets go.
    @inlinable
    func evaluate(
        readThrough reader: Owner?, since: UInt64, on thread: ObjectIdentifier,
        version: inout UInt64, isCurrent: inout Bool
    ) -> Value {
        var owner: Owner? = nil
        if reader == nil {
            owner = core.lock.withLock { self.owner.object }
            if owner == nil {
                isCurrent = false
                return abandonEvaluation(version: &version)
            }
        }
        // This thread holds the property: the frame is its own until the evaluation ends.
        frame.begin()
        // The owner is not retained for the call (an atomic retain and release per evaluation):
        // the caller holds `reader`, and `owner` lives until the end of this method. (Not
        // `reader ?? owner!`: that copies the reference, and the copy is retained.)
        let from: Unmanaged<Owner>
        if let reader {
            from = Unmanaged.passUnretained(reader)
        } else {
            from = Unmanaged.passUnretained(owner.unsafelyUnwrapped)
        }
        let value = DependencyTracking.withFrame(frame, on: thread) {
            if _slowPath(tracksObservation) { return computeTrackingObservation(from: from) }
            return from._withUnsafeGuaranteedRef(compute)
        }
        withExtendedLifetime(owner) {}
        // Stop depending on what is no longer read while still holding the property: no other
        // evaluation of it with this frame can subscribe to it meanwhile (and lose that to this
        // late removal).
        for link in frame.finish() { link.source.removeDependent(ObjectIdentifier(self)) }
        let tainted = frame.readSomethingNotCurrent
        let awaits = frame.readWhatAwaitsAMarking
        let rule = changeRule
        let (current, requeue, release) = core.lock.withLock {
            () -> (Bool, Bool, SyntheticState.Release) in
            evaluations += 1
            if _slowPath(binding != nil), state.epoch == since,
                binding != thread || pathsLeftToObserve > 0
            {
                // This value stands (nothing invalidated or set the property meanwhile), though
                // a change along a path not yet observed may have been missed.
                computedDuringBinding = true
            }
            let changed = cached.map { rule.isChange(from: $0, to: value) } ?? true
            let end = state.finishEvaluation(
                changed: changed, tainted: tainted, awaitsSettling: awaits, since: since)
            if end.store { cached = value }
            version = state.version
            return (end.isCurrent, end.requeue, end.release)
        }
        wake(release)
        isCurrent = current
        if _slowPath(requeue) { queueForPropagation() }
        return value
    }

    /// Queues the property for the end of this thread's outermost propagation.
    @usableFromInline
    func queueForPropagation() {
        DependencyTracking.enqueue(self)
    }

    /// The owner is gone: the holder lets go, and the read gets the last value, if there is one.
    @usableFromInline
    func abandonEvaluation(version: inout UInt64) -> Value {
        let release = core.lock.withLock { state.abandon() }
        wake(release)
        return lastValueOfDeadOwner(version: &version)
    }

    /// The last value, valid or not, of a property whose owner is gone (there is nothing to
    /// compute it from); stops the process if there never was one.
    @usableFromInline
    func lastValueOfDeadOwner(version: inout UInt64) -> Value {
        let last = core.lock.withLock { () -> Value? in
            version = state.version
            return cached
        }
        guard let last else {
            fatalError(
                "Herald: the synthetic property \(nodeName) was read before its owner was "
                    + "known, or after it died, and has no value to give. Declare it with "
                    + "@Synthetic, or make it with Synthetic(owner:name:_:).")
        }
        return last
    }
}
