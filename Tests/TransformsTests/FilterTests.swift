import HeraldTestSupport
import Testing
import Transforms

@Suite("filter, select, unwrap(), changes")
struct FilterTests {
    @Test func filterLetsOnlyMatchingMessagesThroughInBothForms() {
        let messenger = Messenger<String>()
        let short = messenger.filter { $0.count < 4 }
        let standAlone = RecordingObserver<String>()
        standAlone.record(short)
        let adHoc = Recording<String>()
        let observer = TestObserver()
        observer.observe(messenger).filter({ $0.count < 4 }) { adHoc.append($0) }

        for word in ["a", "long word", "abc"] { messenger.send(word) }

        #expect(standAlone.messages.elements == ["a", "abc"])
        #expect(adHoc.elements == ["a", "abc"])
    }

    @Test func selectSendsVoidForTheSelectedMessageInBothForms() {
        let messenger = Messenger<String>()
        let notifier = messenger.select("my notification")
        let standAlone = Recording<String>()
        let observer = TestObserver()
        observer.observe(notifier) { standAlone.append("stand-alone") }
        observer.observe(messenger).select("my notification") { standAlone.append("ad hoc") }

        messenger.send("other")
        messenger.send("my notification")

        #expect(standAlone.elements == ["stand-alone", "ad hoc"])
    }

    @Test func unwrapDropsNilInBothForms() {
        let errorCodes = Messenger<Int?>()
        let errorAlert = errorCodes.unwrap()
        let standAlone = RecordingObserver<Int>()
        standAlone.record(errorAlert)
        let adHoc = Recording<Int>()
        let observer = TestObserver()
        observer.observe(errorCodes).unwrap { adHoc.append($0) }

        errorCodes.send(nil)
        errorCodes.send(404)
        errorCodes.send(nil)

        #expect(standAlone.messages.elements == [404])
        #expect(adHoc.elements == [404])
    }

    @Test func unwrapRemovesOnlyOneLevelOfOptional() {
        let messenger = Messenger<Int??>()
        let unwrapped = messenger.unwrap()  // sends Int?
        let observer = RecordingObserver<Int?>()
        observer.record(unwrapped)
        messenger.send(.some(nil))
        messenger.send(nil)
        messenger.send(3)
        #expect(observer.messages.elements == [nil, 3])
    }

    @Test func changesDropsUpdatesWithoutAChangeInBothForms() {
        let number = Var(1)
        let realChanges = number.changes()
        let standAlone = RecordingObserver<Update<Int>>()
        standAlone.record(realChanges)
        let adHoc = Recording<Update<Int>>()
        let observer = TestObserver()
        observer.observe(number).changes { adHoc.append($0) }

        number.send()  // old == new
        number.value = 2

        #expect(standAlone.messages.elements == [Update(1, 2)])
        #expect(adHoc.elements == [Update(1, 2)])
    }

    @Test func aFilterOverACacheIsNotACacheButKeepsItsOrigin() {
        let number = Var(1)
        let even = number.new().filter { $0 % 2 == 0 }
        #expect(even.origin.origin === number)
        let observer = RecordingObserver<Int>()
        observer.record(even)
        for value in 2...5 { number.value = value }
        #expect(observer.messages.elements == [2, 4])
    }
}
