import Transforms

/// The wiring of a path from its root: a client of Herald's re-wiring engine (``SwitchEngine``)
/// with one level per component. It keeps one observation per attached component, tagged with
/// the engine, and re-wires the components after one whose object changed; the end value goes
/// to the path's typed end (``PathEnd``).
///
/// Everything that changes the wiring — the initial wiring, a change at any level (which may
/// arrive on any thread, for different components at once), the end of the root's observation —
/// is an event of the engine, handled one at a time, outside any lock (attaching may start
/// observations and run their observation-state handlers), in acceptance order. A change from a
/// link that was replaced meanwhile is stale and dropped.
///
/// Not generic, so that handling a change looks up no generic metadata.
@usableFromInline
final class PathWiring: SwitchEngineClient, @unchecked Sendable {
    @usableFromInline
    enum Event {
        /// Wire the whole path from the root (once, at the start).
        case wire
        /// The property at `level` changed to `value`; `next` is the object in it if the path
        /// goes on from there.
        case changed(level: Int, value: Any?, next: AnyObject?)
        /// The observation of a property along the path ended from the observed side: the
        /// property (with its object, or the root) died, or it stopped being observed.
        case observationEnded
    }

    /// The tag of one level's observation (see ``SwitchEngine/tag(level:)``).
    @usableFromInline typealias Tag = SwitchEngine<Event>.Tag

    @usableFromInline let switchEngine: SwitchEngine<Event>
    // Guarded by `lock`. `links` and `end` change only while an event is handled and in
    // `stop()` (which also lets go of `end`, the path's typed end, breaking the cycle with it).
    private let lock = Lock()
    @exclusivity(unchecked) private var links: [PathLink] = []
    @exclusivity(unchecked) private var end: PathEnd?
    @exclusivity(unchecked) private var stopped = false
    /// The first component that did not fit when the path was first wired.
    @exclusivity(unchecked) private var problem: PathError?
    /// See ``quietMisfit`` and ``fitsAfterQuietLevel``.
    @exclusivity(unchecked) private var quietMisfitFound: PathError?
    @exclusivity(unchecked) private var fitsAfterQuiet = false
    /// Whether the initial wiring runs (touched only while handling events).
    private var isWiringInitially = false
    /// The level of the misfit reported last, while it lasts: reported once, not at every
    /// change (touched only while handling events).
    private var reportedMisfit: Int?
    /// The link a property's observation was last attached again by, after it ended from the
    /// observed side, until another change is handled (touched only while handling events).
    /// Weak: a link replaced meanwhile is not kept.
    private weak var lastReattached: PathLink?
    /// Whether a problem of the initial wiring is kept for the creator to throw (else reported,
    /// as every later one is). Set before the engine is shared.
    private var collectsProblems = false
    @exclusivity(unchecked) private var endPropertyHandler: (() -> Void)?
    @exclusivity(unchecked) private var endHandler: (() -> Void)?
    /// The path object (the ``ObservedPath``), the author of the last update when the root dies.
    @exclusivity(unchecked) private weak var pathObject: AnyObject?
    private weak var root: AnyObject?
    private let components: [PathComponent]
    private let site: DeclarationSite
    /// Owns the observations of the path's properties, to hear when one ends from the observed
    /// side: when the root dies (its property dies with it), and when a property dies or stops
    /// being observed.
    private let receiver: Receiver

    /// The last level whose misfits may be quiet (1 in a fan-out's branch, see
    /// ``isQuiet(_:at:)``); -1 for none.
    private let quietThrough: Int

    /// A wiring of `components` (flat: fan-out markers are nested here) from `root`. Misfits of
    /// the components up to `quietThrough` make the rest unreachable without a report.
    init(
        root: AnyObject, components: [PathComponent], site: DeclarationSite,
        quietThrough: Int = -1
    ) {
        self.root = root
        let components = PathComponent.nestingFanOuts(components)
        self.components = components
        self.site = site
        self.quietThrough = quietThrough
        let engine = SwitchEngine<Event>(levels: components.count)
        switchEngine = engine
        receiver = Receiver { [weak engine] in
            guard let engine else { return }
            engine.send(.observationEnded, from: engine)
        }
        engine.start(for: self, site: site)
    }

