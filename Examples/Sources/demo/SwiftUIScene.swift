import KeyPathBridge
import Observation

/// A view model an app would hand to SwiftUI: Herald properties, no @Observable mirror.
final class InboxModel {
    @ObservableVar var title = "Inbox"
    let messages: ObservableArray<String> = ["Welcome"]
    @Synthetic({ (inbox: InboxModel) in "\(inbox.title) (\(inbox.messages.count))" })
    var heading: String
}

/// An app's own `@Observable` settings, which a Herald view model derives from.
@Observable final class DisplaySettings {
    var unit = "°C"
}

/// A Herald view model that derives from an `@Observable` object too: `unit` reads it (and
/// tracks Observation), `display` reads `unit` — so the frequent changes of `celsius` leave no
/// tracking behind in the settings object.
final class ThermostatModel {
    let settings = DisplaySettings()
    @ObservableVar var celsius = 21
    @Synthetic(tracksObservation: true, { (model: ThermostatModel) in model.settings.unit })
    var unit: String
    @Synthetic({ (model: ThermostatModel) in
        model.unit == "°F" ? "\(model.celsius * 9 / 5 + 32)°F" : "\(model.celsius)°C"
    })
    var display: String
}

/// What SwiftUI does with a view's body, on Linux too: render it inside
/// `withObservationTracking`, and when its `onChange` says a property it read changed, render
/// again on the next frame. (On Apple's platforms, a SwiftUI `View` reading
/// `model.$heading.tracked` gets this with no code at all.)
final class InboxScreen: @unchecked Sendable {
    let model: InboxModel
    /// The demo's display: it turns a frame when told to (an app's is the main run loop).
    let frames = TestMessageScheduler()
    private(set) var renders = 0

    init(model: InboxModel) {
        self.model = model
        render()
    }

    func render() {
        renders += 1
        let lines = withObservationTracking {
            // The body: what it reads through `tracked` is tracked.
            [model.$heading.tracked] + model.messages.tracked.map { "  · \($0)" }
        } onChange: { [weak self] in
            // Called after the change; like SwiftUI, render on the next frame, once.
            guard let self else { return }
            frames.schedule { self.render() }
        }
        Scene.show("render \(renders): " + lines.joined(separator: "\n       "))
    }
}

func swiftUIScene() {
    Scene.begin("A view tracked by Swift's Observation renders from Herald properties")
    let model = InboxModel()
    Scene.narrate("The screen renders once; Observation tracks what its body read.")
    let screen = InboxScreen(model: model)
    Scene.narrate("A message arrives; on the next frame the screen renders again.")
    model.messages.append("Lunch at noon?")
    screen.frames.flush()
    Scene.narrate("The title changes: heading, a synthetic property the body read, changed too.")
    model.title = "Work"
    screen.frames.flush()
    Scene.narrate("Two edits in one batch, then a frame: one render, with both.")
    batch {
        model.title = "Home"
        model.messages.append("Dinner?")
    }
    screen.frames.flush()
    Scene.narrate("A frame with no change renders nothing; nor does a read outside `tracked`.")
    _ = model.heading
    screen.frames.flush()
    Scene.show("\(screen.renders) renders in all, one per frame that followed a change")

    Scene.narrate(
        "The other way round: a synthetic property declared tracksObservation: true depends on "
            + "the @Observable properties it reads, as on Herald's.")
    let thermostat = ThermostatModel()
    Scene.show("display: \(thermostat.display)")
    thermostat.settings.unit = "°F"
    Scene.show("after settings.unit = \"°F\": \(thermostat.display)")
    thermostat.celsius = 25
    Scene.show("after celsius = 25: \(thermostat.display)")
}
