import OpenCombine
import Transforms

/// W8 author-filtered shared state: 10 collaborators observe one shared Int variable, ignoring
/// their own writes, and write it round-robin; 100,000 writes (every write is a change), each
/// delivered to the 9 other collaborators. Reported per write and per delivery.
func w8AuthorFilteredSharedState() -> Workload {
    let collaborators = 10
    let rounds = 10_000
    let writes = rounds * collaborators
    return Workload(
        id: "W8", summary: "author-filtered shared state (10 collaborators)", operations: writes,
        unit: "write", perPart: (suffix: "-per-delivery", parts: collaborators - 1),
        notApplicable: [
            .observation:
                "Observation has no authors: a change does not say who made it, so there is nothing to filter"
        ],
        targets: [.time(atMost: 0.5, of: .openCombine), .time(atMost: 2, of: .raw)],
        cases: [
            Case(.raw) {
                // Closures receive (old, new, author) and skip their own author by identity.
                let counter = Counter()
                let shared = RawAuthoredVariable(0)
                let all = (0..<collaborators).map { _ in RawCollaborator() }
                for collaborator in all {
                    let me = ObjectIdentifier(collaborator)
                    shared.handlers.append { _, new, author in
                        if ObjectIdentifier(author) != me { counter.value &+= new }
                    }
                }
                return {
                    var value = 0
                    for _ in 0..<rounds {
                        for collaborator in all {
                            value &+= 1
                            shared.set(value, as: collaborator)
                        }
                    }
                    return counter.value
                }
            },
            Case(.herald) {
                let counter = Counter()
                let shared = Var(0)
                let all = (0..<collaborators).map { _ in
                    HeraldCollaborator(shared: shared, counter: counter)
                }
                return {
                    var value = 0
                    for _ in 0..<rounds {
                        for collaborator in all {
                            value &+= 1
                            shared.set(value, as: collaborator)
                        }
                    }
                    withExtendedLifetime(all) {}
                    return counter.value
                }
            },
            Case(.openCombine) {
                // A CurrentValueSubject of (value, author): shared state that says who wrote it.
                // The filter compares identities (what `$0.author !== self` compiles to) without
                // capturing the collaborator, which owns the subscription. Subscribing delivers
                // the initial (0, nobody) outside the timed region.
                let counter = Counter()
                let nobody = CombineObserver()
                let shared = CurrentValueSubject<(value: Int, author: AnyObject), Never>(
                    (0, nobody))
                let all = (0..<collaborators).map { _ in CombineObserver() }
                for collaborator in all {
                    let me = ObjectIdentifier(collaborator)
                    shared.filter { ObjectIdentifier($0.author) != me }
                        .sink { counter.value &+= $0.value }
                        .store(in: &collaborator.cancellables)
                }
                return {
                    var value = 0
                    for _ in 0..<rounds {
                        for collaborator in all {
                            value &+= 1
                            shared.value = (value, collaborator)
                        }
                    }
                    withExtendedLifetime((all, nobody)) {}
                    return counter.value
                }
            },
        ])
}

/// A collaborator on shared state: observes it, ignoring its own writes.
private final class HeraldCollaborator: Observer {
    let receiver = Receiver()

    init(shared: Var<Int>, counter: Counter) {
        observe(shared).notFrom(self) { update in counter.value &+= update.new }
    }
}

/// RAW for shared state with authors: a final class whose `set(_:as:)` calls the closures with
/// (old, new, author).
private final class RawAuthoredVariable {
    var handlers: [(Int, Int, AnyObject) -> Void] = []
    private(set) var value: Int

    init(_ value: Int) { self.value = value }

    @inline(__always)
    func set(_ newValue: Int, as author: AnyObject) {
        let oldValue = value
        value = newValue
        for handler in handlers { handler(oldValue, newValue, author) }
    }
}

/// A RAW collaborator: only its identity matters.
private final class RawCollaborator {}
