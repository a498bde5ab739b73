import Transforms

/// The fan-out over a collection's elements (`items.*.name`; a dictionary's values): one
/// branch per element that is an object, following the rest of the path from it. An element held twice is one branch, kept
/// while the element is held at least once. Membership changes reach the path's wiring as
/// events of its end link (``MembershipChange``), so they are handled one at a time with the
/// branches' changes.
final class EachElementLink<Element>: PathLink {
    private weak var collection: AnyObject?
    private let rest: [PathComponent]
    private let site: DeclarationSite
    private let changed: PathLink.Changed
    private let shape = ObjectShape(Element.self)
    private var connection: ConnectionBase!
    private let lock = Lock()
    /// The branches by element identity, with how many times the element is held. Changed only
    /// while the path's wiring handles an event (and emptied by `end()`).
    @exclusivity(unchecked) private var branches:
        [ObjectIdentifier: (count: Int, wiring: PathWiring, end: BranchEnd)] = [:]
    /// The elements in order of joining, for the start value (the first reachable branch's).
    @exclusivity(unchecked) private var order: [ObjectIdentifier] = []
    @exclusivity(unchecked) private var isEnded = false

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
        join(contents)
    }

    /// The first reachable branch's end value when the branches started (a change made since
    /// then arrives as a change of its branch).
    override func takeStart() -> (value: Any?, next: AnyObject?) {
        (orderedEnds.lazy.compactMap(\.startValue).first, nil)
    }

    override func read() -> Any? { orderedEnds.lazy.compactMap(\.latest).first }

    private var orderedEnds: [BranchEnd] {
        lock.withLock { order.compactMap { branches[$0]?.end } }
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
            defer {
                branches = [:]
                order = []
            }
            return branches.values.map(\.wiring)
        }
        for wiring in ended { wiring.stop() }
    }

    /// Applies a change of the collection's elements (while the path's wiring handles it).
    /// Joins first: an element that a change takes out and puts back (a sort) keeps its branch.
    func apply(joined: [Element], left: [Element]) {
        join(joined)
        leave(left)
    }

    private func join(_ elements: [Element]) {
        guard !rest.isEmpty else { return }  // nothing to follow from the elements
        for element in elements {
            guard let object = shape.object(in: element) else { continue }
            let id = ObjectIdentifier(object)
            let isNew = lock.withLock { () -> Bool? in
                guard !isEnded else { return nil }
                guard let branch = branches[id] else { return true }
                branches[id] = (branch.count + 1, branch.wiring, branch.end)
                return false
            }
            guard isNew == true else { continue }
            let (wiring, end) = FanOutLink.branch(
                from: object, following: rest, site: site, quietThrough: 0,
                collectingProblems: false,
                changed: changed,
                ended: {})
            let added = lock.withLock { () -> Bool in
                guard !isEnded else { return false }
                branches[id] = (1, wiring, end)
                order.append(id)
                return true
            }
            if !added { wiring.stop() }
        }
    }

    private func leave(_ elements: [Element]) {
        for element in elements {
            guard let object = shape.object(in: element) else { continue }
            let id = ObjectIdentifier(object)
            let left = lock.withLock { () -> PathWiring? in
                guard let branch = branches[id] else { return nil }
                guard branch.count == 1 else {
                    branches[id] = (branch.count - 1, branch.wiring, branch.end)
                    return nil
                }
                branches[id] = nil
                order.removeAll { $0 == id }
                branch.end.retire()
                return branch.wiring
            }
            left?.stop()
        }
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

    /// Applies the change to the branches. When that makes the path unreachable (no branch
    /// reaches its end any more) or reachable again, the end value becomes nil, or the first
    /// reachable branch's.
    override func handle(end: PathEnd, from author: AnyAuthor) {
        guard let link else { return }
        let wasReachable = link.read() != nil
        link.apply(joined: joined, left: left)
        let now = link.read()
        guard (now != nil) != wasReachable else { return }
        end.publish(now, from: author, forced: false, rule: nil)
    }
}
