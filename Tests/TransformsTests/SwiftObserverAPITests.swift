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
        let ann = Author("ann")
        let joesMessages = AuthorFilter(messenger) { $0 === joe }
        let annsMessages = AuthorFilter(messenger, { $0 === ann })  // SwiftObserver's other shape
        let byJoe = RecordingObserver<String>()
        byJoe.record(joesMessages)
        let byAnn = RecordingObserver<String>()
        byAnn.record(annsMessages)

        messenger.send("from joe", from: joe)
        messenger.send("from ann", from: ann)

        #expect(byJoe.messages.elements == ["from joe"])
        #expect(byAnn.messages.elements == ["from ann"])
    }

    @Test func theAuthorFiltersOfAnObjectAreAuthorFilters() {
        let messenger = Messenger<String>()
        let joe = Author("joe")
        let filtered: AuthorFilter<Messenger<String>> = messenger.filterAuthor { $0 === joe }
        let fromJoe: AuthorFilter<Messenger<String>> = messenger.from(joe)
        let notFromJoe: AuthorFilter<Messenger<String>> = messenger.notFrom(joe)
        let other = Messenger<String>()
        fromJoe.origin = other  // re-wires, like every stand-alone transform
        let received = RecordingObserver<String>()
        received.record(filtered)
        received.record(fromJoe)
        received.record(notFromJoe)

        messenger.send("joe here", from: joe)
        other.send("joe there", from: joe)

        #expect(received.messages.elements == ["joe here", "joe there"])
    }

    // A filter on class-typed messages once took the closure for an author filter (both fit
    // `(AnyObject) -> Bool`) and filtered by author, silently.
    @Test func aFilterOnClassMessagesFiltersByMessage() {
        final class Item {}
        let items = Messenger<Item>()
        let selected = Item()
        let selection = Filter(items) { $0 === selected }
        let received = RecordingObserver<Item>()
        received.record(selection)

        items.send(Item())
        items.send(selected)

        #expect(received.messages.elements.count == 1)
        #expect(received.messages.elements.first === selected)
    }

    @Test func closuresThatFitBothMessagesAndAuthorsAreUnambiguous() {
        final class Item {}
        let items = Messenger<Item>()
        let everything = Filter(items) { _ in true }
        let everyAuthor = AuthorFilter(items) { _ in true }
        let checked = Filter(items) { item in
            let keep = item !== Optional<Item>.none
            return keep
        }
        let received = RecordingObserver<Item>()
        received.record(everything)
        received.record(everyAuthor)
        received.record(checked)

        items.send(Item())

        #expect(received.messages.elements.count == 3)
    }

    @Test func aCacheAndAWeakAreMadeFromTheirOrigins() {
        let sky = Messenger<String>()
        let codes = Messenger<Int?>()
        let latestColor = Cache(sky)
        let latestCode = Cache(codes)  // stays singly optional, as `codes.cache()` does
        let latestCodeBySwiftObserversName = CacheOnOptionalMessage(codes)
        let weakSky = Weak(sky)
        let received = RecordingObserver<String>()
        received.record(weakSky)

        sky.send("blue")
        codes.send(7)

        #expect(latestColor.latestMessage == "blue")
        let code: Int? = latestCode.latestMessage
        #expect(code == 7)
        let sameCode: Int? = latestCodeBySwiftObserversName.latestMessage
        #expect(sameCode == 7)
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
        let count: Var<Int>? = Var(0)
        let none: Var<Int>? = nil
        count <- 5
        none <- 6  // no variable: nothing is set, nothing crashes
        #expect(count?.value == 5)
        #expect(none == nil)
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
        let adHocFromNobody = Recording<String>()
        let adHocNotFromNobody = Recording<String>()
        let observer = TestObserver()
        observer.observe(messenger).from(Optional(joe)) { adHoc.append($0) }
        observer.observe(messenger).from(nobody) { adHocFromNobody.append($0) }
        observer.observe(messenger).notFrom(nobody) { adHocNotFromNobody.append($0) }

        messenger.send("hi", from: joe)

        #expect(fromNobody.messages.elements.isEmpty)
        #expect(notFromNobody.messages.elements == ["hi"])
        #expect(adHoc.elements == ["hi"])
        #expect(adHocFromNobody.elements.isEmpty)
        #expect(adHocNotFromNobody.elements == ["hi"])
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
        let joe = Author("joe")
        observer.observe(words).filterAuthor(
            { $0 === joe }, receiveFiltered: { received.append("by joe \($0)") })
        observer.observe(words).from(joe, receiveSelected: { received.append("from joe \($0)") })
        observer.observe(words).notFrom(joe, receiveExcluded: { received.append("not joe \($0)") })
        observer.observe(words).from(joe, receiveSelected: { (_: String, _: AnyAuthor) in })
        // Trailing closures still pick Herald's own forms.
        observer.observe(number).new { received.append("trailing \($0)") }

        number.value = 1
        codes.send(nil)
        words.send("go")
        words.send("long", from: joe)

        #expect(
            received.elements == [
                "new 1", "×10", "trailing 1", "or -1", "selected", "not joe go", "long",
                "by joe long", "from joe long",
            ])
    }
    @Test func anEmptyUpdateOfAnOptionalValueIsNilToNil() {
        let empty = Update<Int?>()  // SwiftObserver's spelling
        #expect(empty.old == nil)
        #expect(empty.new == nil)
        #expect(empty == Update(nil, nil))
        #expect(!empty.isChange)
        let nested = Update<String??>()
        #expect(nested.old == .none && nested.new == .none)
    }

    @Test func aSendFromANilAuthorIsAuthoredByTheSender() {
        let messenger = Messenger<String>()
        let joe = Author("joe")
        let observer = TestObserver()
        let received = Recording<String>()
        observer.observe(messenger) { (message: String, author: AnyAuthor) in
            let by = author === messenger ? "messenger" : author === joe ? "joe" : "other"
            received.append("\(message) by \(by)")
        }
        let nobody: Author? = nil

        messenger.send("anonymous", from: nobody)
        messenger.send("signed", from: joe)
        messenger.send("optional joe", from: Optional(joe))

        #expect(
            received.elements == [
                "anonymous by messenger", "signed by joe", "optional joe by joe",
            ])
    }
}
