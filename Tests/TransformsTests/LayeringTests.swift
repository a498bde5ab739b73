import Testing
import Transforms

@Suite("Layering")
struct LayeringTests {
    @Test func transformsReExportsMessaging() {
        // `import Transforms` alone must give the Messaging API.
        let number = Var(1)
        number <- 2
        #expect(number.value == 2)
    }
}
