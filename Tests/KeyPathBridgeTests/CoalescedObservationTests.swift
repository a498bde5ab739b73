import HeraldTestSupport
import KeyPathBridge
import Testing

/// The handle `observeCoalesced` returns: one coalesced observation stopped alone (whole or one
/// of its paths), run and scheduled by hand (EBN's `stopTelling:aboutChangesTo:`, `execute`,
/// `schedule`).
@Suite("Coalesced observations: the handle")
struct CoalescedObservationTests {
    final class Person {
        @ObservableVar var firstName = "Ada"
        @ObservableVar var lastName = "Lovelace"
        @ObservableVar var address: Address? = Address(zipCode: "10115")
    }

    final class Label: Observer {
        let receiver = Receiver()
        let runs = Recording<String>()
    }

    /// A label showing a person's first name through a coalesced observation on a test
    /// scheduler.
    struct FirstNameShown {
        let scheduler = TestMessageScheduler()
        let person = Person()
        let label = Label()
        let observation: CoalescedObservation

        init() {
            observation = label.observeCoalesced(
                person, \.$firstName, in: Coalescer(scheduler: scheduler)
            ) { label, person in label.runs.append(person.firstName) }
        }
    }

    @Test func stoppingOneCoalescedObservationLeavesTheOthersOnTheSameRoot() {
        let scheduler = TestMessageScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let person = Person()
        let label = Label()
        let first = label.observeCoalesced(person, \.$firstName, in: coalescer) { label, _ in
            label.runs.append("first")
        }
        label.observeCoalesced(person, \.$firstName, in: coalescer) { label, _ in
            label.runs.append("second")
        }

        first.stop()
        person.firstName = "Grace"
        scheduler.flush()

        #expect(label.runs.elements == ["second"])
        #expect(!first.isActive)
        #expect(label.isObserving(person))  // the second one
    }

    /// Every kind of path a coalesced observation holds stops alone: a property of the root, a
    /// path that re-wires, and a string path.
    @Test(arguments: [0, 1, 2])
    func stoppingOnePathLeavesTheBlockOnTheOthers(stopped: Int) throws {
        let scheduler = TestMessageScheduler()
        let coalescer = Coalescer(scheduler: scheduler)
        let person = Person()
        let label = Label()
        let observation = label.observeCoalesced(
            person, PropertyPath(\Person.$firstName),
            PropertyPath(\Person.$address).appending(\.$zipCode),
            try PropertyPath<Person, Any>("lastName"), in: coalescer
        ) { label, _ in label.runs.append("ran") }
        #expect(observation.pathCount == 3)

        observation.stop(pathAt: stopped)
        let changes: [() -> Void] = [
            { person.firstName = "Grace" }, { person.address?.zipCode = "20095" },
            { person.lastName = "Hopper" },
        ]
        changes[stopped]()
        scheduler.flush()
        #expect(label.runs.elements.isEmpty)
        #expect(!observation.isObserving(pathAt: stopped))
        #expect(observation.isActive)

        for (index, change) in changes.enumerated() where index != stopped {
            change()
            scheduler.flush()
        }
        #expect(label.runs.elements == ["ran", "ran"])
    }

    @Test func stoppingEveryPathEndsTheObservation() {
        let scheduler = TestMessageScheduler()
        let person = Person()
        let label = Label()
        let observation = label.observeCoalesced(
            person, \.$firstName, \.$lastName, in: Coalescer(scheduler: scheduler)
        ) { label, _ in label.runs.append("ran") }

        observation.stop(pathAt: 1)
        observation.stop(pathAt: 0)

        #expect(!observation.isActive)
        #expect(!label.isObserving(person))
        person.lastName = "King"
        scheduler.flush()
        #expect(label.runs.elements.isEmpty)
    }

    @Test func runningByHandRunsTheBlockAtOnceOnTheCallingThread() {
        let shown = FirstNameShown()

        shown.observation.run()

        #expect(shown.label.runs.elements == ["Ada"])
        #expect(shown.scheduler.pendingCount == 0)  // nothing scheduled
    }

