import HeraldTestSupport
import KeyPathBridge
import Testing

/// EBN's coalescing rules, without EBN's data loss.
@Suite("Coalesced delivery")
struct CoalescingTests {
    final class Person {
        @ObservableVar var firstName = "Ada"
        @ObservableVar var lastName = "Lovelace"
        @ObservableVar var initials = ""
    }

    final class Label: Observer {
        let receiver = Receiver()
        let shown = Recording<String>()
    }

    @Test func aBlockRunsOncePerFlushHoweverManyOfItsPathsChanged() {
        let scheduler = TestScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let person = Person()
        let label = Label()
        label.observeCoalesced(person, \.$firstName, \.$lastName, in: coalescer) { label, person in
            label.shown.append("\(person.firstName) \(person.lastName)")
        }

        person.firstName = "Augusta"
        person.lastName = "King"
        person.firstName = "Ada"
        #expect(label.shown.elements.isEmpty)  // nothing runs before the flush
        #expect(scheduler.pendingCount == 1)  // one flush scheduled for all of it

        scheduler.runTurn()

        #expect(label.shown.elements == ["Ada King"])
    }

    @Test func startingACoalescedObservationRunsNothing() {
        let scheduler = TestScheduler()
        let person = Person()
        let label = Label()
        label.observeCoalesced(person, \.$firstName, in: Coalescer(scheduler: scheduler)) {
            label, _ in label.shown.append("ran")
        }
        scheduler.flush()
        #expect(label.shown.elements.isEmpty)
    }

    @Test func aBlockTriggeredInAFlushRunsInItIfItHasNotRunYet() {
        let scheduler = TestScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let person = Person()
        let log = Recording<String>()
        let initialsKeeper = Label()
        let display = Label()
        // The first block sets a property the second block observes.
        initialsKeeper.observeCoalesced(person, \.$firstName, \.$lastName, in: coalescer) {
            _, person in
            log.append("initials")
            person.initials = "\(person.firstName.prefix(1))\(person.lastName.prefix(1))"
        }
        display.observeCoalesced(person, \.$initials, in: coalescer) { _, person in
            log.append("display \(person.initials)")
        }

        person.firstName = "Grace"
        person.lastName = "Hopper"
        scheduler.runTurn()

        #expect(log.elements == ["initials", "display GH"])  // the same flush
        #expect(scheduler.pendingCount == 0)
    }

    @Test func aBlockWhoseInputsChangeAfterItRanRunsAgainInTheNextFlush() {
        let scheduler = TestScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let person = Person()
        let log = Recording<String>()
        let display = Label()
        let changer = Label()
        display.observeCoalesced(person, \.$firstName, \.$initials, in: coalescer) { _, person in
            log.append("display \(person.firstName) \(person.initials)")
        }
        changer.observeCoalesced(person, \.$lastName, in: coalescer) { _, person in
            log.append("changer")
            person.initials = "changed"  // display already ran in this flush
        }

        person.firstName = "Grace"  // schedules display
        person.lastName = "Hopper"  // schedules changer, after display
        scheduler.runTurn()
        #expect(log.elements == ["display Grace ", "changer"])
        #expect(scheduler.pendingCount == 1)  // EBN would drop this; Herald runs it next flush

        scheduler.runTurn()
        #expect(log.elements == ["display Grace ", "changer", "display Grace changed"])
    }

    @Test func batchCoalescesSynchronously() {
        let scheduler = TestScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let person = Person()
        let label = Label()
        label.observeCoalesced(person, \.$firstName, \.$lastName, in: coalescer) { label, person in
            label.shown.append("\(person.firstName) \(person.lastName)")
        }

        coalescer.batch {
            person.firstName = "Grace"
            person.lastName = "Hopper"
            #expect(label.shown.elements.isEmpty)
        }

        #expect(label.shown.elements == ["Grace Hopper"])  // ran when the batch ended
        #expect(scheduler.pendingCount == 0)
    }

    @Test func observerAndRootAreHeldOnlyFromSchedulingToDelivery() {
        let scheduler = TestScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        var person: Person? = Person()
        var label: Label? = Label()
        let personBox = WeakBox(person!)
        let labelBox = WeakBox(label!)
        let shown = label!.shown
        label?.observeCoalesced(person!, \.$firstName, in: coalescer) { label, person in
            label.shown.append(person.firstName)
        }

        person?.firstName = "Grace"  // scheduled: both are held until the block ran
        person = nil
        label = nil
        #expect(!personBox.isFreed)
        #expect(!labelBox.isFreed)

        scheduler.runTurn()

        #expect(shown.elements == ["Grace"])
        #expect(personBox.isFreed)
        #expect(labelBox.isFreed)
    }

    @Test func aCoalescedBlockFollowsAPathThatRewires() {
        let scheduler = TestScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let cache = UserCache()
        let label = Label()
        label.observeCoalesced(
            cache,
            PropertyPath(\UserCache.$currentUser).appending(\.$address).appending(\.$zipCode),
            PropertyPath(\UserCache.$currentUser).appending(\.$name), in: coalescer
        ) { label, cache in
            let user = cache.currentUser
            label.shown.append("\(user?.name ?? "-") \(user?.address?.zipCode ?? "-")")
        }

        let ann = User(name: "Ann", address: Address(zipCode: "10115"))
        cache.currentUser = ann  // both paths change: one run
        scheduler.runTurn()
        ann.address = Address(zipCode: "20095")
        ann.address?.zipCode = "20097"
        scheduler.runTurn()

        #expect(label.shown.elements == ["Ann 10115", "Ann 20097"])
    }

    @Test func aScheduledBlockStillRunsAfterItsObservationStopped() {
        // EBN's documented rule: stopping does not cancel a block already scheduled.
        let scheduler = TestScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let person = Person()
        let label = Label()
        label.observeCoalesced(person, \.$firstName, in: coalescer) { label, person in
            label.shown.append(person.firstName)
        }
        person.firstName = "Grace"
        label.stopObserving()
        scheduler.flush()
        person.firstName = "Ada"
        scheduler.flush()
        #expect(label.shown.elements == ["Grace"])
    }
}

@Suite("Coalescing concurrency")
struct CoalescingConcurrencyTests {
    final class Counter: Observer, @unchecked Sendable {
        let receiver = Receiver()
        let seen = Recording<Int>()
    }

    @Test func changesFromSeveralThreadsEndInAFlushThatSeesTheFinalValues() {
        let scheduler = TestScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let node = Node()
        let counter = Counter()
        counter.observeCoalesced(node, \Node.value, in: coalescer) { counter, node in
            counter.seen.append(node.value.value)
        }

        concurrently(threads: 3) { thread in
            for index in 1...1_000 {
                if thread == 2 {
                    if index % 100 == 0 { scheduler.runTurn() }
                } else {
                    node.value.value = thread * 10_000 + index
                }
            }
        }
        scheduler.flush()

        #expect(counter.seen.elements.last == node.value.value)
        #expect(scheduler.pendingCount == 0)
    }
}
