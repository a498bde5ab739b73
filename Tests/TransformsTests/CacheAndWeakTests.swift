import HeraldTestSupport
import Testing
import Transforms

@Suite("cache, weak")
struct CacheAndWeakTests {
    @Test func aCacheRemembersTheLatestMessage() {
        let errors = Messenger<String>()
        let lastError = errors.cache()
        #expect(lastError.latestMessage == nil)
        let observer = RecordingObserver<String?>()
        observer.record(lastError)

        errors.send("disk full")

        #expect(lastError.latestMessage == "disk full")
        #expect(observer.messages.elements == ["disk full"])
        lastError.send()
        #expect(observer.messages.elements == ["disk full", "disk full"])
    }

    @Test func aCacheOfOptionalMessagesIsNotDoublyOptional() {
        let codes = Messenger<Int?>()
        let latestCode = codes.cache()
        let typed: Int? = latestCode.latestMessage  // compiles only if singly optional
        #expect(typed == nil)
        codes.send(3)
        #expect(latestCode.latestMessage == 3)
        codes.send(nil)
        #expect(latestCode.latestMessage == nil)
    }

    @Test func mapOverACacheIsACacheOfTheTransformedLatestMessage() {
        let words = Messenger<String>()
        let lengths = words.cache().map { $0?.count ?? 0 }
        #expect(lengths.latestMessage == 0)
        words.send("four")
        #expect(lengths.latestMessage == 4)
    }

    @Test func weakHoldsItsOriginWeaklyAndForwards() {
        var number: Var<Int>? = Var(12)
        let box = WeakBox(number!)
        let weakNumber = number!.weak()
        // Record messages only: a recorded author (the variable itself) would keep it alive.
        let seen = Recording<Update<Int>>()
        let observer = TestObserver()
        observer.observe(weakNumber) { seen.append($0) }

        number?.value = 13
        #expect(seen.elements == [Update(12, 13)])
        #expect(weakNumber.origin === number)

        number = nil
        #expect(box.isFreed)
        #expect(weakNumber.origin == nil)
    }

    @Test func weakObservableObjectsFitInCollections() {
        let number = Var(12)
        var weakNumbers = [Weak<Var<Int>>]()
        weakNumbers.append(number.weak())
        let other = Var(1)
        weakNumbers[0].origin = other
        let observer = RecordingObserver<Update<Int>>()
        observer.record(weakNumbers[0])
        number.value = 0
        other.value = 2
        #expect(observer.messages.elements == [Update(1, 2)])
    }
}
