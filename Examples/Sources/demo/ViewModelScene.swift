import KeyPathBridge

/// A model layer: plain observable state, no knowledge of any view.
final class Document: Sendable {
    let title = Var<String?>(nil)
    let body = Var("")
}

/// A view model: its display strings are transform chains over the model's variables, held
/// stand-alone so that any number of views can observe them.
final class DocumentViewModel {
    let document: Document
    let titleText: Map<Map<Map<Var<String?>, String?>, String>, String>
    let wordCountText: Map<Map<Var<String>, String>, String>
    let canPublish: Map<CombineLatest<Map<Var<String?>, String?>, Map<Var<String>, String>>, Bool>

    init(document: Document) {
        self.document = document
        titleText = document.title.new().unwrap("Untitled").map { "Title: \($0)" }
        wordCountText = document.body.new().map { body in
            let words = body.split(whereSeparator: \.isWhitespace).count
            return words == 1 ? "1 word" : "\(words) words"
        }
        canPublish = combine(document.title.new(), document.body.new()) { title, body in
            title != nil && !body.isEmpty
        }
    }
}

/// A view: it observes the view model and "renders" by printing.
final class DocumentView: Observer {
    let receiver = Receiver()

    init(showing viewModel: DocumentViewModel) {
        Scene.show("view shows \"\(viewModel.titleText.latestMessage)\"")
        observe(viewModel.titleText) { Scene.show("view shows \"\($0)\"") }
        observe(viewModel.wordCountText) { Scene.show("status bar: \($0)") }
        // An ad hoc chain: only the transitions of "can publish" matter to the button.
        observe(viewModel.canPublish).filter({ $0 }) { _ in Scene.show("Publish button enabled") }
    }
}

func viewModelScene() {
    Scene.begin("A view model whose display strings are transform chains")
    let document = Document()
    let viewModel = DocumentViewModel(document: document)
    Scene.narrate("A view appears and shows the current title.")
    let view = DocumentView(showing: viewModel)

    Scene.narrate("The model gets a title.")
    document.title.value = "Herald in 30 seconds"

    Scene.narrate("The body is typed.")
    document.body.value = "Objects observe objects."

    Scene.narrate("Setting the same body again is not a change: nothing is sent.")
    document.body.value = "Objects observe objects."

    Scene.narrate("The title is cleared; the view falls back to a default.")
    document.title.value = nil

    withExtendedLifetime(view) {}
}
