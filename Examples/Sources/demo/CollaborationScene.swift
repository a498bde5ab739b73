import KeyPathBridge

/// A collaborator edits shared state and reacts only to other people's edits, using the message
/// author to tell them apart.
final class Collaborator: Observer {
    let receiver = Receiver()
    let name: String
    private let sharedText: Var<String>

    init(_ name: String, editing sharedText: Var<String>) {
        self.name = name
        self.sharedText = sharedText
        observe(sharedText).notFrom(self) { [name] update, author in
            let editor = (author as? Collaborator)?.name ?? "someone"
            Scene.show("\(name) sees \(editor)'s edit: \"\(update.new)\"")
        }
    }

    func type(_ text: String) {
        Scene.narrate("\(name) types \"\(text)\".")
        sharedText.set(text, as: self)
    }
}

func collaborationScene() {
    Scene.begin("Two collaborators share one document and ignore their own edits")
    let sharedText = Var("")
    let ada = Collaborator("Ada", editing: sharedText)
    var grace: Collaborator? = Collaborator("Grace", editing: sharedText)

    ada.type("Hello")
    grace?.type("Hello, world")
    ada.type("Hello, world!")

    Scene.narrate("Grace leaves; her observation ends with her, no token needed.")
    let before = sharedText.observationCount
    grace = nil
    Scene.show("observations of the document: \(before) → \(sharedText.observationCount)")
    ada.type("Just me now")
    Scene.show("(nobody else is left to see it, and Ada ignores her own edit)")
    withExtendedLifetime(ada) {}
}
