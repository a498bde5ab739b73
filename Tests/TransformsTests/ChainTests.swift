import HeraldTestSupport
import Testing
import Transforms

/// Ad hoc chains and the seed's (SwiftObserver README's) transform examples, verbatim where they
/// compile as written.
@Suite("Transform chains")
struct ChainTests {
    enum Color { case blue, grey }

    final class Sky: ObservableObject {
        let messenger = Messenger<Color>()
    }

    @Test func seedExampleNewUnwrapMapWithATrailingClosure() {
        let observer = TestObserver()
        let lengths = Recording<Int>()

        let title = Var<String?>()

        observer.observe(title).new().unwrap("Untitled").map({ $0.count }) { titleLength in
            lengths.append(titleLength)
        }

        title.value = "Draft"
        title.value = nil
        #expect(lengths.elements == [5, 8])
    }

    @Test func seedExampleStandAloneTitleLength() {
        let observer = RecordingObserver<Int>()
        let title = Var<String?>()
        let titleLength = title.new().unwrap("Untitled").map { $0.count }

        observer.record(titleLength)
        title.value = "Hi"
        #expect(observer.messages.elements == [2])
    }

    @Test func seedExampleChainEndingInUnwrap() {
        let observer = TestObserver()
        let printed = Recording<Int>()
        func print(_ number: Int) { printed.append(number) }

        let numbers = Messenger<Int>()

        observer.observe(numbers).map {
            "\($0)"  // Int -> String
        }.filter {
            $0.count > 1  // suppress single digit integers
        }.map {
            Int.init($0)  // String -> Int?
        }.unwrap {  // Int? -> Int
            print($0)  // receive and process resulting Int
        }

        for number in [3, 42, 7, 100] { numbers.send(number) }
        #expect(printed.elements == [42, 100])
    }

    @Test func seedExampleReceiveAfterMap() {
        let dog = TestObserver()
        let answers = Recording<String>()
        let sky = Sky()

        dog.observe(sky).map {
            $0 == .blue
        }.receive {
            answers.append("Will we go outside? \($0 ? "Yes" : "No")!")
        }

        sky.send(.blue)
        sky.send(.grey)
        #expect(answers.elements == ["Will we go outside? Yes!", "Will we go outside? No!"])
    }

    @Test func seedExampleMappingsAndFilters() {
        let messenger = Messenger<String>()
        let stringToInt = messenger.map { Int($0) }  // sends Int?
        let shortMessages = messenger.filter { $0.count < 10 }
        let errorCode = Var<Int>(0)  // sends Update<Int>
        let newErrorCode = errorCode.new()  // sends Int
        let ints = RecordingObserver<Int?>()
        ints.record(stringToInt)
        let shorts = RecordingObserver<String>()
        shorts.record(shortMessages)
        let codes = RecordingObserver<Int>()
        codes.record(newErrorCode)

        messenger.send("12")
        messenger.send("not a number at all")
        errorCode.value = 404

        #expect(ints.messages.elements == [12, nil])
        #expect(shorts.messages.elements == ["12"])
        #expect(codes.messages.elements == [404])
    }

    @Test func reentrantSendsThroughAChainKeepSendOrder() {
        let number = Var(0)
        let log = Recording<String>()
        let first = TestObserver()
        let second = TestObserver()
        first.observe(number).new().filter({ $0 < 3 }) { value in
            log.append("first \(value)")
            number.value = value + 1
        }
        second.observe(number).new().map({ "second \($0)" }) { log.append($0) }

        number.value = 1

        #expect(
            log.elements == [
                "first 1", "second 1", "first 2", "second 2", "second 3",
            ])
    }

    @Test func anAdHocChainIsAnObservationOfTheOriginalObject() {
        let number = Var(0)
        let observer = RecordingObserver<Int>()
        observer.observe(number).new().map { $0 * 10 }.receive { _ in }
        #expect(observer.isObserving(number))
        observer.stopObserving(number)
        #expect(!observer.isObserving(number))
        #expect(number.observationCount == 0)
    }

    @Test func anAdHocChainRecordsItsDeclarationSite() {
        let number = Var(0)
        let observer = TestObserver()
        let line = UInt32(#line + 1)
        observer.observe(number).new().receive { _ in }
        #expect(number.observationSites.first?.line == line)
    }

    @Test func aStandAloneChainRecordsWhereEachStageWasMade() {
        let number = Var(0)
        let line = UInt32(#line + 1)
        let chain = number.new().map { $0 + 1 }
        #expect(number.observationSites.first?.line == line)
        #expect(chain.origin.observationSites.first?.line == line)
    }
}
