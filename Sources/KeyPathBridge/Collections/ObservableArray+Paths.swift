import Transforms

// An `ObservableArray`'s parts as path components (EBN's rules): `count`, the element at an
// index (`#3`), the element that was at an index (`3`), any mutation (`*` last) and every
// element (`*` in the middle).

extension ObservableArray: CountedCollection {
    var countWhileLocked: Int { storage.count }

    static func counts(of change: ArrayChange<Element>) -> (old: Int, new: Int) {
        (change.oldCount, change.newCount)
    }

    func attachPart(
        _ part: CollectionPart, receiver: Receiver?, group: ObjectIdentifier?,
        site: DeclarationSite, leadsOn: Bool, changed: @escaping PathLink.Changed, path: String
    ) throws(PathError) -> PathLink {
        switch part {
        case .count:
            try checkGoesOn(leadsOn, from: "count", valueType: "Int", path: path)
            return countLink(receiver: receiver, group: group, site: site, changed: changed)
        case .indexFollowing(let index):
            return try indexLink(
                index, receiver: receiver, group: group, site: site, leadsOn: leadsOn,
                changed: changed, path: path)
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

    /// The link of `#index`: the element at that index, whichever it is, or unreachable past
    /// the end. The array works out, as it mutates, which followed indices now hold another
    /// element (`ArrayChange.followed`).
    private func indexLink(
        _ index: Int, receiver: Receiver?, group: ObjectIdentifier?, site: DeclarationSite,
        leadsOn: Bool, changed: @escaping PathLink.Changed, path: String
    ) throws(PathError) -> PathLink {
        let shape = ObjectShape(Element.self)
        var start: Element?
        let connection = core.connect(
            receiver: receiver, site: site, groupedUnder: group,
            atStart: {
                start = index < storage.count ? storage[index] : nil
                follow(index)
            },
            handler: .messageAndAuthor { change, author in
                // Not generic: the element comes boxed.
                guard let new = change.followed.value(at: index) else { return }
                changed(new, leadsOn ? PathLink.object(in: new) : nil, author)
            })
        let object = leadsOn ? start.flatMap { shape.object(in: $0) } : nil
        if leadsOn, object == nil, start != nil {
            do throws(PathError) {
                try checkGoesOn(leadsOn, from: "#\(index)", value: start, path: path)
            } catch {
                connection.end()
                stopFollowing(index)
                throw error
            }
        }
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
                // It left the array: the link is over (so a path at the root ends) before the
                // path hears of it.
                link?.finish()
                changed(nil, nil, author)
            })
        guard let element = start else {
            connection.end()
            throw .indexOutOfRange(index, count: count, path: path)
        }
        let object = leadsOn ? shape.object(in: element) : nil
        if leadsOn, object == nil {
            do throws(PathError) {
                try checkGoesOn(leadsOn, from: "\(index)", value: element, path: path)
            } catch {
                connection.end()
                throw error
            }
        }
        let made = CollectionPartLink(
            self, connection: connection, start: (element, object),
            current: { [weak self] in
                guard self != nil, follow.isInArray else { return (nil, nil) }
                return (element, shape.object(in: element))
            }, lostWhenUnobserved: true)
        link = made
        return made
    }

    func attachEachElement(
        following rest: [PathComponent], receiver: Receiver?, site: DeclarationSite,
        changed: @escaping PathLink.Changed
    ) -> PathLink {
        EachElementLink(self, following: rest, site: site, changed: changed) { onChange in
            var contents: [Element] = []
            let connection = core.connect(
                receiver: receiver, site: site, atStart: { contents = storage },
                handler: .messageAndAuthor { change, author in
                    onChange(
                        // Closures, not key paths: a generic key path is looked up per call.
                        change.edits.flatMap { $0.newElements },
                        change.edits.flatMap { $0.oldElements },
                        author)
                })
            return (connection, contents)
        }
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

    /// Under the lock: one more link follows `index`.
    private func follow(_ index: Int) {
        let slot = followedIndices.firstPosition(notBelow: index)
        if slot < followedIndices.count, followedIndices[slot] == index {
            followerCounts[slot] += 1
        } else {
            followedIndices.insert(index, at: slot)
            followerCounts.insert(1, at: slot)
        }
    }

    /// An index-following link ended.
    private func stopFollowing(_ index: Int) {
        core.lock.withLock {
            let slot = followedIndices.firstPosition(notBelow: index)
            guard slot < followedIndices.count, followedIndices[slot] == index else { return }
            if followerCounts[slot] > 1 {
                followerCounts[slot] -= 1
            } else {
                followedIndices.remove(at: slot)
                followerCounts.remove(at: slot)
            }
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

    /// Follows the element through `change`; true when it left the array in it. An edit that
    /// takes it out and puts the same element (by `rule`) back, in the same edit or in a later
    /// one of the same change, moves it: it does not leave (sorting, a batch that moves it,
    /// `replaceAll`'s moves).
    func follow<Element>(
        _ change: ArrayChange<Element>, _ element: Element, rule: ChangeRule<Element>
    ) -> Bool {
        guard let start = lock.withLock({ position }) else { return false }
        var current: Int? = start
        for edit in change.edits {
            let isSame = { !rule.isChange(from: element, to: $0) }
            guard let at = current else {
                // Taken out by an earlier edit: put back by this one?
                current = edit.newElements.firstIndex(where: isSame).map { edit.index + $0 }
                continue
            }
            let removed = edit.oldElements.count
            if at < edit.index { continue }
            if at >= edit.index + removed {
                current = at + edit.newElements.count - removed
                continue
            }
            // In the range the edit took out: still there if it was put back.
            current = edit.newElements.firstIndex(where: isSame).map { edit.index + $0 }
        }
        lock.withLock { position = current }
        return current == nil
    }
}
