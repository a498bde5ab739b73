import HeraldTestSupport
import KeyPathBridge
import Testing

/// EBN's chain: fullName ← first, last; address ← fullName + four fields.
final class Contact: SyntheticPropertyOwner {
    @ObservableVar var first = "Ada"
    @ObservableVar var last = "Lovelace"
    @ObservableVar var street = "1 Main St"
    @ObservableVar var city = "London"
    @ObservableVar var state = "LDN"
    @ObservableVar var zip = "N1"
    @ObservableVar var nickname: String? = nil

    @Synthetic({ (contact: Contact) in contact.first + " " + contact.last })
    var fullName: String

    @Synthetic({ (contact: Contact) in
        [contact.fullName, contact.street, contact.city + ", " + contact.state, contact.zip]
            .joined(separator: "\n")
    })
    var address: String

    @Synthetic({ (contact: Contact) in contact.nickname })
    var shortName: String?
}

@Suite("Synthetic properties: EBN's rules")
struct SyntheticPropertyTests {
    @Test("lazy: the function runs 0 times until the value is read")
    func lazyUntilRead() {
        let contact = Contact()
        #expect(contact.$fullName.evaluationCount == 0)
        contact.first = "Grace"
        #expect(contact.$fullName.evaluationCount == 0)
        #expect(contact.fullName == "Grace Lovelace")
        #expect(contact.$fullName.evaluationCount == 1)
    }

