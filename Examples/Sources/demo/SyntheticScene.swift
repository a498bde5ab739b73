import KeyPathBridge

/// A sign-up form: what the user types are variables; whether the form is valid, the problems
/// to show, and the summary are synthetic properties, computed from them and cached.
final class SignUpForm: SyntheticPropertyOwner {
    @ObservableVar var name = ""
    @ObservableVar var email = ""
    @ObservableVar var acceptsTerms = false
    let tags = ObservableArray<String>()

    @Synthetic({ (form: SignUpForm) in
        var problems: [String] = []
        if form.name.isEmpty { problems.append("name is missing") }
        if !form.email.contains("@") { problems.append("email needs an @") }
        if !form.acceptsTerms { problems.append("terms not accepted") }
        return problems
    })
    var problems: [String]

    @Synthetic({ (form: SignUpForm) in form.problems.isEmpty })
    var isValid: Bool

    @Synthetic({ (form: SignUpForm) in
        // Only read once the form is valid: until then, tags are no dependency at all.
        guard form.isValid else { return "incomplete" }
        let tags = form.tags.isEmpty ? "" : " [" + form.tags.elements.joined(separator: ", ") + "]"
        return "\(form.name) <\(form.email)>" + tags
    })
    var summary: String
}

/// Stands in for the form's screen: its submit button follows `isValid`, its footer `summary`.
final class SignUpScreen: Observer {
    let receiver = Receiver()

    init(form: SignUpForm) {
        observe(form.$isValid) { update in
            Scene.show("submit button " + (update.new ? "enabled" : "disabled"))
        }
        observe(form.$summary) { update in Scene.show("footer: \(update.new)") }
    }
}

func syntheticScene() {
    Scene.begin("Synthetic properties: computed from what they read, cached, glitch-free")
    let form = SignUpForm()
    Scene.narrate("A lazy synthetic property computes when read, once, and caches the value")
    Scene.show("problems: \(form.problems); cached: \(form.$problems.isValid)")
    Scene.narrate("A screen observes isValid and summary: observed means eager")
    let screen = SignUpScreen(form: form)
    Scene.narrate("Typing changes the problems; the button changes only when validity does")
    form.name = "Ada"
    form.email = "ada@example.com"
    Scene.show("problems: \(form.problems)")
    form.acceptsTerms = true
    Scene.narrate("Tags were not read while the form was invalid; now they are a dependency")
    form.tags.append("math")
    Scene.narrate("Editing the name again: one new summary, no flicker of validity")
    form.name = "Ada Lovelace"
    Scene.narrate("The screen closes: nobody observes, so the properties are lazy again")
    screen.stopObserving()
    form.email = "no at sign"
    Scene.show("valid: \(Inspector(form).validSyntheticProperties)")
    Scene.show("invalid: \(Inspector(form).invalidSyntheticProperties)")
    Scene.show("isValid: \(form.isValid), read now, computed now")
}
