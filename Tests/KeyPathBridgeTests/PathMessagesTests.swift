import HeraldTestSupport
import KeyPathBridge
import Testing

/// An observable object that a path can end at: it sends its own messages.
final class Document: ObservableObject {
    let messenger = Messenger<String>()
    let title: String

    init(_ title: String) {
        self.title = title
    }
}

final class Workspace {
    @ObservableVar var currentDocument: Document?
    @ObservableVar var pinned: Document

    init(pinned: Document) {
        self.pinned = pinned
    }
}

final class App {
    @ObservableVar var workspace: Workspace?
}

@Suite("Paths that end at an observable object")
struct PathMessagesTests {
    @Test func theMessagesOfWhicheverObjectIsCurrentAreDelivered() {
        let draft = Document("draft")
        let final = Document("final")
        let workspace = Workspace(pinned: draft)
        let observer = TestObserver()
        let received = Recording<String>()
        observer.observeMessages(of: workspace, \.$currentDocument) { received.append($0) }

        draft.send("unheard: not current yet")
        workspace.currentDocument = draft
        draft.send("draft 1")
        workspace.currentDocument = final
        draft.send("unheard: no longer current")
        final.send("final 1")
        workspace.currentDocument = nil
        final.send("unheard: unreachable")

        #expect(received.elements == ["draft 1", "final 1"])
        #expect(!draft.isObserved && !final.isObserved)
    }

    @Test func aLongerPathReWiresAtEveryLevel() {
        let app = App()
        let first = Workspace(pinned: Document("one"))
        let second = Workspace(pinned: Document("two"))
        let observer = TestObserver()
        let received = Recording<String>()
        observer.observeMessages(of: app, PropertyPath(\App.$workspace).appending(\.$pinned)) {
            received.append($0)
        }

        app.workspace = first
        first.pinned.send("one 1")
        app.workspace = second
        first.pinned.send("unheard")
        second.pinned.send("two 1")
        let replacement = Document("three")
        second.pinned = replacement
        replacement.send("three 1")

        #expect(received.elements == ["one 1", "two 1", "three 1"])
    }

    @Test func itEndsWithTheRootAndWithStopObserving() {
        let document = Document("doc")
        var workspace: Workspace? = Workspace(pinned: document)
        let observer = TestObserver()
        let received = Recording<String>()
        observer.observeMessages(of: workspace!, \.$pinned) { received.append($0) }
        #expect(observer.isObserving(workspace!))
        #expect(document.isObserved)

        workspace = nil  // the root dies: the observation ends
        document.send("unheard")
        #expect(received.elements.isEmpty)
        #expect(!document.isObserved)

        let other = Workspace(pinned: document)
        observer.observeMessages(of: other, \.$pinned) { received.append($0) }
        observer.stopObserving(other)
        document.send("unheard too")
        #expect(received.elements.isEmpty)
        #expect(!document.isObserved)
    }
}
