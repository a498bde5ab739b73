import HeraldTestSupport
import Testing

@testable import KeyPathBridge
@testable import Messaging

/// A change of a source, or an invalidation by hand, makes a property and what depends on it
/// invalid; the next read computes again.
@Suite("Synthetic properties: invalidation")
struct SyntheticInvalidationTests {
    @Test("chains: a dependency's change invalidates down the chain")
    func aChangeInvalidatesDownTheChain() {
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
    func invalidatingByHandInvalidatesDownTheChain() {
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
    func onePropertyOrAllOfAnObjectAreInvalidatedByHand() {
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

    @Test("invalidating by name says whether the object had a synthetic property of that name")
    func invalidatingByNameSaysWhetherThereWasSuchAProperty() {
        let contact = Contact()
        #expect(contact.invalidateSyntheticProperty(named: "fullName"))
        #expect(!contact.invalidateSyntheticProperty(named: "first"))
        #expect(!contact.invalidateSyntheticProperty(named: "nothing"))
    }

    @Test("debugging: valid and invalid synthetic properties, and force-all-valid")
    func theInspectorListsValidityAndForcesEveryPropertyValid() {
        let contact = Contact()
        _ = contact.fullName
        let inspector = Inspector(contact)
        #expect(inspector.validSyntheticProperties == ["fullName"])
        #expect(inspector.invalidSyntheticProperties == ["address", "shortName"])
        inspector.forceAllSyntheticPropertiesValid()
        #expect(inspector.invalidSyntheticProperties.isEmpty)
        #expect(inspector.validSyntheticProperties == ["fullName", "address", "shortName"])
    }
}
