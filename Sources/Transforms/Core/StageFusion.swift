import Messaging

// Stage fusion: a chain of stand-alone transforms that costs one messenger hop, not one per stage.
//
// `let chain = title.new().unwrap("Untitled").map { $0.count }` is three observable objects, and
// each would pass every message through its own messenger: take the lock, snapshot, deliver,
// give up the role. When a ``Map`` or a ``Filter`` has exactly one observer, and that observer
// is the link of another `Map` or `Filter`, it *lends* its stage: the two join a *run*, whose
// first link (the *head*) observes the run's *root* (the head's origin) with the stages of every
// member composed, ending in the last member's messenger. Messages then pass the intermediate
// objects without touching their messengers.
//
// Everything a run's stages do happens in turn with the root's deliveries, so they never run
// concurrently with themselves, exactly as without fusion:
// - the composed stages run when the root delivers;
// - a message sent directly into an intermediate object still goes through its messenger, to
//   the link of the member after it (an *absorbed* link), whose connection then routes it into
//   the root's turn (`OriginLink.receiveDirectly`);
// - runs form and dissolve only in the root's turn. Forming also takes the delivering role of
//   every intermediate messenger (or gives up: fusion is an optimization), so that nothing an
//   intermediate delivered before goes on concurrently; dissolving hands each absorbed link its
//   own stage back in turn with its origin's deliveries, and a message routed to the root after
//   that is handed back to the same turn.
//
// A run dissolves, and the runs that are then possible form, whenever one of its members gains
// or loses an observer (the count handler of its messenger), replaces its origin, or dies. An
// intermediate that gains an observer of its own stops lending its stage at once for every
// message its root accepts afterwards, because the dissolution is queued in the root's turn
// before the observation start returns. Stops reach a run at once through the gate of every
// link it passes (`LinkGate`).
//
// All of this state is guarded by one lock (rewiring is rare: observations of transforms start
// and stop, origins are replaced); delivering never takes it. User code never runs while it is
// held: the work that could deliver (giving up a delivering role, running in a turn) happens
// after unlocking.

/// What a ``Map`` or a ``Filter`` gives its link so that it can lend its stage.
@usableFromInline
package struct StageLending {
    /// The transform's own messenger core.
    let core: any DeliveryTurns
    /// Given what receives the transform's messages (a `StageSink<Message>`) and the gate of the
    /// link that receives them, what receives the origin's messages (a
    /// `StageSink<Origin.Message>`): the transform's stage in front of the rest of the run. Made
    /// where the transform is specialized, so the composed stages are too.
    let stage: (_ downstream: AnyObject, _ gate: LinkGate) -> AnyObject

    @usableFromInline
    package init(
        core: any DeliveryTurns,
        stage: @escaping (_ downstream: AnyObject, _ gate: LinkGate) -> AnyObject
    ) {
        self.core = core
        self.stage = stage
    }
}

/// What receives messages of one type in a run: the stages from one link to the run's end.
/// A class, so that a run's parts pass through `StageFusion`'s untyped code without a
/// reabstraction of the closure at every stage (a function value cast from `Any` would get one
/// each way).
@usableFromInline
package final class StageSink<Message> {
    @usableFromInline let receive: (Message, AnyAuthor) -> Void

    @usableFromInline
    init(_ receive: @escaping (Message, AnyAuthor) -> Void) {
        self.receive = receive
    }
}

/// A transform whose link can take part in a run.
protocol StageLendingTransform: AnyObject {
    var fusionLink: any FusionLink { get }
}

/// What `StageFusion` needs of an ``OriginLink``, whatever its origin's type.
protocol FusionLink: AnyObject {
    /// Set for the links of transforms that can lend their stage (`Map`, `Filter`).
    var lending: StageLending? { get }
    /// The run the link belongs to. Guarded by `StageFusion`'s lock.
    var run: FusedRun? { get set }
    /// The gate of the link's current connection.
    var gate: LinkGate { get }
    /// The link of the origin, if the origin is a transform that can lend its stage. The origin
    /// goes into `bag`, so that it is not released under `StageFusion`'s lock.
    func originLink(keeping bag: KeepAlive) -> (any FusionLink)?
    /// The messenger core the link's connection belongs to, while it is connected.
    var originTurns: (any DeliveryTurns)? { get }
    /// What receives the origin's messages without fusion (a `StageSink<Origin.Message>`).
    var forwardSink: AnyObject { get }
    /// What receives the messages sent directly into the origin while the origin lends its stage.
    var routeSink: AnyObject { get }
    /// Replaces the link's connection (on `core`, whose delivering role the caller holds) by one
    /// that passes the origin's messages to `sink`. False if the connection is not on `core` or
    /// has ended. The replaced connection goes into `bag`: its handler may hold the last
    /// reference to a dead transform's closures, and so to what they capture.
    func installWhileDelivering(
        _ sink: AnyObject, on core: any DeliveryTurns, keeping bag: KeepAlive
    ) -> Bool
}

