import HeraldTestSupport
import Testing
import Transforms

@Suite("filterAuthor, from, notFrom")
struct AuthorFilterTests {
    @Test func filterAuthorLetsOnlyMatchingAuthorsThroughInBothForms() {
        let messenger = Messenger<String>()
        let friend = Author("friend")
        let stranger = Author("stranger")
        let friends = messenger.filterAuthor { $0 === friend }
        let standAlone = RecordingObserver<String>()
        standAlone.record(friends)
        let adHoc = Recording<String>()
        let observer = TestObserver()
        observer.observe(messenger).filterAuthor({ $0 === friend }) { adHoc.append($0) }

        messenger.send("hi", from: friend)
        messenger.send("spam", from: stranger)

        #expect(standAlone.messages.elements == ["hi"])
        #expect(adHoc.elements == ["hi"])
    }

    @Test func fromLetsOnlyThatAuthorThroughInBothForms() {
        let messenger = Messenger<String>()
        let joe = Author("joe")
        let ann = Author("ann")
        let joesMessages = messenger.from(joe)
        let standAlone = RecordingObserver<String>()
        standAlone.record(joesMessages)
        let adHoc = Recording<String>()
        let adHocAuthors = Recording<AnyAuthor>()
        let observer = TestObserver()
        observer.observe(messenger).from(joe) { message, author in
            adHoc.append(message)
            adHocAuthors.append(author)
        }

        messenger.send("from joe", from: joe)
        messenger.send("from ann", from: ann)
        messenger.send("from the messenger")

        #expect(standAlone.messages.elements == ["from joe"])
        #expect(adHoc.elements == ["from joe"])
        #expect(adHocAuthors.elements.count == 1 && adHocAuthors.elements[0] === joe)
    }

    @Test func notFromLetsEveryOtherAuthorThroughInBothForms() {
        let messenger = Messenger<String>()
        let hal = Author("hal9000")
        let human = Author("dave")
        let humanMessages = messenger.notFrom(hal)
        let standAlone = RecordingObserver<String>()
        standAlone.record(humanMessages)
        let adHoc = Recording<String>()
        let observer = TestObserver()
        observer.observe(messenger).notFrom(hal) { adHoc.append($0) }

        messenger.send("open the pod bay doors", from: human)
        messenger.send("I'm sorry, Dave", from: hal)

        #expect(standAlone.messages.elements == ["open the pod bay doors"])
        #expect(adHoc.elements == ["open the pod bay doors"])
    }

    @Test func authorFiltersHoldTheirAuthorWeakly() {
        let messenger = Messenger<Int>()
        var author: Author? = Author("temporary")
        let box = WeakBox(author!)
        let fromAuthor = messenger.from(author!)
        let notFromAuthor = messenger.notFrom(author!)
        let observer = TestObserver()
        observer.observe(messenger).notFrom(author!) { _ in }
        let fromLog = RecordingObserver<Int>()
        fromLog.record(fromAuthor)
        let notFromLog = RecordingObserver<Int>()
        notFromLog.record(notFromAuthor)

        author = nil
        messenger.send(1)

        #expect(box.isFreed)
        #expect(fromLog.messages.elements.isEmpty)  // nothing is from a dead author
        #expect(notFromLog.messages.elements == [1])  // everything is not from it
    }

    // A new object may take a dead author's address (the allocator hands the freed memory to
    // the next object of that size): its messages must not count as the dead author's.
    @Test func aDeadAuthorsAddressIsNeverTakenForItsMessages() {
        let messenger = Messenger<Int>()
        var author: Author? = Author("temporary")
        let fromAuthor = messenger.from(author!)
        let notFromAuthor = messenger.notFrom(author!)
        let fromLog = RecordingObserver<Int>()
        fromLog.record(fromAuthor)
        let notFromLog = RecordingObserver<Int>()
        notFromLog.record(notFromAuthor)
        let adHocFrom = Recording<Int>()
        let adHocNotFrom = Recording<Int>()
        let observer = TestObserver()
        observer.observe(messenger).from(author!) { adHocFrom.append($0) }
        observer.observe(messenger).notFrom(author!) { adHocNotFrom.append($0) }

        author = nil
        for index in 0..<100 {
            let newcomer = Author("newcomer \(index)")
            messenger.send(index, from: newcomer)
        }

        #expect(fromLog.messages.elements.isEmpty)
        #expect(adHocFrom.elements.isEmpty)
        #expect(notFromLog.messages.elements == Array(0..<100))
        #expect(adHocNotFrom.elements == Array(0..<100))
    }

    /// The seed's shared-state pattern: collaborators ignore their own edits.
    @Test func collaboratorsIgnoreTheirOwnEdits() {
        final class Collaborator: Observer {
            let receiver = Receiver()
            let name: String
            let seen = Recording<String>()
            let sharedText: Var<String>

            init(_ name: String, sharedText: Var<String>) {
                self.name = name
                self.sharedText = sharedText
                observe(sharedText).notFrom(self) { [seen] update, _ in seen.append(update.new) }
            }

            func editText(_ text: String) { sharedText.set(text, as: self) }
        }
        let sharedText = Var<String>("")
        let ann = Collaborator("ann", sharedText: sharedText)
        let bob = Collaborator("bob", sharedText: sharedText)

        ann.editText("ann's draft")
        bob.editText("bob's edit")

        #expect(ann.seen.elements == ["bob's edit"])
        #expect(bob.seen.elements == ["ann's draft"])
    }
}
