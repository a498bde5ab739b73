import Transforms

/// The fan-out over a collection's elements (`items.*.name`; a dictionary's values, a set's
/// members): one branch per element that is an object, following the rest of the path from it.
/// An element held twice is one branch, kept while the element is held at least once.
/// Membership changes reach the path's wiring as events of its end link (``MembershipChange``),
/// so they are handled one at a time with the branches' changes; each costs what its elements
/// cost, whatever the collection's size.
final class EachElementLink<Element>: PathLink {
    /// One element's branch: how many places hold the element, and when it joined (the start
    /// value is the first reachable branch's, in order of joining).
    private struct Branch {
        var count: Int
        let wiring: PathWiring
        let end: BranchEnd
        let joined: Int
    }

    private weak var collection: AnyObject?
    private let rest: [PathComponent]
    private let site: DeclarationSite
    private let changed: PathLink.Changed
    private let shape = ObjectShape(Element.self)
    private var connection: ConnectionBase!
    private let lock = Lock()
    /// The branches by element identity. Changed only while the path's wiring handles an event
    /// (and emptied by `end()`).
    @exclusivity(unchecked) private var branches: [ObjectIdentifier: Branch] = [:]
    /// How many branches have joined (each branch's `joined` is its number).
    @exclusivity(unchecked) private var joinCount = 0
    @exclusivity(unchecked) private var isEnded = false
    /// A problem the first elements' branches met (see ``wiringProblem``).
    private var problem: PathError?
    /// Whether the rest of the path has fitted an element (its first component, which an
    /// element may lack quietly), or a typo was reported: a later element that lacks it is then
    /// left out quietly (touched only while the path's wiring handles an event).
    private var isNameSettled = false

    /// The fan-out over `collection`'s elements. `connect` observes the collection: it calls
    /// the handler it is given with the elements each change puts in and takes out, and returns
    /// the observation and the elements it started from (read in the same step).
    init(
        _ collection: AnyObject, following rest: [PathComponent], site: DeclarationSite,
        changed: @escaping PathLink.Changed,
        connect: (
            _ onChange:
                @escaping (_ joined: [Element], _ left: [Element], _ author: AnyAuthor) ->
                Void
        ) -> (ConnectionBase, [Element])
    ) {
        self.collection = collection
        self.rest = rest
        self.site = site
        self.changed = changed
        super.init()
        let (connection, contents) = connect { [weak self] joined, left, author in
            guard let self else { return }
            changed((), MembershipChange(self, joined: joined, left: left), author)
        }
        self.connection = connection
        var firsts: [PathWiring] = []
        for (id, change) in netChanges(joined: contents, left: []) {
            if let wiring = join(change.object, id: id, places: change.places, first: true)?.wiring
            {
                firsts.append(wiring)
            }
        }
        problem = FanOutLink.problem(of: firsts)
        isNameSettled = firsts.contains { $0.fitsAfterQuietLevel }
    }

    /// A problem the branches of the elements there at first met, for the path's wiring to
    /// throw or report: a misfit further along a branch, or a name after the wildcard that no
    /// element has (`items.*.zipCod`).
    override var wiringProblem: PathError? { problem }

    /// The first reachable branch's end value when the branches started (a change made since
    /// then arrives as a change of its branch).
    override func takeStart() -> (value: Any?, next: AnyObject?) {
        (endsInJoiningOrder.lazy.compactMap(\.startValue).first, nil)
    }

    override func read() -> Any? { endsInJoiningOrder.lazy.compactMap(\.latest).first }

    /// The branches' ends in the order their elements joined (for the start value and a read,
    /// never for a membership change).
    private var endsInJoiningOrder: [BranchEnd] {
        lock.withLock { branches.values.sorted { $0.joined < $1.joined }.map(\.end) }
    }

    /// The array: observed again, the fan-out over the same array is the same end.
    override var identity: ObjectIdentifier? { collection.map(ObjectIdentifier.init) }

    override var isObserving: Bool { connection.isActive }
    override var isAlive: Bool { collection != nil }
    override var isFanOut: Bool { true }

    override func end() {
        connection.end()
        let ended = lock.withLock {
            isEnded = true
            defer { branches = [:] }
            return branches.values.map(\.wiring)
        }
        for wiring in ended { wiring.stop() }
    }