    @Test func schedulingByHandRunsTheBlockOnceInTheNextFlush() {
        let shown = FirstNameShown()

        shown.observation.schedule()
        shown.person.firstName = "Grace"  // coalesces with it
        shown.observation.schedule()
        #expect(shown.label.runs.elements.isEmpty)
        shown.scheduler.flush()

        #expect(shown.label.runs.elements == ["Grace"])
    }

    /// Once it has ended, an observation's block runs no more, by hand either (a block already
    /// scheduled still runs, as in EBN).
    @Test func anEndedObservationIsNeitherRunNorScheduledByHand() {
        let shown = FirstNameShown()

        shown.label.stopObserving(shown.person)
        shown.observation.run()
        shown.observation.schedule()
        shown.scheduler.flush()

        #expect(!shown.observation.isActive)
        #expect(shown.label.runs.elements.isEmpty)
    }

    @Test func anObservationEndsWithItsRoot() {
        let scheduler = TestMessageScheduler()
        var person: Person? = Person()
        let label = Label()
        let observation = label.observeCoalesced(
            person!, PropertyPath(\Person.$firstName),
            PropertyPath(\Person.$address).appending(\.$zipCode),
            in: Coalescer(scheduler: scheduler)
        ) { label, _ in label.runs.append("ran") }

        person = nil

        #expect(!observation.isActive)
        observation.run()
        #expect(label.runs.elements.isEmpty)
    }

    /// The handle holds neither the observer nor the root (nor the block's captures).
    @Test func theHandleKeepsNothingAlive() {
        var person: Person? = Person()
        var label: Label? = Label()
        let personBox = WeakBox(person!)
        let labelBox = WeakBox(label!)
        let observation = label!.observeCoalesced(
            person!, \.$firstName, in: Coalescer(scheduler: TestMessageScheduler())
        ) { _, _ in }

        person = nil
        label = nil

        #expect(personBox.isFreed)
        #expect(labelBox.isFreed)
        #expect(!observation.isActive)
    }

    /// "The handle keeps neither the observer nor the root alive", nor anything of the model: a
    /// string-built path of one property of the root keeps no value that property held (here
    /// the address it held when the observation started, replaced since).
    @Test func theHandleKeepsNoValueOfAStringBuiltPropertyAlive() throws {
        let person = Person()
        let label = Label()
        let firstAddress = WeakBox(person.address!)
        let observation = label.observeCoalesced(
            person, try PropertyPath<Person, Any>("address"),
            in: Coalescer(scheduler: TestMessageScheduler())
        ) { _, _ in }

        person.address = Address(zipCode: "20095")

        #expect(firstAddress.isFreed)
        #expect(observation.isActive)
    }

    /// A string form checks its paths against the root as `observe(root, path:)` does: a name
    /// the root lacks throws, and nothing is observed.
    @Test func theStringFormThrowsForANameTheRootLacks() {
        let person = Person()
        let label = Label()
        #expect(
            throws: PathError.unknownProperty(
                "frstName", type: "Person", path: "frstName",
                known: ["firstName", "lastName", "address"])
        ) {
            try label.observeCoalesced(
                person, paths: "lastName", "frstName",
                in: Coalescer(scheduler: TestMessageScheduler())
            ) { _, _ in }
        }
        #expect(!label.isObserving(person))
    }

    @Test func theStringFormRunsItsBlockOncePerFlush() throws {
        let scheduler = TestMessageScheduler()
        let person = Person()
        let label = Label()
        let observation = try label.observeCoalesced(
            person, paths: "firstName", "address.zipCode", in: Coalescer(scheduler: scheduler)
        ) { label, person in label.runs.append("\(person.firstName) \(person.address!.zipCode)") }

        person.firstName = "Grace"
        person.address = Address(zipCode: "20095")
        scheduler.flush()

        #expect(label.runs.elements == ["Grace 20095"])
        #expect(observation.pathCount == 2)
    }
}
