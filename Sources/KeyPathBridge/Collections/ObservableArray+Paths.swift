import Transforms

// An `ObservableArray`'s parts as path components (EBN's rules): `count`, the element at an
// index (`#3`), the element that was at an index (`3`), any mutation (`*` last) and every
// element (`*` in the middle).

extension ObservableArray: PathCollection {
    func attachPart(
        _ part: CollectionPart, receiver: Receiver?, group: ObjectIdentifier?,
        site: DeclarationSite, leadsOn: Bool, changed: @escaping PathLink.Changed, path: String
    ) throws(PathError) -> PathLink {
        switch part {
        case .count:
            return countLink(receiver: receiver, group: group, site: site, changed: changed)
        case .indexFollowing(let index):
            return indexLink(
                index, receiver: receiver, group: group, site: site, leadsOn: leadsOn,
                changed: changed)
        case .objectFollowing(let index):
            return try elementLink(
                index, receiver: receiver, group: group, site: site, leadsOn: leadsOn,
                changed: changed, path: path)
        case .anyMutation:
            return mutationLink(receiver: receiver, group: group, site: site, changed: changed)
        case .key(let name):
            throw .unknownProperty(
                name, type: String(describing: Self.self), path: path,
                known: ["count", "#0", "0", "*"])
        }
    }

    /// The link of `count`: an update only when the count changes.
    private func countLink(
        receiver: Receiver?, group: ObjectIdentifier?, site: DeclarationSite,
        changed: @escaping PathLink.Changed
    ) -> PathLink {
        let (connection, start) = connectReadingCount(
            receiver: receiver, group: group, site: site
        ) { change, author in
            let newCount = change.newCount
            guard newCount != change.oldCount else { return }
            changed(newCount, nil, author)
        }
        return CollectionPartLink(
            self, connection: connection, start: (start, nil),
            current: { [weak self] in (self?.count, nil) })
    }

    /// The link of `#index`: the element at that index, whichever it is, or unreachable past
    /// the end. The array works out, as it mutates, which followed indices now hold another
    /// element (``ArrayChange/followedElements``).
    private func indexLink(
        _ index: Int, receiver: Receiver?, group: ObjectIdentifier?, site: DeclarationSite,
        leadsOn: Bool, changed: @escaping PathLink.Changed
    ) -> PathLink {
        let shape = ObjectShape(Element.self)
        var start: Element?
        let connection = core.connect(
            receiver: receiver, site: site, groupedUnder: group,
            atStart: {
                start = index < storage.count ? storage[index] : nil
                indexFollowers[index, default: 0] += 1
            },
            handler: .messageAndAuthor { change, author in
                guard let new = change.followedElements[index] else { return }
                changed(new, leadsOn ? new.flatMap { shape.object(in: $0) } : nil, author)
            })
        let object = leadsOn ? start.flatMap { shape.object(in: $0) } : nil
        return CollectionPartLink(
            self, connection: connection, start: (start, object),
            current: { [weak self] in
                let element = self?.element(at: index)
                return (element, element.flatMap { shape.object(in: $0) })
            },
            write: { [weak self] value, author in
                guard let self, let value = value as? Element else { return false }
                return self.replaceIfPresent(at: index, with: value, as: author)
            },
            ended: { [weak self] in self?.stopFollowing(index) })
    }

    /// The link of `index` (object-following): the element there when the observation starts,
    /// followed through inserts and removes before it, until it leaves the array; then the
    /// part is unreachable for good, and the link ends (EBN's rule).
    private func elementLink(
        _ index: Int, receiver: Receiver?, group: ObjectIdentifier?, site: DeclarationSite,
        leadsOn: Bool, changed: @escaping PathLink.Changed, path: String
    ) throws(PathError) -> PathLink {
        let shape = ObjectShape(Element.self)
        let rule = changeRule
        var start: Element?
        var count = 0
        let follow = ElementFollowing(position: index)
        weak var link: CollectionPartLink?
        let connection = core.connect(
            receiver: receiver, site: site, groupedUnder: group,
            atStart: {
                count = storage.count
                start = index >= 0 && index < count ? storage[index] : nil
            },
            handler: .messageAndAuthor { change, author in
                guard let element = start, follow.follow(change, element, rule: rule) else {
                    return
                }
                changed(nil, nil, author)  // it left the array
                link?.finish()
            })
        guard let element = start else {
            connection.end()
            throw .indexOutOfRange(index, count: count, path: path)
        }
        let made = CollectionPartLink(
            self, connection: connection,
            start: (element, leadsOn ? shape.object(in: element) : nil),
            current: { [weak self] in
                guard self != nil, follow.isInArray else { return (nil, nil) }
                return (element, shape.object(in: element))
            })
        link = made
        return made
    }

    /// The link of `*` as the last component: every change message is an update (the value
    /// is the change; at first, a change with no edits).
    private func mutationLink(
        receiver: Receiver?, group: ObjectIdentifier?, site: DeclarationSite,
        changed: @escaping PathLink.Changed
    ) -> PathLink {
        let (connection, start) = connectReadingCount(
            receiver: receiver, group: group, site: site
        ) { change, author in
            changed((), BranchChange(value: change), author)
        }
        let empty = ArrayChange<Element>(edits: [], oldCount: start)
        return CollectionPartLink(
            self, connection: connection, start: (empty, nil),
            current: { [weak self] in
                (self.map { ArrayChange<Element>(edits: [], oldCount: $0.count) }, nil)
            })
    }

