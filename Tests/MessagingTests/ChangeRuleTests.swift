import Messaging
import Testing

/// The change rule for values whose type says nothing (`Any`): what they hold decides, as the
/// static rules decide for typed values.
@Suite("The change rule for held values")
struct ChangeRuleTests {
    let rule = ChangeRule<Any?>.comparingHeldValues

    final class Box: Equatable {
        static func == (lhs: Box, rhs: Box) -> Bool { true }
    }

    @Test func equalEquatableValuesOfOneTypeAreNoChange() {
        #expect(!rule.isChange(from: 7, to: 7))
        #expect(!rule.isChange(from: "10115", to: Optional<Any>.some(Optional("10115") as Any)))
        #expect(rule.isChange(from: 7, to: 8))
    }

    @Test func valuesOfAnotherTypeAreAChange() {
        #expect(rule.isChange(from: 1, to: 1.0))
        #expect(rule.isChange(from: 1, to: nil))
        #expect(!rule.isChange(from: nil, to: Optional<Any>.some(Optional<Int>.none as Any)))
    }

    @Test func objectsFollowThePointerRuleEvenWhenEquatable() {
        let box = Box()
        #expect(!rule.isChange(from: box, to: box))
        #expect(rule.isChange(from: box, to: Box()), "another object is a change, even if ==")
    }

    @Test func otherValuesAreAlwaysAChange() {
        struct Plain { let x: Int }
        #expect(rule.isChange(from: Plain(x: 1), to: Plain(x: 1)))
    }
}
