import Dispatch
import HeraldTestSupport
import Testing

@testable import KeyPathBridge
@testable import Messaging

/// A loader serving several properties of a dictionary-backed model.
final class Record: SyntheticPropertyOwner {
    let fields = ObservableDictionary<String, String>()
    let loads = Recording<String>()
    @Synthetic("name", loader: Record.field) var name: String?
    @Synthetic("email", loader: Record.field) var email: String?

    static func field(_ record: Record, _ key: String) -> String? {
        record.loads.append(key)
        return record.fields[key]
    }
}

/// A set value stands in for the function until the next change above the property (hybrid), and
/// is authored by its setter; one loader may serve many properties.
@Suite("Synthetic properties: hybrid sets and custom loaders")
struct SyntheticHybridAndLoaderTests {
    @Test("hybrid: a set value is valid without calling the function, until invalidated")
    func aSetValueIsValidWithoutTheFunctionUntilInvalidated() {
        let contact = Contact()
        contact.fullName = "Lord Byron"
        #expect(contact.fullName == "Lord Byron")
        #expect(contact.$fullName.evaluationCount == 0)
        contact.$fullName.invalidate()
        #expect(contact.fullName == "Ada Lovelace")
        #expect(contact.$fullName.evaluationCount == 1)
        contact.fullName = "Augusta"
        #expect(contact.fullName == "Augusta")
        #expect(contact.$fullName.evaluationCount == 1)
        contact.last = "King"
        #expect(contact.fullName == "Ada King")
    }

    @Test("hybrid: a set value invalidates what depends on the property")
    func aSetValueInvalidatesWhatDependsOnTheProperty() {
        let contact = Contact()
        _ = contact.address
        contact.fullName = "Lord Byron"
        #expect(contact.address.hasPrefix("Lord Byron\n"))
    }

    /// A set once made `address` valid while `fullName`, which it read, was stale: a stale
    /// property did not tell its dependents of a further change, so the set value outlived it.
    @Test("hybrid: a set over a stale source lasts until that source changes again")
    func aSetOverAStaleSourceLastsUntilThatSourceChangesAgain() {
        let contact = Contact()
        _ = contact.address
        contact.first = "Grace"  // fullName invalid, address may be stale
        contact.address = "set"
        #expect(contact.address == "set")
        contact.last = "Hopper"  // fullName changes again: the set value is no longer valid
        #expect(contact.address.hasPrefix("Grace Hopper\n"))
    }

    @Test("hybrid: a set over a chain of stale sources lasts until the chain's source changes")
    func aSetOverAStaleChainLastsUntilTheChainsSourceChanges() {
        final class Chain {
            @ObservableVar var base = 1
            @Synthetic({ (c: Chain) in c.base + 1 }) var one: Int
            @Synthetic({ (c: Chain) in c.one + 1 }) var two: Int
            @Synthetic({ (c: Chain) in c.two + 1 }) var three: Int
        }
        let chain = Chain()
        #expect(chain.three == 4)
        chain.base = 10  // one invalid, two and three may be stale
        chain.three = 0
        chain.base = 20
        #expect(chain.three == 23)
        #expect(chain.$one.evaluationCount == 2)
    }

    /// The set value lasts until the next change above it, even one that
    /// brings the sources back to the values the property last read.
    @Test("hybrid: a set over a stale source lasts until a change that undoes the staleness")
    func aSetOverAStaleSourceEndsWithAChangeThatUndoesIt() {
        let contact = Contact()
        _ = contact.address
        contact.first = "Grace"
        contact.address = "set"
        contact.first = "Ada"  // fullName is as address last read it; the set value still goes
        #expect(contact.address.hasPrefix("Ada Lovelace\n"))
    }

    @Test("hybrid: a set of the cached value over a stale source lasts until the next change")
    func aSetOfTheCachedValueOverAStaleSourceLastsUntilTheNextChange() {
        let contact = Contact()
        let cached = contact.address
        contact.first = "Grace"
        contact.address = cached  // equal to the cached value: stored as valid, nothing told
        #expect(contact.address == cached)
        contact.last = "Hopper"
        #expect(contact.address.hasPrefix("Grace Hopper\n"))
    }