    /// Applies a change of the collection's elements (while the path's wiring handles it), and
    /// returns the updates it makes (EBN's rule: a path that becomes reachable or unreachable
    /// has changed): one per place that an element whose branch reaches its end joins (from
    /// unreachable to the branch's end value) or leaves (to unreachable). An element that a
    /// change takes out and puts back (a sort, a move) neither joins nor leaves.
    func apply(joined: [Element], left: [Element]) -> [Update<Any?>] {
        var updates: [Update<Any?>] = []
        for (id, change) in netChanges(joined: joined, left: left) {
            if change.places > 0 {
                guard let branch = join(change.object, id: id, places: change.places),
                    let value = branch.end.latest
                else { continue }
                updates += repeatElement(Update(nil, value), count: change.places)
            } else {
                let (value, places) = leave(id: id, places: -change.places)
                guard let value else { continue }
                updates += repeatElement(Update(value, nil), count: places)
            }
        }
        return updates
    }

    /// Per element that is an object, in order of first appearance, the places it joins
    /// (positive) or leaves (negative); none for an element that joins as often as it leaves,
    /// or when nothing follows the elements.
    private func netChanges(joined: [Element], left: [Element]) -> [(
        ObjectIdentifier, (object: AnyObject, places: Int)
    )] {
        guard !rest.isEmpty else { return [] }
        var order: [ObjectIdentifier] = []
        var net: [ObjectIdentifier: (object: AnyObject, places: Int)] = [:]
        func count(_ elements: [Element], _ step: Int) {
            for element in elements {
                guard let object = shape.object(in: element) else { continue }
                let id = ObjectIdentifier(object)
                if let known = net[id] {
                    net[id] = (known.object, known.places + step)
                } else {
                    net[id] = (object, step)
                    order.append(id)
                }
            }
        }
        count(joined, 1)
        count(left, -1)
        return order.compactMap { id in net[id].flatMap { $0.places == 0 ? nil : (id, $0) } }
    }

    /// Adds `places` places of `object`, making its branch if it has none (`first`: for the
    /// elements there at first, whose problems the path throws or reports); returns the
    /// branch (nil once the link ended).
    private func join(
        _ object: AnyObject, id: ObjectIdentifier, places: Int, first: Bool = false
    ) -> (wiring: PathWiring, end: BranchEnd)? {
        let held = lock.withLock { () -> (wiring: PathWiring, end: BranchEnd)?? in
            guard !isEnded else { return .some(nil) }
            guard var branch = branches[id] else { return nil }
            branch.count += places
            branches[id] = branch
            return .some((branch.wiring, branch.end))
        }
        if let held { return held }
        let (wiring, end) = FanOutLink.branch(
            from: object, following: rest, site: site, quietThrough: 0,
            collectingProblems: first, changed: changed, ended: {})
        if !first { settleName(with: wiring) }
        let added = lock.withLock { () -> Bool in
            guard !isEnded else { return false }
            joinCount += 1
            branches[id] = Branch(count: places, wiring: wiring, end: end, joined: joinCount)
            return true
        }
        guard added else {
            wiring.stop()
            return nil
        }
        return (wiring, end)
    }

    /// A name after the wildcard that no element has had, lacked by an element that joins
    /// later, is reported once (a typo); once an element had it, one that lacks it is left out
    /// quietly.
    private func settleName(with branch: PathWiring) {
        guard !isNameSettled else { return }
        if branch.fitsAfterQuietLevel {
            isNameSettled = true
        } else if let typo = branch.quietMisfit {
            isNameSettled = true
            PathDiagnostics.report(typo)
        }
    }

    /// Takes `places` places of the element `id` away (no more than it holds), ending its
    /// branch when none is left; returns the branch's end value before, and the places taken.
    private func leave(id: ObjectIdentifier, places: Int) -> (value: Any?, places: Int) {
        let taken = lock.withLock { () -> (end: BranchEnd, places: Int, ended: PathWiring?)? in
            guard var branch = branches[id] else { return nil }
            let places = min(places, branch.count)
            branch.count -= places
            guard branch.count == 0 else {
                branches[id] = branch
                return (branch.end, places, nil)
            }
            branches[id] = nil
            return (branch.end, places, branch.wiring)
        }
        guard let taken else { return (nil, 0) }
        let value = taken.end.latest
        if let ended = taken.ended {
            taken.end.retire()
            ended.stop()
        }
        return (value, taken.places)
    }
}

/// A change of the elements of a collection that a path fans out over, handed back to its
/// link while the path's wiring handles it.
final class MembershipChange<Element>: EndEvent {
    private weak var link: EachElementLink<Element>?
    private let joined: [Element]
    private let left: [Element]

    init(_ link: EachElementLink<Element>, joined: [Element], left: [Element]) {
        self.link = link
        self.joined = joined
        self.left = left
    }

    /// Applies the change to the branches and publishes what it makes, each update from its
    /// branch's old end value to its new one (see ``EachElementLink/apply(joined:left:)``).
    override func handle(end: PathEnd, from author: AnyAuthor) {
        guard let link else { return }
        for update in link.apply(joined: joined, left: left) {
            end.publishBranch(update.new, old: update.old, from: author)
        }
    }
}