    /// Wires the whole path now, through the engine like every later change, so that a change
    /// made meanwhile is handled after it; `end` gets the starting end value, and no update.
    /// (No other thread delivers the engine's events yet, so this one handles it before
    /// returning.)
    func start(end: PathEnd, author: AnyAuthor, collectingProblems: Bool) {
        collectsProblems = collectingProblems
        lock.withLock { self.end = end }
        switchEngine.send(.wire, from: author)
    }

    /// The first component that did not fit an object when the path was first wired, if the
    /// creator collects problems (to throw it; later misfits, and all of them otherwise, go to
    /// ``PathDiagnostics``).
    var initialProblem: PathError? { lock.withLock { problem } }

    /// Whether the path still runs: not stopped, and the root is alive.
    var isActive: Bool {
        lock.withLock { !stopped } && root != nil
    }

    /// Whether the path was stopped (by hand, or when it ended with its root).
    var hasStopped: Bool { lock.withLock { stopped } }

    /// Whether the path tracks its root's first property through Observation (an `@Observable`
    /// root, which cannot tell of its death). Fixed once the path is wired: the first
    /// component's link is made anew only with the same kind.
    var tracksItsRoot: Bool { lock.withLock { links.first is TrackedLink } }

    /// Ends the path, after its last update, if its root died and cannot tell of it: an
    /// `@Observable` root (the path tracks its first property through Observation, which has no
    /// signal for a death). A root that can tell ends the path itself, on the thread where it
    /// dies; taking that over from another thread would only move the last update there. The
    /// update goes through the path's engine like any other event, so the path ends once.
    func endIfUntoldRootDied() {
        guard root == nil, tracksItsRoot else { return }
        switchEngine.send(.observationEnded, from: switchEngine)
    }

    /// Sets the property at the end of the path; false if it is unreachable.
    func write(_ value: Any, as author: AnyAuthor) -> Bool {
        endLink?.write(value, as: author) ?? false
    }

    /// The end property's value as it is now, which may be newer than the path's last update
    /// (a change the path has not yet heard of), or nil if the path is unreachable.
    func readEnd() -> Any? {
        endLink?.read()
    }

    /// Sets the path object (once, right after it is made).
    func setAuthor(_ path: AnyObject) {
        lock.withLock { pathObject = path }
    }

    func setEndPropertyHandler(_ handler: @escaping () -> Void) {
        _ = exchange(\.endPropertyHandler, with: handler)  // the old one is released unlocked
    }

    func setEndHandler(_ handler: @escaping () -> Void) {
        _ = exchange(\.endHandler, with: handler)
    }

    /// Replaces a handler under the lock and returns the old one, for the caller to call or
    /// release after unlocking.
    private func exchange(
        _ handler: ReferenceWritableKeyPath<PathWiring, (() -> Void)?>,
        with new: (() -> Void)?
    ) -> (() -> Void)? {
        lock.withLock {
            defer { self[keyPath: handler] = new }
            return self[keyPath: handler]
        }
    }

    /// Ends every observation; safe to call while a change is being handled.
    func stop() {
        let (detached, end, endHandler) = lock.withLock {
            stopped = true
            defer {
                links = []
                self.end = nil
                self.endHandler = nil
            }
            return (links, self.end, self.endHandler)
        }
        for link in detached { link.end() }
        // No event is handled after this returns, except one whose handling had begun.
        switchEngine.stop()
        _ = end
        endHandler?()
    }

    /// The link to the end property, if the path reaches it.
    private var endLink: PathLink? {
        lock.withLock { links.count == components.count ? links.last : nil }
    }

    /// The path's typed end, unless the path stopped.
    private var runningEnd: PathEnd? {
        lock.withLock { stopped ? nil : end }
    }