extension FusionLink {
    /// The link this link's transform can lend its stage to: the only observer of the transform,
    /// if that is the link of a transform that can lend its stage too. What it loads goes into
    /// `bag`.
    func soleDownstream(keeping bag: KeepAlive) -> (any FusionLink)? {
        guard let lending, let connection = lending.core.soleConnection else { return nil }
        bag.keep(connection)
        guard let owner = (connection as? any AnyLinkedConnection)?.owner else { return nil }
        bag.keep(owner)
        guard let link = owner as? any FusionLink, link.lending != nil else { return nil }
        return link
    }
}

/// What is loaded under `StageFusion`'s lock, released after it: the last reference to a link or
/// a transform may be the one loaded (another thread let go meanwhile), and its `deinit` ends an
/// observation, whose count handler settles again, taking the lock.
final class KeepAlive {
    private var objects: [AnyObject] = []

    func keep(_ object: AnyObject) { objects.append(object) }
}

/// A chain of links whose stages are fused. Guarded by `StageFusion`'s lock.
final class FusedRun: @unchecked Sendable {
    /// The messenger core of the head's origin, in whose turn everything happens.
    let root: any DeliveryTurns
    /// Head first. Weak: the transforms own their links.
    let members: [WeakFusionLink]
    /// For each member: what receives its origin's messages, through the end of the run.
    let inputs: [AnyObject]
    /// For each member: the gate of its connection when the run formed (a link whose origin is
    /// set again has a new one).
    let gates: [LinkGate]
    var isDissolved = false

    init(
        root: any DeliveryTurns, members: [any FusionLink], inputs: [AnyObject], gates: [LinkGate]
    ) {
        self.root = root
        self.members = members.map(WeakFusionLink.init)
        self.inputs = inputs
        self.gates = gates
    }

    /// Whether the run is exactly `links`, rooted at `root`, over the same connections.
    func isMade(of links: [any FusionLink], rootedAt root: (any DeliveryTurns)?) -> Bool {
        self.root === root && members.count == links.count
            && zip(members, links).allSatisfy { $0.link === $1 }
            && zip(gates, links).allSatisfy { $0 === $1.gate }
    }

    /// The input of `link`, if it is a member.
    func input(of link: any FusionLink) -> AnyObject? {
        members.firstIndex { $0.link === link }.map { inputs[$0] }
    }
}

struct WeakFusionLink {
    weak var link: (any FusionLink)?

    init(_ link: any FusionLink) { self.link = link }
}

/// Forms and dissolves runs (see the comment at the top of this file).
enum StageFusion {
    private final class Guardian: @unchecked Sendable {
        let lock = Lock()
    }
    private static let guardian = Guardian()

    static func withLock<Result>(_ body: () -> Result) -> Result {
        guardian.lock.withLock(body)
    }

    /// The run `link` belongs to, if any.
    static func run(of link: any FusionLink) -> FusedRun? {
        withLock { link.run }
    }

    /// What `link`'s part of `run` does with a message, or nil once the run has dissolved.
    static func input(of link: any FusionLink, in run: FusedRun) -> AnyObject? {
        withLock { run.isDissolved ? nil : run.input(of: link) }
    }

    /// Something about `link` changed (its transform's observers, its origin): dissolve the runs
    /// that no longer fit, or form the run that now can, each in its root's turn. Returns the
    /// links of the longest run through `link` (see `dissolve`).
    @discardableResult
    static func settle(_ link: any FusionLink) -> Set<ObjectIdentifier> {
        let bag = KeepAlive()
        let (next, covered) = withLock { () -> (Plan, Set<ObjectIdentifier>) in
            let wanted = longestRun(through: link, keeping: bag)
            return (plan(for: wanted), Set(wanted.map { ObjectIdentifier($0) }))
        }
        switch next {
        case .nothing:
            break
        case .dissolve(let runs):
            for run in runs { run.root.performInTurn { dissolve(run) } }
        case .form(let members, let root):
            root.performInTurn { form(members, rootedAt: root) }
        }
        _ = bag
        return covered
    }

    private enum Plan {
        case nothing
        case dissolve([FusedRun])
        case form([any FusionLink], root: any DeliveryTurns)
    }

    /// Under the lock: what to do so that `wanted`, the longest run through a link, is the run.
    private static func plan(for wanted: [any FusionLink]) -> Plan {
        let root = wanted.first?.originTurns
        var stale: [FusedRun] = []
        for member in wanted {
            guard let run = member.run, !run.isDissolved,
                !run.isMade(of: wanted, rootedAt: root), !stale.contains(where: { $0 === run })
            else { continue }
            stale.append(run)
        }
        if !stale.isEmpty { return .dissolve(stale) }
        guard wanted.count > 1, let root, wanted.allSatisfy({ $0.run == nil }) else {
            return .nothing
        }
        return .form(wanted, root: root)
    }

