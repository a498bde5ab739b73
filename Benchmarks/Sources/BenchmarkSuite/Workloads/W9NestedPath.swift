import KeyPathBridge
import Observation

/// W9 nested path `root.a.b.value` observed continuously: 100,000 changes that alternate
/// replacing `root.a.b` (50,000 times) and setting `root.a.b.value` (50,000 times).
///
/// The replacement objects are created before the timed region. Replacement k (operation 2k)
/// installs a `B` whose value is 2k + 1; the set that follows (operation 2k + 1) sets that `B`'s
/// value to 2k + 2. So the end value runs 0 → 1 → 2 → … → 100,000: every operation changes it,
/// and a correct observation delivers 100,000 notifications. Each case's checksum is the number
/// of notifications its handler got (see `Workload.notifications`); Herald's trial fails the run
/// if it is not exactly 100,000.
func w9NestedPath() -> Workload {
    let changes = 100_000
    let replacements = changes / 2
    return Workload(
        id: "W9", summary: "nested path root.a.b.value (replace b / set value)",
        operations: changes, unit: "change",
        notApplicable: [
            .openCombine:
                "OpenCombine has no key-path observation (Combine's `publisher(for:)` is KVO, "
                + "absent on Linux); a path would be subjects chained by hand with "
                + "`switchToLatest`, which BENCHMARKS.md does not list as a W9 peer"
        ],
        notifications: changes,
        cases: [
            Case(.raw) {
                // Hand-made observable classes; the observer re-registers on the new B when A's b
                // is replaced (and notifies if the end value differs), like a path does.
                let counter = Counter()
                let spares = (0..<replacements).map { RawPathB(2 * $0 + 1) }
                let root = RawPathRoot(RawPathA(RawPathB(0)))
                let observation = RawPathObservation(root) { _ in counter.value &+= 1 }
                return {
                    for k in 0..<replacements {
                        let b = spares[k]
                        root.a.b = b
                        b.value = 2 * k + 2
                    }
                    withExtendedLifetime(observation) {}
                    return counter.value
                }
            },
            Case(.herald) {
                // The idiomatic form: `@ObservableVar` properties and an ad hoc path observation
                // owned by the observer (an `ObservedPath` is for holding the path as an object).
                let counter = Counter()
                let spares = (0..<replacements).map { HeraldPathB(2 * $0 + 1) }
                let root = HeraldPathRoot(HeraldPathA(HeraldPathB(0)))
                let observer = HeraldObserver()
                observer.observe(root, \.$a, \.$b, \.$value) { _ in counter.value &+= 1 }
                return {
                    for k in 0..<replacements {
                        let b = spares[k]
                        root.a.b = b
                        b.value = 2 * k + 2
                    }
                    withExtendedLifetime(observer) {}
                    guard counter.value == changes else {
                        fatalError(
                            "W9: Herald delivered \(counter.value) notifications for \(changes) "
                                + "changes of the end value")
                    }
                    return counter.value
                }
            },
            Case(.observation) {
                // Continuous observation by re-arming withObservationTracking in onChange around
                // reading root.a.b.value. onChange runs in willSet, so re-arming reads the old b
                // while b is being replaced: it then tracks the old B's value, and the set of the
                // new B's value that follows goes unnoticed. The count shows what it gets.
                let counter = Counter()
                let spares = (0..<replacements).map { ObservedPathB(2 * $0 + 1) }
                let root = ObservedPathRoot(ObservedPathA(ObservedPathB(0)))
                let observer = ContinuousPathObserver(root, counter: counter)
                observer.arm()
                return {
                    for k in 0..<replacements {
                        let b = spares[k]
                        root.a.b = b
                        b.value = 2 * k + 2
                    }
                    withExtendedLifetime(observer) {}
                    return counter.value
                }
            },
        ])
}

// MARK: Herald

/// The end object of W9's path, `@ObservableVar` as app code declares it.
final class HeraldPathB {
    @ObservableVar var value: Int

    init(_ value: Int) { self.value = value }
}

/// The middle object; replacing its `b` re-wires the path.
final class HeraldPathA {
    @ObservableVar var b: HeraldPathB

    init(_ b: HeraldPathB) { self.b = b }
}

/// The root of the path.
final class HeraldPathRoot {
    @ObservableVar var a: HeraldPathA

    init(_ a: HeraldPathA) { self.a = a }
}

// MARK: Observation

