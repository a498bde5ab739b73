import KeyPathBridge

/// A to-do, the same to-do only as itself (so a reloaded list can say which ones stayed).
final class Todo: Hashable {
    @ObservableVar var title: String
    init(_ title: String) { self.title = title }

    static func == (lhs: Todo, rhs: Todo) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A to-do list whose view applies change sets, and a settings screen that observes keys that
/// may not exist yet.
final class TodoScreen {
    let todos: ObservableArray<Todo> = []
    let settings: ObservableDictionary<String, String> = [:]
}

/// Stands in for a table view: it applies each change as batch updates.
final class TodoTable: Observer {
    let receiver = Receiver()
    private(set) var rows: [String] = []

    init(screen: TodoScreen) {
        observe(screen.todos) { [unowned self] change in
            let updates = change.batchUpdates
            rows = screen.todos.elements.map(\.title)
            Scene.show(
                "table: delete \(updates.deletions), insert \(updates.insertions), "
                    + "reload \(updates.reloads), move \(updates.moves.map { "\($0.from)→\($0.to)" })"
                    + " → \(rows)")
        }
        observe(screen, PropertyPath(\TodoScreen.todos).appendingEachElement().appending(\.$title))
        {
            title in
            Scene.show("a title changed: \(title ?? "-")")
        }
        observe(screen, PropertyPath(\TodoScreen.todos).appendingCount()) { count in
            Scene.show("badge shows \(count ?? 0)")
        }
        observe(screen, PropertyPath(\TodoScreen.settings).appendingValue(forKey: "theme")) {
            theme in
            Scene.show("theme is \(theme ?? "the default")")
        }
    }
}

func collectionsScene() {
    Scene.begin("Observable collections: change sets, parts in paths, absent keys")
    let screen = TodoScreen()
    let table = TodoTable(screen: screen)

    Scene.narrate("Two to-dos are added in one batch: one message.")
    let milk = Todo("Buy milk")
    screen.todos.mutate { todos in
        todos.append(milk)
        todos.append(Todo("Call Ann"))
    }

    Scene.narrate("A title is edited: the every-element path follows it.")
    milk.title = "Buy oat milk"

    Scene.narrate("The list is reloaded from the server: a small change set with a move.")
    screen.todos.replaceAll(with: [screen.todos[1], milk, Todo("Write docs")])

    Scene.narrate("The theme is set for the first time: the key did not exist before.")
    screen.settings["theme"] = "dark"

    Scene.narrate("The theme is removed again.")
    screen.settings["theme"] = nil

    withExtendedLifetime(table) {}
}
