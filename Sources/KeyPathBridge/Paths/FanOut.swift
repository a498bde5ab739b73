import Transforms

// A wildcard in the middle of a path (`currentUser.*.zipCode`, or the typed
// `appendingEveryProperty(holding:)`) fans out: the path follows every selected property of the
// object it reaches, and from each the rest of the path. Each such branch is a path of its own
// (a ``PathWiring`` rooted at that object, whose first component is the branch's property), so
// it re-wires on its own; its end values reach the main path's end through the main wiring,
// one at a time, compared with the branch's own last end value.

/// The properties a fan-out follows on an object, each as the first component of a branch.
typealias FanOutSelector = @Sendable (AnyObject) -> [PathComponent]

/// What a fan-out marker becomes with the components after it: the one component that fans out.
typealias FanOutMaker = @Sendable (_ rest: [PathComponent]) -> PathComponent

extension PathComponent {
    /// A marker for a fan-out in a path's flat list of components: the wiring replaces it and
    /// the components after it by one fan-out component (``nestingFanOuts(_:)``).
    init(fanningOutTo select: @escaping FanOutSelector) {
        self.init(fanningOut: { rest in PathComponent(fanOut: select, rest: rest) })
    }

    /// A marker for a fan-out that `make` builds from the components after it.
    init(fanningOut make: @escaping FanOutMaker) {
        nameBox = ComponentName("*")
        isOwnedByReceiver = false
        fanOut = make
        attach = { _, _, _, _, _, _ throws(PathError) in
            preconditionFailure("a fan-out marker is replaced before a path is wired")
        }
    }

    /// The components a wiring attaches: each fan-out marker, with the components after it,
    /// becomes one fan-out component whose branches follow those components (nested again).
    static func nestingFanOuts(_ flat: [PathComponent]) -> [PathComponent] {
        guard let marker = flat.firstIndex(where: { $0.fanOut != nil }),
            let make = flat[marker].fanOut
        else { return flat }
        let rest = nestingFanOuts(Array(flat[(marker + 1)...]))
        return Array(flat[..<marker]) + [make(rest)]
    }

    /// The component of a fan-out: on an object, one branch per selected property, each
    /// following `rest` from the object that property holds.
    init(fanOut select: @escaping FanOutSelector, rest: [PathComponent]) {
        nameBox = ComponentName("*")
        isOwnedByReceiver = true
        attach = { object, receiver, _, site, _, changed in
            FanOutLink(
                object, branches: select(object), rest: rest, receiver: receiver, site: site,
                changed: changed)
        }
    }

    /// The first component of a branch: `property` itself, held weakly. The object in its
    /// value (if any) is where the rest of the branch goes on; a value that is not an object
    /// makes the rest unreachable, without an error (a wildcard selects the properties the rest
    /// of the path applies to).
    init<Property: ObservableProperty>(branch property: Property, named name: String) {
        nameBox = ComponentName(name)
        isOwnedByReceiver = true
        attach = {
            [weak property] object, receiver, group, site, leadsOn, changed throws(PathError) in
            guard let property else {
                throw .unknownProperty(
                    name, type: String(describing: type(of: object)), path: name, known: [])
            }
            return try Self.link(
                to: property, receiver: receiver, group: group, site: site, leadsOn: leadsOn,
                changed: changed, misfit: { _ in })
        }
    }

    /// A branch for each observable property of an object (a string path's `*` in the middle).
    static let everyPropertyBranches: FanOutSelector = { object in
        ObservableProperties.all(of: object).map { name, property in
            branch(property, named: name)
        }
    }

    /// A branch for each observable property of an object whose value type is `Object` (or a
    /// subclass) or an optional one (the typed fan-out).
    static func branches<Object: AnyObject>(holding _: Object.Type) -> FanOutSelector {
        { object in
            ObservableProperties.all(of: object).compactMap { name, property in
                holds(property, Object.self) ? branch(property, named: name) : nil
            }
        }
    }

    private static func branch<Property: ObservableProperty>(
        _ property: Property, named name: String
    ) -> PathComponent {
        PathComponent(branch: property, named: name)
    }

    private static func holds<Property: ObservableProperty, Object: AnyObject>(
        _: Property, _: Object.Type
    ) -> Bool {
        if let optional = Property.Value.self as? any _OptionalType.Type {
            return optional._wrappedType is Object.Type
        }
        return Property.Value.self is Object.Type
    }
}

/// The link of a fan-out on one object: one branch (a path of its own) per selected property.
/// Its value is the end value of the first branch that is reachable; a branch's changes reach
/// the main path as changes of this link, with the branch (``BranchChange``) in place of the
/// next object, for the main wiring to compare with the branch's last end value.
final class FanOutLink: PathLink {
    private weak var object: AnyObject?
    private let branches: [PathWiring]
    private let ends: [BranchEnd]
    private let watch: FanOutWatch
    /// A problem the branches met as they were first wired, for the main wiring to throw or
    /// report (see ``wiringProblem``).
    private let problem: PathError?