    /// Lets the calling thread handle a change of the end property itself, now, without the
    /// engine's hop (the typed end of a path whose end property is a variable or a collection's
    /// part calls it from that property's message; see ``PathComponent/attachAsEnd``): true if
    /// the engine handles no
    /// other event and none waits, the change's observation (`tag`) is current, and the path
    /// runs. Then the caller publishes the end value and calls ``endDirectChange()``; events sent
    /// meanwhile wait their turn. False: send the change through the engine (which handles
    /// whatever the cases this does not take: a manual trigger, a dead root, a stale change).
    @usableFromInline func beginDirectChange(tag: Tag, from author: AnyAuthor) -> Bool {
        guard author !== ManualTrigger.author, switchEngine.beginHandlingDirectly() else {
            return false
        }
        // This thread now handles the engine's events: this change is the current one.
        guard switchEngine.isCurrent(tag), root != nil, lock.withLock({ !stopped && end != nil })
        else {
            switchEngine.endHandlingDirectly()
            return false
        }
        lastReattached = nil
        return true
    }

    /// Ends what ``beginDirectChange(tag:from:)`` began, after handling the events sent
    /// meanwhile.
    @usableFromInline func endDirectChange() {
        switchEngine.endHandlingDirectly()
    }

    /// Handles an event (one at a time, outside any lock). A manual trigger
    /// (``Inspector/trigger(_:)-(String)``) of a property along the path sends the end value even
    /// though it did not change.
    @usableFromInline func handle(_ event: Event, from author: AnyAuthor) {
        switch event {
        case .changed(let level, let value, let next):
            lastReattached = nil
            guard let end = runningEnd else { return }
            // A root whose first property outlives it (shared with another object) is found dead
            // here, at the next change.
            guard root != nil else {
                return endWithRoot(end, from: lock.withLock { pathObject } ?? author)
            }
            let forced = author === ManualTrigger.author
            if level == components.count - 1 {
                if let next {
                    // Only a link that handles its changes itself sends an object from the
                    // end (a fan-out's branch, a change of a fan-out's members, any mutation
                    // of a collection).
                    unsafeDowncast(next, to: EndEvent.self).handle(end: end, from: author)
                } else {
                    end.publish(value, from: author, forced: forced, rule: endLink)
                }
            } else {
                // An object along the path changed: re-wire everything after it.
                noteMisfit(of: next == nil ? value : nil, at: level)
                rewire(after: level, object: next, to: end, from: author, forced: forced)
            }
            // A part became unreachable: if for good (an object-following element that left)
            // and nothing before it can change (the root's part, or behind constant links),
            // the path can never change again, and ends.
            if value == nil, next == nil { endIfRootIsUnobservable(end) }
        case .wire:
            isWiringInitially = true
            let (attached, endValue) = attach(from: 0, object: root)
            isWiringInitially = false
            let end = lock.withLock { () -> PathEnd? in
                guard !stopped else { return nil }
                links = attached
                return self.end
            }
            guard let end else {
                for link in attached { link.end() }
                return
            }
            let endLink = attached.count == components.count ? attached.last : nil
            end.start(with: endValue, from: endLink)
            endIfRootIsUnobservable(end)
        case .observationEnded:
            guard let end = runningEnd else { return }
            // The update this causes has no author of its own: the path is its author.
            let path = lock.withLock { pathObject } ?? author
            guard let root else { return endWithRoot(end, from: path) }
            observationEnded(from: root, to: end, from: path)
        }
    }

    /// The root died: a last update to unreachable, then the path is over, and so is every
    /// observation of it (which frees an ad hoc observation's path, handler and all), once that
    /// update reached them, even if another delivery runs.
    private func endWithRoot(_ end: PathEnd, from path: AnyAuthor) {
        rewire(after: -1, object: nil, to: end, from: path, forced: false)
        stop()
        end.finish()
    }

