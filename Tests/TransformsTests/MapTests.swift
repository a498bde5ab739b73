import HeraldTestSupport
import Testing
import Transforms

@Suite("map, new, unwrap(default)")
struct MapTests {
    @Test func transformsReExportsMessaging() {
        // `import Transforms` alone gives the Messaging API.
        let number = Var(1)
        number <- 2
        #expect(number.value == 2)
    }

    @Test func mapTransformsEveryMessageInBothForms() {
        let messenger = Messenger<Int>()
        let doubled = messenger.map { $0 * 2 }
        let standAlone = RecordingObserver<Int>()
        standAlone.record(doubled)
        let adHoc = Recording<Int>()
        let observer = TestObserver()
        observer.observe(messenger).map({ $0 * 2 }) { adHoc.append($0) }

        messenger.send(1)
        messenger.send(5)

        #expect(standAlone.messages.elements == [2, 10])
        #expect(adHoc.elements == [2, 10])
    }

    @Test func newKeepsTheNewValueInBothForms() {
        let number = Var(0)
        let newNumber = number.new()
        let standAlone = RecordingObserver<Int>()
        standAlone.record(newNumber)
        let adHoc = Recording<Int>()
        let observer = TestObserver()
        observer.observe(number).new { adHoc.append($0) }

        number.value = 3
        number.value = 4

        #expect(standAlone.messages.elements == [3, 4])
        #expect(adHoc.elements == [3, 4])
    }

    @Test func unwrapWithADefaultReplacesNilInBothForms() {
        let messenger = Messenger<Int?>()
        let unwrapped = messenger.unwrap(-1)
        let standAlone = RecordingObserver<Int>()
        standAlone.record(unwrapped)
        let adHoc = Recording<Int>()
        let observer = TestObserver()
        observer.observe(messenger).unwrap(-1) { adHoc.append($0) }

        messenger.send(nil)
        messenger.send(7)

        #expect(standAlone.messages.elements == [-1, 7])
        #expect(adHoc.elements == [-1, 7])
    }

    @Test func authorsPassThroughUnchangedInBothForms() {
        let number = Var(0)
        let author = Author("editor")
        let chain = number.new().map { $0 + 1 }
        let standAlone = RecordingObserver<Int>()
        standAlone.record(chain)
        let adHocAuthors = Recording<AnyAuthor>()
        let observer = TestObserver()
        observer.observe(number).new().map({ $0 + 1 }) { _, author in adHocAuthors.append(author) }

        number.set(1, as: author)
        number.value = 2

        #expect(standAlone.authors.elements.first === author)
        #expect(standAlone.authors.elements.last === number)
        #expect(adHocAuthors.elements.first === author)
        #expect(adHocAuthors.elements.last === number)
    }

    @Test func replacingTheOriginRewiresAStandAloneTransform() {
        let dummy = Var("Dummy Title")
        let titleLength = dummy.new().map { $0.count }
        let observer = RecordingObserver<Int>()
        observer.record(titleLength)
        let title = Var("Real Title")

        titleLength.origin.origin = title

        dummy.value = "ignored now"
        title.value = "Real"
        #expect(observer.messages.elements == [4])
        #expect(titleLength.origin.origin === title)
        #expect(!dummy.isObserved)
    }

    @Test func mapNewAndUnwrapOverACacheAreCaches() {
        let title = Var<String?>("Draft")
        let length = title.new().unwrap("Untitled").map { $0.count }
        #expect(length.latestMessage == 5)
        title.value = nil
        #expect(length.latestMessage == 8)
        let observer = RecordingObserver<Int>()
        observer.record(length)
        length.send()
        #expect(observer.messages.elements == [8])
    }

    @Test func aDroppedStandAloneTransformStopsAndIsFreed() {
        let number = Var(0)
        var doubled: Map<Var<Int>, Int>? = number.map { $0.new * 2 }
        let box = WeakBox(doubled!)
        let observer = RecordingObserver<Int>()
        observer.record(doubled!)
        #expect(number.observationCount == 1)

        doubled = nil

        #expect(box.isFreed)
        #expect(number.observationCount == 0)
        number.value = 1
        #expect(observer.messages.elements.isEmpty)
    }

    @Test func aStandAloneTransformDoesNotKeepItsObserversAlive() {
        let number = Var(0)
        let doubled = number.map { $0.new * 2 }
        var observer: TestObserver? = TestObserver()
        let box = WeakBox(observer!)
        observer?.observe(doubled) { _ in }
        observer = nil
        #expect(box.isFreed)
        #expect(doubled.observationCount == 0)
    }

    @Test func aStandAloneTransformHoldsItsOriginStrongly() {
        var number: Var<Int>? = Var(0)
        let box = WeakBox(number!)
        let doubled = number!.map { $0.new * 2 }
        number = nil
        #expect(!box.isFreed)
        #expect(doubled.origin.value == 0)
    }

    @Test func anAdHocChainEndsWhenItsObserverDies() {
        let number = Var(0)
        var observer: TestObserver? = TestObserver()
        var canary: Canary? = Canary()
        let canaryBox = WeakBox(canary!)
        observer?.observe(number).new().map { [canary] in
            _ = canary
            return $0
        }.receive { _ in }
        canary = nil
        #expect(number.observationCount == 1)
        #expect(!canaryBox.isFreed)

        observer = nil

        #expect(number.observationCount == 0)
        #expect(canaryBox.isFreed)
    }

    /// Found by review: the first message of a `.initial` observation of a cache that is not a
    /// variable is read when its turn comes, so it may include a change whose update follows; it
    /// never misses one (reading it before the start could: the update of a change made between
    /// the read and the start would not reach the observation).
    @Test func theInitialValueOfAMapOverAVariableIsTheStateWhenItsTurnComes() {
        let number = Var(0)
        let mapped = number.map { $0 }
        let observer = TestObserver()
        let late = TestObserver()
        let chain = Recording<Update<Int>>()
        observer.observe(mapped) { update in
            guard update.new == 1 else { return }
            late.observe(mapped, options: .initial) { chain.append($0) }
            number.value = 2
        }
        number.value = 1
        #expect(chain.elements == [Update(2, 2), Update(1, 2)])
        #expect(chain.elements.last?.new == number.value)
    }
}