    @Test("valid reads return the cached value without calling the function")
    func validReadsAreCached() {
        let contact = Contact()
        for _ in 0..<5 { #expect(contact.fullName == "Ada Lovelace") }
        #expect(contact.$fullName.evaluationCount == 1)
        #expect(contact.$fullName.isValid)
    }

    @Test("valid/invalid is tracked apart from the value: a valid nil is a value")
    func validNilIsAValue() {
        let contact = Contact()
        #expect(contact.shortName == nil)
        #expect(contact.shortName == nil)
        #expect(contact.$shortName.evaluationCount == 1)
        #expect(contact.$shortName.isValid)
    }

    @Test("a change of what the function read invalidates; the next read computes again")
    func readsAreDependencies() {
        let contact = Contact()
        _ = contact.fullName
        contact.last = "Byron"
        #expect(!contact.$fullName.isValid)
        #expect(contact.$fullName.evaluationCount == 1)
        #expect(contact.fullName == "Ada Byron")
        #expect(contact.$fullName.evaluationCount == 2)
    }

    @Test("chains: a dependency's change invalidates down the chain")
    func chainInvalidatedByDependency() {
        let contact = Contact()
        #expect(contact.address.hasPrefix("Ada Lovelace\n"))
        contact.first = "Grace"
        #expect(!contact.$fullName.isValid)
        #expect(!contact.$address.isValid)
        #expect(contact.address.hasPrefix("Grace Lovelace\n"))
        #expect(contact.$fullName.evaluationCount == 2)
        #expect(contact.$address.evaluationCount == 2)
    }

    @Test("chains: invalidating fullName by hand invalidates address")
    func chainInvalidatedByHand() {
        let contact = Contact()
        _ = contact.address
        contact.$fullName.invalidate()
        #expect(!contact.$fullName.isValid)
        #expect(!contact.$address.isValid)
        _ = contact.address
        #expect(contact.$fullName.evaluationCount == 2)
        // fullName computed the same value: address did not need to compute again.
        #expect(contact.$address.evaluationCount == 1)
    }

    @Test("manual invalidation of one property, and invalidate-all for an object")
    func manualInvalidation() {
        let contact = Contact()
        _ = contact.address
        _ = contact.shortName
        contact.invalidateSyntheticProperty(named: "shortName")
        #expect(!contact.$shortName.isValid)
        #expect(contact.$fullName.isValid)
        contact.invalidateAllSyntheticProperties()
        #expect(!contact.$fullName.isValid)
        #expect(!contact.$address.isValid)
    }

    @Test("invalidating a property that is not synthetic, or not there, is harmless")
    func invalidatingOthersIsHarmless() {
        let contact = Contact()
        _ = contact.fullName
        contact.invalidateSyntheticProperty(named: "first")
        contact.invalidateSyntheticProperty(named: "nothing")
        #expect(contact.$fullName.isValid)
        #expect(contact.first == "Ada")
    }

    @Test("hybrid: a set value is valid without calling the function, until invalidated")
    func hybridSetThenInvalidateThenSet() {
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
    func hybridSetInvalidatesDependents() {
        let contact = Contact()
        _ = contact.address
        contact.fullName = "Lord Byron"
        #expect(contact.address.hasPrefix("Lord Byron\n"))
    }

    /// Found by review: a set made `address` valid while `fullName`, which it read, was stale.
    /// A stale property did not tell its dependents of a further change (they were told when it
    /// became stale), so the set value outlived the change.
    @Test("hybrid: a set over a stale source lasts until that source changes again")
    func hybridSetOverStaleSource() {
        let contact = Contact()
        _ = contact.address
        contact.first = "Grace"  // fullName invalid, address may be stale
        contact.address = "set"
        #expect(contact.address == "set")
        contact.last = "Hopper"  // fullName changes again: the set value is no longer valid
        #expect(contact.address.hasPrefix("Grace Hopper\n"))
    }

    @Test("hybrid: a set over a chain of stale sources lasts until the chain's source changes")
    func hybridSetOverStaleChain() {
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

    /// Found by review: the set value lasts until the next change above it, even one that
    /// brings the sources back to the values the property last read.
    @Test("hybrid: a set over a stale source lasts until a change that undoes the staleness")
    func hybridSetOverStaleSourceThenChangeBack() {
        let contact = Contact()
        _ = contact.address
        contact.first = "Grace"
        contact.address = "set"
        contact.first = "Ada"  // fullName is as address last read it; the set value still goes
        #expect(contact.address.hasPrefix("Ada Lovelace\n"))
    }

    @Test("hybrid: a set of the cached value over a stale source lasts until the next change")
    func hybridSetOfTheCachedValueOverStaleSource() {
        let contact = Contact()
        let cached = contact.address
        contact.first = "Grace"
        contact.address = cached  // equal to the cached value: stored as valid, nothing told
        #expect(contact.address == cached)
        contact.last = "Hopper"
        #expect(contact.address.hasPrefix("Grace Hopper\n"))
    }

    /// After a set stands in for `p`'s computation, `p` and `s` each list the other as what
    /// depends on it (`p` last read `s`, and `s` read `p`): marking stops going round.
    @Test("hybrid: marking ends where what properties read last forms a circle")
    func markingEndsAroundACircleOfLastReads() {
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

    @Test("observed means eager: starting to observe evaluates the property and its sources")
    func observingEvaluates() {
        let contact = Contact()
        let observer = TestObserver()
        observer.observe(contact.$address) { _ in }
        #expect(contact.$address.evaluationCount == 1)
        #expect(contact.$fullName.evaluationCount == 1)
        #expect(contact.$address.isValid)
    }

    @Test("observed means eager: one update per change, computed at once")
    func observedOneUpdatePerChange() {
        let contact = Contact()
        let observer = TestObserver()
        let updates = Recording<Update<String>>()
        observer.observe(contact.$fullName) { updates.append($0) }
        contact.first = "Grace"
        #expect(contact.$fullName.isValid)
        #expect(updates.elements == [Update("Ada Lovelace", "Grace Lovelace")])
        contact.last = "Hopper"
        #expect(
            updates.elements == [
                Update("Ada Lovelace", "Grace Lovelace"), Update("Grace Lovelace", "Grace Hopper"),
            ])
        #expect(contact.$fullName.evaluationCount == 3)
    }

    @Test("observed means eager: an equal recomputation sends nothing and recomputes nothing")
    func equalRecomputationSendsNothing() {
        let contact = Contact()
        let observer = TestObserver()
        let updates = Recording<Update<String>>()
        observer.observe(contact.$address) { updates.append($0) }
        contact.$fullName.invalidate()
        #expect(contact.$fullName.evaluationCount == 2)
        #expect(contact.$address.evaluationCount == 1)
        #expect(updates.elements.isEmpty)
    }

    @Test("when the last observer goes, the property is lazy again")
    func lazyAgainWithoutObservers() {
        let contact = Contact()
        let observer = TestObserver()
        observer.observe(contact.$fullName) { _ in }
        observer.stopObserving(contact.$fullName)
        contact.first = "Grace"
        #expect(!contact.$fullName.isValid)
        #expect(contact.$fullName.evaluationCount == 1)
    }

    @Test("an observed synthetic property as an intermediate of a path is eager")
    func pathThroughSynthetic() {
        final class Holder {
            @ObservableVar var contact = Contact()
            @Synthetic({ (holder: Holder) in holder.contact.first == "Ada" ? holder.contact : nil })
            var ada: Contact?
        }
        let holder = Holder()
        let observer = TestObserver()
        let names = Recording<String?>()
        observer.observe(holder, \.$ada, \.$last) { names.append($0) }
        holder.contact.last = "Byron"
        holder.contact.first = "Grace"
        #expect(names.elements == ["Byron", nil])
    }
}