    init(
        _ object: AnyObject, branches firsts: [PathComponent], rest: [PathComponent],
        receiver: Receiver?, site: DeclarationSite, changed: @escaping PathLink.Changed
    ) {
        self.object = object
        let watch = FanOutWatch(object, receiver: receiver, site: site)
        self.watch = watch
        var branches: [PathWiring] = []
        var ends: [BranchEnd] = []
        for first in firsts {
            let (branch, end) = Self.branch(
                from: object, following: [first] + rest, site: site, collectingProblems: true,
                changed: changed
            ) { [weak watch] in
                watch?.branchEnded()
            }
            branches.append(branch)
            ends.append(end)
        }
        self.branches = branches
        self.ends = ends
        problem = Self.problem(of: branches)
        watch.watch(branches)
    }

    /// The problem of a fan-out's first wiring: a misfit along a branch that is not quiet, or
    /// else, when no branch fits the component after the wildcard on any object it reached but
    /// some did not fit it, that misfit (a name that no branch has is a typo, never silent).
    /// The problem branches met as they were first wired: a misfit further along a branch, or
    /// a name after the wildcard that none of them has while some lack it (a typo).
    static func problem(of branches: [PathWiring]) -> PathError? {
        if let misfit = branches.lazy.compactMap(\.initialProblem).first { return misfit }
        guard !branches.contains(where: \.fitsAfterQuietLevel) else { return nil }
        return branches.lazy.compactMap(\.quietMisfit).first
    }

    override var wiringProblem: PathError? { problem }

    /// The first reachable branch's end value when the branches started (a change made since
    /// then arrives as a change of its branch).
    override func takeStart() -> (value: Any?, next: AnyObject?) {
        (ends.lazy.compactMap(\.startValue).first, nil)
    }

    override func end() {
        for branch in branches { branch.stop() }
        watch.end()
    }

    override func read() -> Any? { ends.lazy.compactMap(\.latest).first }

    /// The fanned-out object: when the path observes the property before the wildcard again,
    /// a fan-out on the same object is the same end (nothing is sent).
    override var identity: ObjectIdentifier? { object.map(ObjectIdentifier.init) }

    /// The rule of the first reachable branch's end property, which decides when a re-wire
    /// before the wildcard changes the end value (as it does for a plain path).
    override var hasOwnRule: Bool { firstReachableEndLink?.hasOwnRule ?? false }

    override func isChange(from old: Any, to new: Any) -> Bool? {
        firstReachableEndLink?.isChange(from: old, to: new)
    }

    private var firstReachableEndLink: PathLink? {
        zip(branches, ends).first { $0.1.startValue != nil }?.0.currentEndLink
    }

    /// A branch of a fan-out: a path from `root` following `components`, wired now, whose end
    /// passes its changes to `changed` (the fan-out's link's) and calls `ended` once the
    /// branch ended by itself (its root died, or it can observe nothing of it). Misfits of its
    /// first components are quiet (up to `quietThrough`, see ``PathWiring/isQuiet(_:at:)``);
    /// with `collectingProblems`, the others of its first wiring are kept (``PathWiring/
    /// initialProblem``), else reported.
    static func branch(
        from root: AnyObject, following components: [PathComponent], site: DeclarationSite,
        quietThrough: Int = 1, collectingProblems: Bool, changed: @escaping PathLink.Changed,
        ended: @escaping () -> Void
    ) -> (PathWiring, BranchEnd) {
        let end = BranchEnd(object: root, changed: changed, ended: ended)
        let branch = PathWiring(
            root: root, components: components, site: site, quietThrough: quietThrough)
        branch.start(end: end, author: end, collectingProblems: collectingProblems)
        return (branch, end)
    }

    override var isObserving: Bool { watch.isActive }
    override var isAlive: Bool { object != nil }
    override var isFanOut: Bool { true }
    override var observesNothing: Bool { !branches.contains(where: \.isActive) }
}

/// How the main wiring hears that a fan-out observes nothing any more: an observation owned by
/// the main wiring's receiver, ended (as if from the observed side) when the fanned-out object
/// is found dead or when every branch ended by itself, so the main wiring handles it as any
/// observation that ended.
final class FanOutWatch: @unchecked Sendable {
    private weak var object: AnyObject?
    private let core = MessengerCore<Void>()
    private let connection: ConnectionBase
    private let lock = Lock()
    @exclusivity(unchecked) private var branches: [PathWiring] = []