    /// Observes the array's changes and reads the count it starts from, in one step.
    private func connectReadingCount(
        receiver: Receiver?, group: ObjectIdentifier?, site: DeclarationSite,
        receive: @escaping (ArrayChange<Element>, AnyAuthor) -> Void
    ) -> (ConnectionBase, Int) {
        var count = 0
        let connection = core.connect(
            receiver: receiver, site: site, groupedUnder: group,
            atStart: { count = storage.count }, handler: .messageAndAuthor(receive))
        return (connection, count)
    }

    func attachEachElement(
        following rest: [PathComponent], receiver: Receiver?, site: DeclarationSite,
        changed: @escaping PathLink.Changed
    ) -> PathLink {
        EachElementLink(self, following: rest, receiver: receiver, site: site, changed: changed)
    }

    /// The element at `index`, or nil past the end.
    func element(at index: Int) -> Element? {
        core.lock.withLock { index < storage.count ? storage[index] : nil }
    }

    /// Replaces the element at `index` if there is one (a binding's write to `#index`).
    private func replaceIfPresent(at index: Int, with value: Element, as author: AnyAuthor)
        -> Bool
    {
        var present = false
        replace(as: author) { count in
            present = index < count
            return present ? (index..<(index + 1), [value]) : (count..<count, [])
        }
        return present
    }

    /// An index-following link ended.
    private func stopFollowing(_ index: Int) {
        core.lock.withLock {
            guard let followers = indexFollowers[index] else { return }
            indexFollowers[index] = followers > 1 ? followers - 1 : nil
        }
    }
}

/// Where an object-following element is now, worked out from each change (the changes of one
/// array arrive one at a time, in order).
final class ElementFollowing: @unchecked Sendable {
    private let lock = Lock()
    @exclusivity(unchecked) private var position: Int?

    init(position: Int) {
        self.position = position
    }

    /// Whether the element is still in the array.
    var isInArray: Bool { lock.withLock { position != nil } }

    /// Follows the element through `change`; true when it left the array in it. A replacement
    /// that puts the same element back (by `rule`) in the range it replaced keeps it (sorting
    /// moves it; it does not leave).
    func follow<Element>(
        _ change: ArrayChange<Element>, _ element: Element, rule: ChangeRule<Element>
    ) -> Bool {
        guard var current = lock.withLock({ position }) else { return false }
        for edit in change.edits {
            let removed = edit.oldElements.count
            if current < edit.index { continue }
            if current >= edit.index + removed {
                current += edit.newElements.count - removed
                continue
            }
            // In the range the edit took out: still there if it was put back.
            guard
                let offset = edit.newElements.firstIndex(where: {
                    !rule.isChange(from: element, to: $0)
                })
            else {
                lock.withLock { position = nil }
                return true
            }
            current = edit.index + offset
        }
        lock.withLock { position = current }
        return false
    }
}

/// The fan-out over an array's elements (`items.*.name`): one branch per element that is an
/// object, following the rest of the path from it. An element held twice is one branch, kept
/// while the element is held at least once. Membership changes reach the path's wiring as
/// events of its end link (``MembershipChange``), so they are handled one at a time with the
/// branches' changes.
final class EachElementLink<Element>: PathLink {
    private weak var array: ObservableArray<Element>?
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

    init(
        _ array: ObservableArray<Element>, following rest: [PathComponent], receiver: Receiver?,
        site: DeclarationSite, changed: @escaping PathLink.Changed
    ) {
        self.array = array
        self.rest = rest
        self.site = site
        self.changed = changed
        super.init()
        var contents: [Element] = []
        connection = array.core.connect(
            receiver: receiver, site: site,
            atStart: { contents = array.storage },
            handler: .messageAndAuthor { [weak self] change, author in
                guard let self else { return }
                changed((), MembershipChange(self, change), author)
            })
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
    override var identity: ObjectIdentifier? { array.map(ObjectIdentifier.init) }

    override var isObserving: Bool { connection.isActive }
    override var isAlive: Bool { array != nil }
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

    /// Applies a change of the array's elements (while the path's wiring handles it).
    func apply(_ change: ArrayChange<Element>) {
        // Joins first: an element that an edit takes out and puts back (a sort) keeps its
        // branch.
        for edit in change.edits {
            join(edit.newElements)
            leave(edit.oldElements)
        }
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

/// A change of the elements of an array that a path fans out over, handed back to its link
/// while the path's wiring handles it.
final class MembershipChange<Element>: EndEvent {
    private weak var link: EachElementLink<Element>?
    private let change: ArrayChange<Element>

    init(_ link: EachElementLink<Element>, _ change: ArrayChange<Element>) {
        self.link = link
        self.change = change
    }

    /// Applies the change to the branches. When that makes the path unreachable (no branch
    /// reaches its end any more) or reachable again, the end value becomes nil, or the first
    /// reachable branch's.
    override func handle(end: PathEnd, from author: AnyAuthor) {
        guard let link else { return }
        let wasReachable = link.read() != nil
        link.apply(change)
        let now = link.read()
        guard (now != nil) != wasReachable else { return }
        end.publish(now, from: author, forced: false, rule: nil)
    }
}
