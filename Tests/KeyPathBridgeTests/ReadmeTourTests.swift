import HeraldTestSupport
import KeyPathBridge
import Testing

/// README.md's "30-second tour", verbatim inside the test, with `print` captured.
@Suite("README tour")
struct ReadmeTourTests {
    final class Sky: ObservableObject {
        let messenger = Messenger<String>()
    }

    final class Dog: Observer {
        let receiver = Receiver()
    }

    @Test func theTourPrintsWhatItsCommentsSay() {
        let printed = Recording<String>()
        func print(_ line: String) { printed.append(line) }

        // --- begin README tour (after the type declarations above) ---
        let sky = Sky()
        let dog = Dog()

        // Objects observe objects. Starting an observation sends nothing.
        dog.observe(sky) { color in print("The sky is \(color)") }
        sky.send("blue")  // Prints "The sky is blue"

        // A variable sends its old and new value, and only when the value changes.
        let number = Var(23)
        dog.observe(number) { update in print("\(update.old) → \(update.new)") }
        number <- 42  // Prints "23 → 42"
        number <- 42  // not a change: prints nothing

        // Every message has an author, so collaborators can ignore their own edits.
        let sharedText = Var("")
        dog.observe(sharedText) { update, author in
            if author !== dog { print("Someone else wrote \(update.new)") }
        }
        sharedText.set("Woof", as: dog)  // the dog's own edit: prints nothing
        sharedText.value = "Meow"  // Prints "Someone else wrote Meow"

        // Transforms shape messages, ad hoc on one observation or as objects that several can observe.
        let title = Var<String?>(nil)
        dog.observe(title).new().unwrap("Untitled").map({ $0.count }) { length in
            print("The title has \(length) characters")
        }
        title.value = "Draft"  // Prints "The title has 5 characters"

        // An observation can also be an object that lives as long as you hold it.
        let watch = Observing(number) { update in print("watched \(update.new)") }
        number <- 7  // Prints "42 → 7", then "watched 7"
        watch.stop()  // ends that observation (so does dropping `watch`)
        // --- end README tour ---

        number <- 8  // the watch has ended: only the dog's observation prints
        #expect(
            printed.elements == [
                "The sky is blue", "23 → 42", "Someone else wrote Meow",
                "The title has 5 characters", "42 → 7", "watched 7",
                "7 → 8",
            ])
    }
}