/// The end object of W9's path, tracked by Swift's Observation.
@Observable
final class ObservedPathB {
    var value: Int

    init(_ value: Int) { self.value = value }
}

/// The middle object.
@Observable
final class ObservedPathA {
    var b: ObservedPathB

    init(_ b: ObservedPathB) { self.b = b }
}

/// The root of the path.
@Observable
final class ObservedPathRoot {
    var a: ObservedPathA

    init(_ a: ObservedPathA) { self.a = a }
}

/// `ContinuousObserver` (Peers/ObservationPeer.swift) for a path: re-arms in `onChange`, reading
/// `root.a.b.value` (which tracks `root.a`, `a.b` and `b.value`); counts each `onChange`.
final class ContinuousPathObserver: @unchecked Sendable {
    // Touched only on the benchmark's single thread.
    let root: ObservedPathRoot
    let counter: Counter

    init(_ root: ObservedPathRoot, counter: Counter) {
        self.root = root
        self.counter = counter
    }

    func arm() {
        _ = withObservationTracking {
            root.a.b.value
        } onChange: { [weak self] in
            guard let self else { return }
            self.counter.value &+= 1
            self.arm()
        }
    }
}

// MARK: RAW

/// RAW end object: `didSet` calls its handlers with the new value when it changed. Each handler
/// carries its observation's identity as a token, so the observation can leave the object when
/// the path re-wires.
final class RawPathB {
    var handlers: [(token: ObjectIdentifier, handler: (Int) -> Void)] = []
    var value: Int {
        didSet {
            guard value != oldValue else { return }
            for entry in handlers { entry.handler(value) }
        }
    }

    init(_ value: Int) { self.value = value }
}

/// RAW middle object: `didSet` calls its handlers with (old, new) when `b` is another object.
final class RawPathA {
    var handlers: [(token: ObjectIdentifier, handler: (RawPathB, RawPathB) -> Void)] = []
    var b: RawPathB {
        didSet {
            guard b !== oldValue else { return }
            for entry in handlers { entry.handler(oldValue, b) }
        }
    }

    init(_ b: RawPathB) { self.b = b }
}

/// RAW root: `didSet` calls its handlers with (old, new) when `a` is another object.
final class RawPathRoot {
    var handlers: [(token: ObjectIdentifier, handler: (RawPathA, RawPathA) -> Void)] = []
    var a: RawPathA {
        didSet {
            guard a !== oldValue else { return }
            for entry in handlers { entry.handler(oldValue, a) }
        }
    }

    init(_ a: RawPathA) { self.a = a }
}

/// A hand-written path observation of `root.a.b.value`: it registers on `root`, `root.a` and
/// `root.a.b`; when `a` or `b` is replaced it leaves the old object(s), registers on the new
/// one(s) and calls `receive` if the end value changed. It leaves everything in `deinit`.
final class RawPathObservation {
    private var token: ObjectIdentifier { ObjectIdentifier(self) }
    private weak var root: RawPathRoot?
    private var a: RawPathA
    private var b: RawPathB
    private let receive: (Int) -> Void

    init(_ root: RawPathRoot, receive: @escaping (Int) -> Void) {
        self.root = root
        self.a = root.a
        self.b = root.a.b
        self.receive = receive
        root.handlers.append((token, { [unowned self] _, new in self.rewire(a: new) }))
        attach(a)
        attach(b)
    }

    private func attach(_ a: RawPathA) {
        a.handlers.append((token, { [unowned self] _, new in self.rewire(b: new) }))
    }

    private func attach(_ b: RawPathB) {
        b.handlers.append((token, { [unowned self] value in self.receive(value) }))
    }

    private func detach(_ a: RawPathA) {
        if let index = a.handlers.lastIndex(where: { $0.token == token }) {
            a.handlers.remove(at: index)
        }
    }

    private func detach(_ b: RawPathB) {
        if let index = b.handlers.lastIndex(where: { $0.token == token }) {
            b.handlers.remove(at: index)
        }
    }

    private func rewire(a new: RawPathA) {
        detach(a)
        a = new
        attach(new)
        rewire(b: new.b)
    }

    private func rewire(b new: RawPathB) {
        let old = b.value
        detach(b)
        b = new
        attach(new)
        if new.value != old { receive(new.value) }
    }

    deinit {
        if let root, let index = root.handlers.lastIndex(where: { $0.token == token }) {
            root.handlers.remove(at: index)
        }
        detach(a)
        detach(b)
    }
}