    /// A second hybrid set once made the property forget that the
    /// first was over stale sources, so the set value outlived the next change above it...
    @Test("a second set over a value set over stale sources does not outlive a change above")
    func secondSetDoesNotOutliveAChangeAbove() {
        for sets in [[10], [10, 11]] {
            let model = Ring()  // p = flag ? 0 : s + 1; s = flag ? p : base
            #expect(model.p == 2)
            model.base = 7  // s invalid, p may be stale
            for value in sets { model.p = value }  // the first is over stale sources
            model.base = 1  // a change above p (s ends as it was)
            #expect(model.p == 2, "sets \(sets)")
        }
    }

    /// ... and, on one thread, a check of it followed what it read before a switch, closing a
    /// circle that no state has: `p` read `s` before flag turned; `s` now reads `p`.
    @Test("a second set over a value set over stale sources leaves no circle for a check")
    func secondSetLeavesNoCircleForACheck() {
        let model = Ring()
        #expect(model.p == 2)  // p read flag, s; s read flag, base
        model.flag = true  // p and s invalid
        model.p = 10  // over stale sources: the next change above p invalidates it
        model.p = 11
        #expect(model.s == 11)  // s read flag, p
        model.$s.invalidate()  // marks p, which read s last
        #expect(model.p == 0)
        #expect(model.s == 0)
    }

    /// After a set stands in for `p`'s computation, `p` and `s` each list the other as what
    /// depends on it (`p` last read `s`, and `s` read `p`): marking stops going round.
    @Test("hybrid: marking ends where what properties read last forms a circle")
    func markingEndsWhereWhatPropertiesReadLastFormsACircle() {
        final class Switch {
            @ObservableVar var flag = false
            @ObservableVar var base = 1
            @Synthetic({ (m: Switch) in m.flag ? 0 : m.s + 1 }) var p: Int
            @Synthetic({ (m: Switch) in m.flag ? m.p : m.base }) var s: Int
        }
        let model = Switch()
        #expect(model.p == 2)
        model.flag = true
        model.p = 7  // over stale: p last read s
        #expect(model.s == 7)  // s reads p
        model.base = 3  // s no longer reads base: nothing to do
        model.flag = false  // marks p and s, each once
        #expect(model.s == 3)
        #expect(model.p == 4)
    }

    @Test(
        "hybrid: a value set while the property waits for its propagation is authored by the setter"
    )
    func aSetWhileThePropertyWaitsForItsPropagationIsAuthoredByTheSetter() {
        let diamond = Diamond()
        let editor = Author("editor")
        let observer = TestObserver()
        let received = Recording<String>()
        // left and right are both queued by the change of source; left's observer sets right.
        observer.observe(diamond.$left) { _ in diamond.$right.set(999, as: editor) }
        observer.observe(diamond.$right) { update, author in
            received.append(
                "\(update.old)->\(update.new) by \(author === editor ? "editor" : "other")")
        }
        diamond.source = 2
        #expect(diamond.right == 999)
        #expect(received.elements == ["10->999 by editor"])
    }

    @Test("hybrid: a value set while unobserved does not author a later recomputation's update")
    func aSetWhileUnobservedDoesNotAuthorALaterRecomputation() {
        let model = PairOfSources()
        let editor = Author("editor")
        #expect(model.tenfold == 10)  // computed: depends on x
        model.$tenfold.set(5, as: editor)  // unobserved: nobody is told, the setter stays
        let observer = TestObserver()
        let received = Recording<String>()
        observer.observe(model.$tenfold) { update, author in
            received.append(
                "\(update.old)->\(update.new) by \(author === editor ? "editor" : author === model.$tenfold ? "property" : "other")"
            )
        }
        model.x = 2  // recomputes: 20, authored by the property
        #expect(received.elements == ["5->20 by property"])
    }

