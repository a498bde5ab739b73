import KeyPathBridge
import Observation

/// A model written with Swift's Observation module.
@Observable final class Profile {
    var name: String
    var avatar: Avatar?

    init(name: String, avatar: Avatar? = nil) {
        self.name = name
        self.avatar = avatar
    }
}

@Observable final class Avatar {
    var url: String
    init(url: String) { self.url = url }
}

/// A view model that shows the avatar of whoever is signed in.
final class AvatarView: Observer {
    let receiver = Receiver()
    @ObservableVar var profile: Profile?

    init(runLoop: some MessageScheduler) {
        // A Herald variable, then two @Observable properties: one path.
        let path = PropertyPath(\AvatarView.$profile)
            .appending(tracking: \.avatar, on: runLoop)
            .appending(tracking: \.url, on: runLoop)
        observe(self, path) { url in
            Scene.show("avatar view shows \(url ?? "a placeholder")")
        }
    }
}

func observationScene() {
    Scene.begin("Paths through Swift's @Observable classes, and a look inside")
    // An app uses the main queue (the default); the demo turns its own "run loop" to show when
    // deliveries happen.
    let runLoop = TestMessageScheduler()
    let view = AvatarView(runLoop: runLoop)

    Scene.narrate("Ann signs in (a Herald variable changes: delivered at once).")
    let ann = Profile(name: "Ann", avatar: Avatar(url: "ann-1.png"))
    view.profile = ann

    Scene.narrate("Ann uploads a new picture twice before the run loop turns.")
    ann.avatar?.url = "ann-2.png"
    ann.avatar?.url = "ann-3.png"
    Scene.show("nothing yet: Observation tells before the set")
    Scene.narrate("The run loop turns: one delivery, with the latest value.")
    runLoop.runTurn()

    Scene.narrate("Ann removes her avatar; the run loop turns.")
    ann.avatar = nil
    runLoop.runTurn()

    Scene.narrate("Who observes the view's properties, and from where?")
    for property in Inspector(view).properties {
        let sites = property.observationSites.map(\.description).joined(separator: ", ")
        Scene.show("\(property): \(sites.isEmpty ? "-" : sites)")
    }
}
