import Dispatch
import HeraldTestSupport
import KeyPathBridge
import Testing

/// A view model on the main actor, as an app has it, observing a model that other threads change.
/// Nothing here is `@unchecked`, and nothing calls `MainActor.assumeIsolated`: the handlers are
/// typed `@MainActor` by `receive(on: .mainActor)` and `observe(_:on:)`, and the compiler checks
/// what they touch (this target builds in Swift 6 mode, warnings as errors, in CI).
@MainActor
final class CounterViewModel: Observer {
    nonisolated let receiver = Receiver()
    private(set) var counts: [Int] = []
    private(set) var titles: [String] = []
    private(set) var everyHandlerRanOnTheMainQueue = true
    private var waiting: (count: Int, resume: () -> Void)?

    init(counter: Var<Int>, title: Var<String>) {
        observe(counter).new().receive(on: .mainActor) { [weak self] count in
            self?.received(count)
        }
        observe(title, on: .mainActor) { [weak self] update in
            guard let self else { return }
            titles.append(update.new)
            everyHandlerRanOnTheMainQueue = everyHandlerRanOnTheMainQueue && isOnTheMainQueue
        }
    }

    private func received(_ count: Int) {
        counts.append(count)
        everyHandlerRanOnTheMainQueue = everyHandlerRanOnTheMainQueue && isOnTheMainQueue
        if let waiting, counts.count == waiting.count {
            self.waiting = nil
            waiting.resume()
        }
    }

    /// Returns once `count` counts have arrived.
    func waitForCounts(_ count: Int) async {
        if counts.count >= count { return }
        await withCheckedContinuation { continuation in
            waiting = (count, { continuation.resume() })
        }
    }
}

/// A key that only the main queue has a value for.
private let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// Whether this code runs on the main queue, the main actor's executor. (Not
/// `Thread.isMainThread`: on Linux, once the async main drains the main queue, a worker thread may
/// run it.)
var isOnTheMainQueue: Bool { DispatchQueue.getSpecific(key: mainQueueKey) == true }

/// Returns once everything the main queue held when it was called has run (it is FIFO).
@MainActor
func drainMainQueue() async {
    await withCheckedContinuation { continuation in
        DispatchQueue.main.async { continuation.resume() }
    }
}

@Suite("Main actor: handlers typed @MainActor for changes made on any thread")
@MainActor
struct MainActorDeliveryTests {
    @Test func handlersRunOnTheMainActorInOrderForChangesOnOtherThreads() async {
        let counter = Var(0)
        let title = Var("")
        let model = CounterViewModel(counter: counter, title: title)
        DispatchQueue.global().async {
            for value in 1...200 { counter.value = value }
            title.value = "done"
        }
        await model.waitForCounts(200)
        await drainMainQueue()
        #expect(model.counts == Array(1...200))
        #expect(model.titles == ["done"])
        #expect(model.everyHandlerRanOnTheMainQueue)
    }

    @Test func aChangeOnTheMainThreadIsDeliveredLaterInOrderWithTheOthers() async {
        let counter = Var(0)
        let model = CounterViewModel(counter: counter, title: Var(""))
        counter.value = 1
        // Not yet: delivery is always asynchronous, so order never depends on the thread.
        #expect(model.counts.isEmpty)
        counter.value = 2
        await model.waitForCounts(2)
        #expect(model.counts == [1, 2])
    }

    @Test func nothingIsDeliveredAfterTheObservationEnded() async {
        let counter = Var(0)
        let model = CounterViewModel(counter: counter, title: Var(""))
        counter.value = 1  // queued on the main queue
        model.stopObserving()
        await drainMainQueue()
        #expect(model.counts.isEmpty)
    }

    @Test func theAuthorReachesAMainActorHandler() async {
        let text = Var("")
        let editor = Author("editor")
        let observer = TestObserver()
        let authors = Recording<String>()
        observer.observe(text).receive(on: .mainActor).receive { update, author in
            authors.append("\(update.new) by \(author === editor ? "editor" : "other")")
        }
        // The set returns once its delivery is queued on the main queue; then drain that.
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                text.set("x", as: editor)
                continuation.resume()
            }
        }
        await drainMainQueue()
        #expect(authors.elements == ["x by editor"])
    }
}
