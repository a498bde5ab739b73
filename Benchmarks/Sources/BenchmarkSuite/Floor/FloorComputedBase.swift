/// A computed property, without its value's type: its state, and how a change marks it.
class FloorComputedBase: FloorNode {
    /// Where the cached value stands.
    enum Freshness: UInt8 {
        /// The cached value is the property's value.
        case valid
        /// A computed source may have changed: check those before using the value.
        case check
        /// A source changed: compute again.
        case invalid
    }

    /// Where the cached value stands. Guarded by `lock`, as are the state's other fields.
    @exclusivity(unchecked) final var freshness = Freshness.invalid
    /// Whether a thread checks or computes the property (one at a time; others wait).
    @exclusivity(unchecked) final var isComputing = false
    /// Bumped each time the cached value changes.
    @exclusivity(unchecked) final var version: UInt64 = 0
    /// Counts markings, so that an evaluation or a check that one overtook stores no validity.
    @exclusivity(unchecked) final var marks: UInt64 = 0
    /// Whether a handler observes the property.
    @exclusivity(unchecked) final var isObserved = false
    /// Whether the property waits in a thread's context to be told (see `FloorContext`).
    @exclusivity(unchecked) final var isQueued = false
    /// The reads of the property's evaluations.
    final let frame = FloorFrame()
    /// Brings the property (the argument) up to date and returns its version. Made where the
    /// value's type is known, so that it runs specialized (an override in a generic class runs
    /// the generic code).
    final let refreshedVersion: (FloorComputedBase) -> UInt64
    /// Brings the property (the argument) up to date and runs its handler if its value moved
    /// (``FloorComputed/tell()``). Made where the value's type is known, as `refreshedVersion`.
    final let propagate: (FloorComputedBase) -> Void

    /// A property that is invalid until first computed, with the two closures that its subclass
    /// makes.
    init(
        refreshedVersion: @escaping (FloorComputedBase) -> UInt64,
        propagate: @escaping (FloorComputedBase) -> Void
    ) {
        self.refreshedVersion = refreshedVersion
        self.propagate = propagate
        super.init()
        frame.dependent = Unmanaged.passUnretained(self)
    }

    /// A source changed (`definitely`) or may have: marks the property, queues it to be told if
    /// it is observed, and marks what depends on it, under its lock (a change takes locks
    /// downwards only).
    ///
    /// A property that was valid passes the mark on. One that was not passed it on when it
    /// stopped being valid, unless a thread computes or checks it: what that thread finds (a
    /// value computed from what this mark changed) may reach a dependent that read the property
    /// meanwhile, which would then keep it as valid. Passed on, the mark makes that dependent's
    /// own evaluation (or check) overtaken, as Herald does.
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
            if wasValid || isComputing {
                markDependentsWhileLocked(definitely: false, in: context)
            }
        }
    }
}
