import HeraldTestSupport
import Messaging
import Testing

/// The index of a receiver's observations (`OwnedConnections`), tested as a plain value, without
/// threads: a seeded run of random operations against a model, with the invariants checked after
/// each.
@Suite("A receiver's observations, indexed by messenger")
struct OwnedConnectionsTests {
    /// A connection to `messenger` (registered with it, owned by no receiver).
    func connection(to messenger: Messenger<Int>) -> ConnectionBase {
        messenger.core.connect(receiver: nil, site: DeclarationSite(), handler: .message { _ in })
    }

    @Test func oneConnectionIsHeldWithoutATable() {
        let messenger = Messenger<Int>()
        var owned = OwnedConnections()
        let only = connection(to: messenger)
        owned.insert(only)
        #expect(owned.count == 1)
        #expect(owned.containsActive(observing: ObjectIdentifier(messenger.core)))
        #expect(owned.invariantViolation == nil)
        let removed = owned.remove(only)
        let removedAgain = owned.remove(only)
        #expect(removed)
        #expect(!removedAgain, "removing it again finds nothing")
        #expect(owned.count == 0)
        #expect(!owned.containsActive)
    }

    @Test func removingAConnectionThatIsNotHeldChangesNothing() {
        let messenger = Messenger<Int>()
        var owned = OwnedConnections()
        let held = [
            connection(to: messenger), connection(to: messenger), connection(to: Messenger()),
        ]
        for each in held { owned.insert(each) }
        let sameMessenger = owned.remove(connection(to: messenger))
        let otherMessenger = owned.remove(connection(to: Messenger()))
        #expect(!sameMessenger)
        #expect(!otherMessenger)
        #expect(owned.count == 3)
        #expect(owned.invariantViolation == nil)
    }

    @Test func removeAllObservingOneMessengerTakesExactlyItsConnections() {
        let first = Messenger<Int>()
        let second = Messenger<Int>()
        var owned = OwnedConnections()
        let ofFirst = (0..<3).map { _ in connection(to: first) }
        let ofSecond = connection(to: second)
        for each in ofFirst { owned.insert(each) }
        owned.insert(ofSecond)

        var taken: [ObjectIdentifier] = []
        owned.removeAll(observing: ObjectIdentifier(first.core)).forEachConnection {
            taken.append(ObjectIdentifier($0))
        }

        #expect(Set(taken) == Set(ofFirst.map(ObjectIdentifier.init)))
        #expect(owned.count == 1)
        let takenAgain = owned.removeAll(observing: ObjectIdentifier(first.core))
        #expect(takenAgain.isEmpty)
        #expect(owned.invariantViolation == nil)
    }

    /// The table's key hashes object addresses itself: equal keys hash alike, and addresses
    /// (aligned, often a fixed stride apart) spread over a table's buckets about as well as
    /// random numbers would.
    @Test func coreKeysHashConsistentlyAndSpreadOverBuckets() {
        let objects = (0..<4096).map { _ in Messenger<Int>() }
        let keys = objects.map { OwnedConnections.CoreKey(ObjectIdentifier($0)) }
        for seed in [0, 0x5bd1_e995, -1] {
            #expect(
                keys.allSatisfy {
                    $0._rawHashValue(seed: seed)
                        == OwnedConnections.CoreKey($0.identity)._rawHashValue(seed: seed)
                })
            // 4,096 keys over 4,096 buckets: random hashes fill about 63% of them (1 - 1/e).
            let buckets = Set(keys.map { $0._rawHashValue(seed: seed) & 4095 })
            #expect(buckets.count > 2400, "seed \(seed): \(buckets.count) buckets")
        }
        #expect(Set(keys).count == keys.count)
    }

    @Test func aStoppedConnectionIsHeldButNotActive() {
        let messenger = Messenger<Int>()
        let other = Messenger<Int>()
        var owned = OwnedConnections()
        let stopped = connection(to: messenger)
        owned.insert(stopped)
        owned.insert(connection(to: other))
        stopped.detachFromMessenger()
        #expect(!owned.containsActive(observing: ObjectIdentifier(messenger.core)))
        #expect(owned.containsActive)
        #expect(owned.count == 2)
    }

    /// 20,000 random operations on connections to 12 messengers (several per messenger), checked
    /// against a model after each one.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomOperationsMatchAModel(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let messengers = (0..<12).map { _ in Messenger<Int>() }
        var owned = OwnedConnections()
        // Keyed by the connection's identity, which is unique while the model holds it.
        var model: [ObjectIdentifier: (connection: ConnectionBase, messenger: Int, stopped: Bool)] =
            [:]
        func core(_ index: Int) -> ObjectIdentifier { ObjectIdentifier(messengers[index].core) }

        for step in 0..<20_000 {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<45:
                let index = Int.random(in: 0..<messengers.count, using: &random)
                let added = connection(to: messengers[index])
                owned.insert(added)
                model[ObjectIdentifier(added)] = (added, index, false)
            case 45..<75:
                guard let (key, entry) = model.randomElement(using: &random) else { continue }
                let removed = owned.remove(entry.connection)
                #expect(removed, "step \(step)")
                model[key] = nil
            case 75..<80:
                let removed = owned.remove(connection(to: messengers[0]))
                #expect(!removed, "step \(step)")
            case 80..<90:
                let index = Int.random(in: 0..<messengers.count, using: &random)
                var taken: Set<ObjectIdentifier> = []
                owned.removeAll(observing: core(index)).forEachConnection {
                    taken.insert(ObjectIdentifier($0))
                }
                let expected = Set(model.filter { $0.value.messenger == index }.keys)
                #expect(taken == expected, "step \(step)")
                for key in expected { model[key] = nil }
            case 90..<93:
                guard let (key, entry) = model.randomElement(using: &random) else { continue }
                entry.connection.detachFromMessenger()
                model[key]?.stopped = true
            case 93:
                var taken: Set<ObjectIdentifier> = []
                owned.removeAll().forEachConnection { taken.insert(ObjectIdentifier($0)) }
                #expect(taken == Set(model.keys), "step \(step)")
                model = [:]
            default:
                for index in messengers.indices {
                    let expected = model.values.contains { $0.messenger == index && !$0.stopped }
                    #expect(
                        owned.containsActive(observing: core(index)) == expected, "step \(step)")
                }
            }
            #expect(owned.count == model.count, "step \(step)")
            if let violation = owned.invariantViolation {
                Issue.record("step \(step): \(violation)")
                return
            }
        }
    }
}
