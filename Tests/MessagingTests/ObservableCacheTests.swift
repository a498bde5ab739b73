import HeraldTestSupport
import Messaging
import Testing

@Suite("ObservableCache")
struct ObservableCacheTests {
    // The seed's example, verbatim apart from `final`.
    final class Model: Messenger<String>, ObservableCache {  // informs about the latest state
        var latestMessage: String { state }  // ... either on demand

        var state = "initial state" {
            didSet {
                if state != oldValue {
                    send(state)  // ... or when the state changes
                }
            }
        }
    }

    @Test func aCustomCacheSendsItsLatestMessageOnDemand() {
        let model = Model()
        let observer = RecordingObserver<String>()
        observer.record(model)
        model.send()
        model.state = "changed"
        model.state = "changed"
        #expect(observer.messages.elements == ["initial state", "changed"])
    }
}
