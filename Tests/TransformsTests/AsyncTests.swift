import HeraldTestSupport
import Testing
import Transforms

@Suite("AsyncSequence bridge")
struct AsyncTests {
    @Test func messagesDeliversWhatIsSentInOrder() async {
        let messenger = SharedMessenger<Int>()
        let stream = messenger.messages
        for number in 1...3 { messenger.send(number) }
        var received: [Int] = []
        for await number in stream {
            received.append(number)
            if received.count == 3 { break }
        }
        #expect(received == [1, 2, 3])
    }

    @Test func messagesEndsWhenTheObservableDies() async {
        var messenger: SharedMessenger<String>? = SharedMessenger()
        let stream = messenger!.messages
        messenger?.send("last words")
        messenger = nil
        var received: [String] = []
        for await message in stream { received.append(message) }  // must terminate
        #expect(received == ["last words"])
    }

    @Test func droppingTheSequenceEndsTheObservation() async {
        let messenger = SharedMessenger<Int>()
        do {
            let stream = messenger.messages
            #expect(messenger.observationCount == 1)
            _ = stream
        }
        #expect(messenger.observationCount == 0)
    }

    @Test func cancellingTheIteratingTaskEndsTheObservation() async {
        let number = Var(0)
        let started = AsyncStream<Void>.makeStream()
        let task = Task {
            var count = 0
            started.continuation.yield()
            for await _ in number.values { count += 1 }
            return count
        }
        for await _ in started.stream { break }
        task.cancel()
        _ = await task.value
        #expect(number.observationCount == 0)
    }

    @Test func valuesStartsWithTheCurrentValue() async {
        let number = Var(10)
        let stream = number.values
        number.value = 11
        number.value = 12
        var received: [Int] = []
        for await value in stream {
            received.append(value)
            if received.count == 3 { break }
        }
        #expect(received == [10, 11, 12])
    }

    @Test func aBufferingPolicyKeepsOnlyTheNewest() async {
        let messenger = SharedMessenger<Int>()
        let stream = messenger.messages(bufferingPolicy: .bufferingNewest(1))
        for number in 1...5 { messenger.send(number) }
        var iterator = stream.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first == 5)
    }
}