    @Test("hybrid: a set overtaken by a recomputation before the tell does not author it")
    func aSetOvertakenByARecomputationBeforeTheTellDoesNotAuthorIt() {
        let model = PairOfSources()
        let editor = Author("editor")
        let observer = TestObserver()
        let received = Recording<String>()
        observer.observe(model.$hundredfold) { _ in
            // In a propagation pass: the set queues tenfold; then its source changes.
            model.$tenfold.set(999, as: editor)
            model.x = 7
        }
        observer.observe(model.$tenfold) { update, author in
            received.append(
                "\(update.old)->\(update.new) by \(author === editor ? "editor" : author === model.$tenfold ? "property" : "other")"
            )
        }
        model.y = 2
        #expect(model.tenfold == 70)
        #expect(received.elements == ["10->70 by property"])
    }

    #if DEBUG
        /// `tenfold` of a new model, observed: each update recorded as `old->new by` its author
        /// (the editor, the property, or another).
        private func observedTenfold() -> (PairOfSources, Author, AuthoredUpdates) {
            let model = PairOfSources()
            let editor = Author("editor")
            let updates = AuthoredUpdates()
            updates.observer.observe(model.$tenfold) { update, author in
                let by =
                    author === editor ? "editor" : author === model.$tenfold ? "property" : "other"
                updates.log.append("\(update.old)->\(update.new) by \(by)")
            }
            return (model, editor, updates)
        }

        @Test(
            "hybrid: a set made while the property tells of its recomputation is authored by the setter"
        )
        func aSetMadeWhileThePropertyTellsIsAuthoredByTheSetter() {
            let (model, editor, updates) = observedTenfold()
            let setOnce = Recording<Bool>()
            // Another party's set lands after the recomputation, before its update is sent.
            SyntheticTestHooks.$beforeSending.withValue({
                guard setOnce.elements.isEmpty else { return }
                setOnce.append(true)
                model.$tenfold.set(999, as: editor)
            }) {
                model.x = 2
            }
            #expect(model.tenfold == 999)
            #expect(updates.log.elements == ["10->999 by editor"])
        }

        @Test(
            "hybrid: a set from another thread, whose tell takes its author before the running tell sends, is authored by the setter"
        )
        func aSetFromAnotherThreadIsAuthoredByTheSetterWhicheverTellSendsFirst() {
            let (model, editor, updates) = observedTenfold()
            let setterPaused = DispatchSemaphore(value: 0)
            let firstTellSent = DispatchSemaphore(value: 0)
            let setting = Recording<FinishingThread>()
            // This thread's tell of 20 pauses after taking its author (none); another thread
            // sets 999, and its own tell pauses after taking the setter, until this one sent.
            SyntheticTestHooks.$beforeSending.withValue({
                guard setting.elements.isEmpty else { return }
                let thread = FinishingThread {
                    SyntheticTestHooks.$beforeSending.withValue({
                        setterPaused.signal()
                        firstTellSent.wait()
                    }) {
                        model.$tenfold.set(999, as: editor)
                    }
                }
                setting.append(thread)
                setterPaused.wait()
            }) {
                model.x = 2
            }
            firstTellSent.signal()
            #expect(setting.elements.first?.finished(within: 60) == true)
            #expect(model.tenfold == 999)
            #expect(updates.log.elements == ["10->999 by editor"])
        }
    #endif

    @Test("custom loaders: one loader serves many properties")
    func oneLoaderServesManyProperties() {
        let record = Record()
        record.fields["name"] = "Ada"
        #expect(record.name == "Ada")
        #expect(record.email == nil)
        #expect(record.loads.elements == ["name", "email"])
        record.fields["email"] = "ada@example.com"
        #expect(record.email == "ada@example.com")
        #expect(record.name == "Ada")
        #expect(record.loads.elements == ["name", "email", "email", "name"])
    }
}

/// Updates of a property, each with its author, and the observer that hears them.
private final class AuthoredUpdates: Sendable {
    let observer = TestObserver()
    let log = Recording<String>()
}
