/// Prints a scene heading and numbered steps, so the output reads as a story.
enum Scene {
    nonisolated(unsafe) private static var step = 0

    static func begin(_ title: String) {
        step = 0
        print("\n== \(title)")
    }

    static func narrate(_ text: String) {
        step += 1
        print("\(step). \(text)")
    }

    static func show(_ text: String) {
        print("     → \(text)")
    }
}