    init(_ object: AnyObject, receiver: Receiver?, site: DeclarationSite) {
        self.object = object
        connection = core.connect(receiver: receiver, site: site) { _, _ in }
    }

    /// Watches `branches`: if all ended already, says so now.
    func watch(_ branches: [PathWiring]) {
        lock.withLock { self.branches = branches }
        branchEnded()
    }

    /// A branch ended by itself.
    func branchEnded() {
        let branches = lock.withLock { self.branches }
        guard object == nil || !branches.contains(where: \.isActive) else { return }
        core.disconnectAll()
    }

    var isActive: Bool { connection.isActive }

    /// The fan-out ended (from the main wiring's side).
    func end() {
        connection.end()
        lock.withLock { branches = [] }
    }
}

/// An event that a path's end link sends in place of the next object, which the wiring hands
/// back to it while handling the change: so the event is handled one at a time with every
/// other event of the path, and dropped if the link was replaced meanwhile.
class EndEvent {
    /// Handles the event (one at a time, outside any lock); `end` is the path's end.
    func handle(end: PathEnd, from author: AnyAuthor) {}
}

/// A fan-out branch's change as the wiring of the fan-out receives it: the branch's new end
/// value, already compared with its last one, and that last one, published as an update from
/// it; dropped if the branch was retired meanwhile (its element left an array). (Also any
/// mutation of a collection at the end of a path, without a branch: every one is an update.)
final class BranchChange: EndEvent {
    /// The branch's new end value (nil: unreachable).
    let value: Any?
    /// The branch's end value before (nil: unreachable).
    let old: Any?
    private let branch: BranchEnd?

    init(value: Any?, old: Any? = nil, branch: BranchEnd? = nil) {
        self.value = value
        self.old = old
        self.branch = branch
    }

    override func handle(end: PathEnd, from author: AnyAuthor) {
        guard let branch else {
            return end.publish(value, from: author, forced: true, rule: nil)
        }
        guard !branch.isRetired else { return }
        end.publishBranch(value, old: old, from: author)
    }
}

/// The end of a fan-out's branch: compares the branch's end values with its last one (by
/// reachability, then the end property's own rule, else what the values hold, as a string path
/// does) and passes those that changed on to the wiring of the fan-out, as changes of the
/// fan-out's link.
final class BranchEnd: PathEnd, @unchecked Sendable {
    private let lock = Lock()
    /// Written only by the branch's wiring (whose events are handled one at a time); read by
    /// the fan-out's link too.
    @exclusivity(unchecked) private var last: Any?
    @exclusivity(unchecked) private var first: Any?
    @exclusivity(unchecked) private var retired = false
    private weak var object: AnyObject?
    private let changed: PathLink.Changed
    private let ended: () -> Void
    private static var heldValueRule: ChangeRule<Any> { .comparingHeldValues }

    init(object: AnyObject, changed: @escaping PathLink.Changed, ended: @escaping () -> Void) {
        self.object = object
        self.changed = changed
        self.ended = ended
    }

    /// The branch's last end value (nil: unreachable).
    var latest: Any? { lock.withLock { last } }

    /// The branch's end value when it was first wired (nil: unreachable).
    var startValue: Any? { lock.withLock { first } }

    func start(with value: Any?, from endLink: PathLink?) {
        lock.withLock {
            last = value
            first = value
        }
    }

    func publish(_ value: Any?, from author: AnyAuthor, forced: Bool, rule: PathLink?) {
        // The branch's root (the fanned-out object) died: the main path re-wires from before
        // it, or ends with it; no update of its own.
        guard object != nil else { return }
        let old = latest
        guard forced || Self.isChange(from: old, to: value, rule: rule) else { return }
        publishBranch(value, old: old, from: author)
    }

    /// A branch of a fan-out nested in this branch changed (compared already): passed on with
    /// its own old value.
    func publishBranch(_ value: Any?, old: Any?, from author: AnyAuthor) {
        guard object != nil, !isRetired else { return }
        lock.withLock { last = value }
        changed((), BranchChange(value: value, old: old, branch: self), author)
    }

    /// Whether the fan-out let go of this branch (its element left the array): a change it
    /// sent before is dropped.
    var isRetired: Bool { lock.withLock { retired } }

    /// Lets go of this branch.
    func retire() {
        lock.withLock { retired = true }
    }

    /// Reachability first, then the end property's own rule (user code: called unlocked), else
    /// what the values hold.
    private static func isChange(from old: Any?, to new: Any?, rule: PathLink?) -> Bool {
        guard let old, let new else { return (old == nil) != (new == nil) }
        if let rule, rule.hasOwnRule, let isChange = rule.isChange(from: old, to: new) {
            return isChange
        }
        return heldValueRule.isChange(from: old, to: new)
    }

    func finish() {
        ended()
    }
}