    /// The observation of a property along the path ended from the observed side, and the root
    /// lives: if the property lives (it stopped being observed), observe it again, and what
    /// follows; if it died while its object lives (a computed property that returns a new
    /// observable each time, say), the rest of the path is unreachable — observing it again
    /// would end again at once.
    ///
    /// Observing the same property again sends nothing and tells no binding (the end property
    /// did not change; a change made while it was not observed is not seen). A property that
    /// ends its observation again before anything else happened (one that refuses observers,
    /// from its 0→1 hook) is not observed again: the rest of the path is unreachable.
    private func observationEnded(from root: AnyObject, to end: PathEnd, from path: AnyAuthor) {
        let current = lock.withLock { links }
        guard let level = current.firstIndex(where: { !$0.isObserving }) else { return }
        let ended = current[level]
        let object = level == 0 ? root : current[level - 1].next()
        let refused = ended === lastReattached
        let reattach = ended.isAlive && !refused
        let endBefore = current.count == components.count ? current.last?.identity : nil
        let attached = rewire(
            after: level - 1, object: reattach ? object : nil, to: end, from: path, forced: false,
            quietIfEndIs: endBefore)
        lastReattached = reattach ? attached.first : nil
        endIfRootIsUnobservable(end)
    }

    /// A path that observes nothing (the root's property died while the root lives, refuses
    /// observers, or does not fit; every link is a constant or a part gone for good) can
    /// neither change nor hear of the root's death: it ends now, and so do its observations,
    /// which are freed.
    private func endIfRootIsUnobservable(_ end: PathEnd) {
        let observesNothing = lock.withLock {
            !stopped && links.allSatisfy(\.observesNothing)
        }
        guard observesNothing, !collectsProblemsNow else { return }
        stop()
        end.finish()
    }

    /// Whether the initial wiring keeps a problem for the creator to throw (the creator then
    /// stops the path itself).
    private var collectsProblemsNow: Bool {
        collectsProblems && lock.withLock { problem != nil }
    }

    /// Attaches the components from `level` on, starting at `object`; returns the links and the
    /// end value (nil where the path became unreachable). Each link is tagged, which makes the
    /// changes of the links it replaces stale.
    private func attach(from level: Int, object: AnyObject?) -> ([PathLink], Any?) {
        // What follows is wired anew: a misfit there is met anew.
        if let reported = reportedMisfit, reported >= level { reportedMisfit = nil }
        var attached: [PathLink] = []
        var object = object
        for index in level..<components.count {
            guard let current = object else {
                switchEngine.invalidate(from: index)
                return (attached, nil)
            }
            let tag = switchEngine.tag(level: index)
            let isEnd = index == components.count - 1
            let changed: PathLink.Changed = { [switchEngine] value, next, author in
                switchEngine.send(
                    .changed(level: index, value: value, next: next), tag: tag, from: author)
            }
            let link: PathLink
            do throws(PathError) {
                if isEnd, let attachAsEnd = components[index].attachAsEnd,
                    let end = lock.withLock({ self.end })
                {
                    link = try attachAsEnd(current, receiver, site, end, tag, changed)
                } else {
                    link = try components[index].attach(
                        current, receiver, nil, site, !isEnd, changed)
                }
            } catch {
                // The rest of the path is unreachable from this object.
                note(error, at: index)
                switchEngine.invalidate(from: index)
                return (attached, nil)
            }
            if index == quietThrough { lock.withLock { fitsAfterQuiet = true } }
            // A fan-out's branches may have met a problem as they were first wired.
            if let problem = link.wiringProblem { note(problem, at: index) }
            attached.append(link)
            let start = link.takeStart()
            if isEnd { return (attached, start.value) }
            object = start.next
            if object == nil { noteMisfit(of: start.value, at: index) }
            #if DEBUG
                PathTestHooks.afterAttaching?(index)
            #endif
        }
        return (attached, nil)
    }

    /// A component that does not fit at `level`: quiet in a fan-out's branch (the first quiet
    /// misfit after the wildcard is kept, see ``quietMisfit``), kept for the creator to throw
    /// if the initial wiring collects problems, else reported.
    private func note(_ error: PathError, at level: Int) {
        if isQuiet(error, at: level) {
            if level == quietThrough {
                lock.withLock { quietMisfitFound = quietMisfitFound ?? error }
            }
        } else if isWiringInitially && collectsProblems {
            lock.withLock { problem = problem ?? error }
        } else {
            PathDiagnostics.report(error)
        }
    }

