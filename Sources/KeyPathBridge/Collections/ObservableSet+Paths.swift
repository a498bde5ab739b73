import Transforms

// An `ObservableSet`'s parts as path components: a member (`tags.swift`: whether it is there),
// `count`, any mutation (`*` last) and every member (`*` in the middle).

extension ObservableSet: CountedCollection {
    var countWhileLocked: Int { storage.count }

    static func counts(of change: SetChange<Element>) -> (old: Int, new: Int) {
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
        case .anyMutation:
            return mutationLink(receiver: receiver, group: group, site: site, changed: changed)
        case .key(let name):
            try checkGoesOn(leadsOn, from: name, valueType: "Bool", path: path)
            return membershipLink(
                try key(name, as: Element.self, on: Self.self, path: path), receiver: receiver,
                group: group, site: site,
                changed: changed)
        case .objectFollowing(let number):
            try checkGoesOn(leadsOn, from: "\(number)", valueType: "Bool", path: path)
            return membershipLink(
                try key(String(number), as: Element.self, on: Self.self, path: path),
                receiver: receiver, group: group,
                site: site, changed: changed)
        case .indexFollowing(let index):
            throw .unknownProperty(
                "#\(index)", type: String(describing: Self.self), path: path,
                known: ["count", "*", "a member"])
        }
    }

    /// The link of one member: whether it is in the set. It fires only when the member is
    /// really inserted or removed.
    func membershipLink(
        _ member: Element, receiver: Receiver?, group: ObjectIdentifier?, site: DeclarationSite,
        changed: @escaping PathLink.Changed
    ) -> PathLink {
        var start = false
        let connection = core.connect(
            receiver: receiver, site: site, groupedUnder: group,
            atStart: { start = storage.contains(member) },
            handler: .messageAndAuthor { change, author in
                if change.inserted.contains(member) {
                    changed(true, nil, author)
                } else if change.removed.contains(member) {
                    changed(false, nil, author)
                }
            })
        return CollectionPartLink(
            self, connection: connection, start: (start, nil),
            current: { [weak self] in (self?.contains(member), nil) })
    }

    func attachEachElement(
        following rest: [PathComponent], receiver: Receiver?, site: DeclarationSite,
        changed: @escaping PathLink.Changed
    ) -> PathLink {
        EachElementLink<Element>(self, following: rest, site: site, changed: changed) {
            onChange in
            var contents: [Element] = []
            let connection = core.connect(
                receiver: receiver, site: site, atStart: { contents = Array(storage) },
                handler: .messageAndAuthor { change, author in
                    onChange(Array(change.inserted), Array(change.removed), author)
                })
            return (connection, contents)
        }
    }
}

extension PathComponent {
    /// The component of one member of the set it is attached to (typed paths).
    @usableFromInline
    init<Element: Hashable>(member: Element, of _: ObservableSet<Element>.Type) {
        nameBox = ComponentName("\(member)")
        isOwnedByReceiver = true
        attach = { object, receiver, group, site, _, changed in
            // The typed `PropertyPath` only ever passes such a set here.
            unsafeDowncast(object, to: ObservableSet<Element>.self).membershipLink(
                member, receiver: receiver, group: group, site: site, changed: changed)
        }
    }
}

// Typed paths into observable sets.
extension PropertyPath {
    /// A path to a set that a `let` property of `Root` holds.
    public init<Element>(_ set: KeyPath<Root, ObservableSet<Element>>)
    where Value == ObservableSet<Element> {
        self.init(components: [PathComponent(constant: set)])
    }

    /// This path extended by whether `member` is in the set: it changes only when the member
    /// is really inserted or removed.
    ///
    /// ```swift
    /// observer.observe(post, PropertyPath(\Post.tags).appendingContains("swift")) { tagged in }
    /// ```
    @inlinable
    public func appendingContains<Element>(_ member: Element) -> PropertyPath<Root, Bool>
    where Value == ObservableSet<Element> {
        PropertyPath<Root, Bool>(
            components: components + [
                PathComponent(member: member, of: ObservableSet<Element>.self)
                    .endingDirectly(TypedHandlers<Bool>())
            ])
    }

    /// This path extended by the set's count: an update only when the count changes.
    @inlinable
    public func appendingCount<Element>() -> PropertyPath<Root, Int>
    where Value == ObservableSet<Element> {
        PropertyPath<Root, Int>(
            components: components + [
                PathComponent(part: .count, named: "count").endingDirectly(TypedHandlers<Int>())
            ])
    }

    /// This path extended by any mutation of the set: every change message is an update whose
    /// value is the change (at first, a change without members).
    public func appendingChanges<Element>() -> PropertyPath<Root, SetChange<Element>>
    where Value == ObservableSet<Element> {
        PropertyPath<Root, SetChange<Element>>(
            components: components + [PathComponent(part: .anyMutation, named: "*")])
    }

    /// This path extended by a fan-out over the set's members (follow it with a property of
    /// the members); the rules are those of ``appendingEachElement()``.
    public func appendingEachMember<Element: AnyObject & Hashable>() -> PropertyPath<Root, Element>
    where Value == ObservableSet<Element> {
        PropertyPath<Root, Element>(
            components: components + [
                PathComponent(fanningOut: { PathComponent(eachElementFollowing: $0) })
            ])
    }
}
