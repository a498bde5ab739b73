import KeyPathBridge
import Testing

@Suite("Layering")
struct LayeringTests {
    @Test func keyPathBridgeReExportsEverything() {
        // `import KeyPathBridge` alone must give the Messaging API (through Transforms).
        let messenger = Messenger<String>()
        #expect(messenger.observationCount == 0)
    }
}
