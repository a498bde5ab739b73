import HeraldTestSupport
import Messaging
import Testing
import Transforms

/// SwiftObserver 8's public API that Herald lacked: each item of issue 13's list, by the shape
/// SwiftObserver's users write.
@Suite("SwiftObserver's API")
struct SwiftObserverAPITests {
    @Test func aFilterIsMadeFromItsOriginAndAClosure() {
        let messenger = Messenger<Int?>()
        let present = Filter(messenger) { $0 != nil }  // the line SwiftObserver's tests have
        let received = RecordingObserver<Int?>()
        received.record(present)

        messenger.send(nil)
        messenger.send(3)

        #expect(received.messages.elements == [3])
    }

    @Test func aMapperMapsWithTheMapsInitializer() {
        let texts = Messenger<String>()
        let lengths = Mapper(texts) { $0.count }
        let viaMap = Map(texts) { $0.uppercased() }
        let received = RecordingObserver<Int>()
        received.record(lengths)
        let upper = RecordingObserver<String>()
        upper.record(viaMap)

        texts.send("four")

        #expect(received.messages.elements == [4])
        #expect(upper.messages.elements == ["FOUR"])
    }

    @Test func anUnwrapperSendsTheMessagesThatAreNotNil() {
        let codes = Messenger<Int?>()
        let unwrapped = Unwrapper(codes)
        let received = RecordingObserver<Int>()
        received.record(unwrapped)

        codes.send(nil)
        codes.send(404)

        #expect(received.messages.elements == [404])
    }

    @Test func anAuthorFilterKeepsTheMessagesOfTheAuthorsItKeeps() {
        let messenger = Messenger<String>()
        let joe = Author("joe")
        let joesMessages = AuthorFilter(messenger, keepingAuthors: { $0 === joe })
        let received = RecordingObserver<String>()
        received.record(joesMessages)

        messenger.send("from joe", from: joe)
        messenger.send("from someone else", from: Author("ann"))

        #expect(received.messages.elements == ["from joe"])
    }

    @Test func aCacheAndAWeakAreMadeFromTheirOrigins() {
        let sky = Messenger<String>()
        let codes = Messenger<Int?>()
        let latestColor = Cache(sky)
        let latestCode = Cache(codes)  // stays singly optional, as `codes.cache()` does
        let weakSky = Weak(sky)
        let received = RecordingObserver<String>()
        received.record(weakSky)

        sky.send("blue")
        codes.send(7)

        #expect(latestColor.latestMessage == "blue")
        let code: Int? = latestCode.latestMessage
        #expect(code == 7)
        #expect(received.messages.elements == ["blue"])
    }

    @Test func anObservationTransformerIsAnAdHocChain() {
        let messenger = Messenger<Int>()
        let observer = TestObserver()
        let doubled = Recording<Int>()
        let chain: ObservationTransformer<Messenger<Int>, Int> = observer.observe(messenger)
        chain.map { $0 * 2 }.receive { doubled.append($0) }

        messenger.send(21)

        #expect(doubled.elements == [42])
    }

    @Test func anUpdateSaysWhetherItIsAChange() {
        #expect(Update(1, 2).isChange)
        #expect(!Update("a", "a").isChange)
        #expect(Update(1, 2) == Update(1, 2))
    }

    @Test func variablesAreEqualWhenTheirValuesAre() {
        #expect(Var(3) == Var(3))
        #expect(Var("a") != Var("b"))
    }

    @Test func theSetOperatorWorksOnAnOptionalVariable() {
        final class Model {
            let count = Var(0)
        }
        var model: Model? = Model()
        let kept = model
        model?.count <- 5
        #expect(kept?.count.value == 5)
        model = nil
        model?.count <- 6  // no variable: nothing is set, nothing crashes
        #expect(kept?.count.value == 5)
    }

    @Test func fromAndNotFromTakeAnOptionalAuthor() {
        let messenger = Messenger<String>()
        let joe = Author("joe")
        let nobody: AnyAuthor? = nil
        let nothing = messenger.from(nobody)
        let everything = messenger.notFrom(nobody)
        let fromNobody = RecordingObserver<String>()
        fromNobody.record(nothing)
        let notFromNobody = RecordingObserver<String>()
        notFromNobody.record(everything)
        let adHoc = Recording<String>()
        let observer = TestObserver()
        observer.observe(messenger).from(Optional(joe)) { adHoc.append($0) }

        messenger.send("hi", from: joe)

        #expect(fromNobody.messages.elements.isEmpty)
        #expect(notFromNobody.messages.elements == ["hi"])
        #expect(adHoc.elements == ["hi"])
    }

    @Test func adHocChainsEndWithSwiftObserversLabels() {
        let number = Var(0)
        let codes = Messenger<Int?>()
        let words = Messenger<String>()
        let observer = TestObserver()
        let received = Recording<String>()
        observer.observe(number).new(receiveNew: { received.append("new \($0)") })
        observer.observe(number).map({ $0.new * 10 }, receiveMapped: { received.append("×\($0)") })
        observer.observe(codes).unwrap(receiveUnwrapped: { received.append("code \($0)") })
        observer.observe(codes).unwrap(-1, receiveUnwrapped: { received.append("or \($0)") })
        observer.observe(words).filter({ $0.count > 2 }, receiveFiltered: { received.append($0) })
        observer.observe(words).select("go", receiveSelected: { received.append("selected") })
        observer.observe(words).select("go", receiveSelected: { (_: AnyAuthor) in })
        // Trailing closures still pick Herald's own forms.
        observer.observe(number).new { received.append("trailing \($0)") }

        number.value = 1
        codes.send(nil)
        words.send("go")
        words.send("long")

        #expect(
            received.elements == [
                "new 1", "×10", "trailing 1", "or -1", "selected", "long",
            ])
    }
}