    /// A string path's component at `level` (not the end) that holds `value`, which is no
    /// object: the rest of the path is unreachable, and the misfit is noted once while it
    /// lasts (nil: the component holds no misfit now).
    private func noteMisfit(of value: Any?, at level: Int) {
        guard let misfit = components[level].misfit else { return }
        guard case .value(let type) = PathLink.content(of: value) else {
            if reportedMisfit == level { reportedMisfit = nil }
            return
        }
        guard reportedMisfit != level else { return }
        reportedMisfit = level
        note(misfit(type), at: level)
    }

    /// In a fan-out's branch: the first component after the wildcard that did not fit an object
    /// (quietly), if any.
    var quietMisfit: PathError? { lock.withLock { quietMisfitFound } }

    /// In a fan-out's branch: whether the component after the wildcard fitted an object once.
    var fitsAfterQuietLevel: Bool { lock.withLock { fitsAfterQuiet } }

    /// The link to the end property, if the path reaches it now.
    var currentEndLink: PathLink? { endLink }

    /// Whether a misfit at `level` leaves the rest unreachable without a report: in a fan-out's
    /// branch (`quietThrough` 1), the branch's property itself, and the next component when
    /// the object lacks it (a wildcard selects the properties the rest of the path applies to).
    private func isQuiet(_ error: PathError, at level: Int) -> Bool {
        guard level <= quietThrough else { return false }
        guard level == quietThrough else { return true }
        switch error {
        case .unknownProperty, .notACollection: return true
        case .malformed, .indexOutOfRange, .notAnObject, .notTriggerable: return false
        }
    }

    /// Replaces the links after `level` by new ones starting at `object`, then publishes the end
    /// value.
    /// With `quietIfEndIs`, nothing is published and no binding told when the path ends at that
    /// same property again. Returns the links attached.
    @discardableResult
    private func rewire(
        after level: Int, object: AnyObject?, to end: PathEnd, from author: AnyAuthor,
        forced: Bool, quietIfEndIs sameEnd: ObjectIdentifier? = nil
    ) -> [PathLink] {
        let (attached, endValue) = attach(from: level + 1, object: object)
        let reachesEnd = level + 1 + attached.count == components.count
        let (detached, installed, endHandler) = lock.withLock {
            () -> ([PathLink], Bool, (() -> Void)?) in
            guard !stopped, level < links.count else { return (attached, false, nil) }
            let detached = Array(links[(level + 1)...])
            links.replaceSubrange((level + 1)..., with: attached)
            return (detached, true, reachesEnd ? endPropertyHandler : nil)
        }
        for old in detached { old.end() }
        guard installed else { return attached }
        if let sameEnd, reachesEnd, attached.last?.identity == sameEnd { return attached }
        end.publish(endValue, from: author, forced: forced, rule: reachesEnd ? attached.last : nil)
        endHandler?()
        return attached
    }
}

/// The typed end of a path, which a ``PathWiring`` feeds with end values (nil: unreachable).
protocol PathEnd: AnyObject {
    /// The end value when the path was wired, read from `endLink` (nil if the path does not
    /// reach its end): no update.
    func start(with value: Any?, from endLink: PathLink?)
    /// A new end value: an update if it changed (or if `forced`), by the rule of `rule`, the
    /// link to the end property, if it has one of its own.
    func publish(_ value: Any?, from author: AnyAuthor, forced: Bool, rule: PathLink?)
    /// The root died and the last update was published: end the path's observations once it
    /// reached them.
    func finish()
    /// A fan-out's branch changed its end value from `old` to `value` (compared already): an
    /// update from the branch's old value, whatever was sent last.
    func publishBranch(_ value: Any?, old: Any?, from author: AnyAuthor)
}

#if DEBUG
    /// Test hooks of the path engine, task-local so that tests running in parallel do not see
    /// each other's.
    package enum PathTestHooks {
        /// Runs while a path is wired, after the component at `level` was attached and the object
        /// it leads to was read.
        @TaskLocal package static var afterAttaching: (@Sendable (_ level: Int) -> Void)?
    }
#endif