    /// Under the lock: the longest chain of links through `link` in which every transform but
    /// the last lends its stage to the next (just `link` if there is none).
    private static func longestRun(
        through link: any FusionLink, keeping bag: KeepAlive
    ) -> [any FusionLink] {
        var upstream: [any FusionLink] = []
        var downstream: [any FusionLink] = []
        var seen: Set<ObjectIdentifier> = [ObjectIdentifier(link)]
        var node = link
        while let up = node.originLink(keeping: bag), up.soleDownstream(keeping: bag) === node,
            seen.insert(ObjectIdentifier(up)).inserted
        {
            upstream.append(up)
            node = up
        }
        node = link
        while let down = node.soleDownstream(keeping: bag),
            down.originLink(keeping: bag) === node, seen.insert(ObjectIdentifier(down)).inserted
        {
            downstream.append(down)
            node = down
        }
        return upstream.reversed() + [link] + downstream
    }

    /// In `root`'s turn: fuses `members`, if they still make the longest run and the delivering
    /// roles of their messengers can be had.
    private static func form(_ members: [any FusionLink], rootedAt root: any DeliveryTurns) {
        var taken: [any DeliveryTurns] = []
        let bag = KeepAlive()
        withLock {
            guard let head = members.first else { return }
            let wanted = longestRun(through: head, keeping: bag)
            guard wanted.count == members.count, zip(wanted, members).allSatisfy({ $0 === $1 }),
                head.originTurns === root, members.allSatisfy({ $0.run == nil })
            else { return }
            // Every intermediate messenger is idle and stays so until the run is in place.
            for member in members.dropLast() {
                guard let core = member.lending?.core, core.beginDeliveringDirectly() else {
                    return
                }
                taken.append(core)
            }
            var inputs: [AnyObject] = []
            inputs.reserveCapacity(members.count)
            inputs.append(members[members.count - 1].forwardSink)
            for index in stride(from: members.count - 2, through: 0, by: -1) {
                inputs.append(members[index].lending!.stage(inputs.last!, members[index + 1].gate))
            }
            inputs.reverse()
            // Absorbed links first: from now on they route what is sent directly into their
            // origins. (Installing fails only if the observed side ended a connection
            // meanwhile; then the routes go again, and the count handler settles anew.)
            var routed = 0
            for index in members.indices.dropFirst() {
                guard
                    members[index].installWhileDelivering(
                        members[index].routeSink, on: taken[index - 1], keeping: bag)
                else { break }
                routed = index
            }
            guard routed == members.count - 1,
                head.installWhileDelivering(inputs[0], on: root, keeping: bag)
            else {
                for index in stride(from: routed, to: 0, by: -1) {
                    _ = members[index].installWhileDelivering(
                        members[index].forwardSink, on: taken[index - 1], keeping: bag)
                }
                return
            }
            let run = FusedRun(
                root: root, members: members, inputs: inputs, gates: members.map(\.gate))
            for member in members { member.run = run }
        }
        for core in taken { core.endDeliveringDirectly() }
        _ = bag
    }

    /// In `run.root`'s turn: gives every member its own stage back, then forms what now can be.
    private static func dissolve(_ run: FusedRun) {
        var absorbed: [(link: any FusionLink, origin: any DeliveryTurns)] = []
        let bag = KeepAlive()
        let members: [any FusionLink] = withLock {
            guard !run.isDissolved else { return [] }
            run.isDissolved = true
            let members = run.members.compactMap(\.link)
            for member in members where member.run === run { member.run = nil }
            if let head = run.members.first?.link {
                _ = head.installWhileDelivering(head.forwardSink, on: run.root, keeping: bag)
            }
            for index in run.members.indices.dropFirst() {
                guard let link = run.members[index].link,
                    let origin = run.members[index - 1].link?.lending?.core
                else { continue }
                absorbed.append((link, origin))
            }
            return members
        }
        // Each absorbed link takes its stage back in turn with its origin's deliveries, unless
        // it joined another run meanwhile.
        for (link, origin) in absorbed {
            origin.performInTurn {
                let bag = KeepAlive()
                withLock {
                    guard link.run == nil else { return }
                    _ = link.installWhileDelivering(link.forwardSink, on: origin, keeping: bag)
                }
                _ = bag
            }
        }
        // Form what now can, each run once (settling every member would walk every run once
        // per member).
        var covered: Set<ObjectIdentifier> = []
        _ = bag
        for member in members where !covered.contains(ObjectIdentifier(member)) {
            covered.formUnion(settle(member))
        }
    }
}
