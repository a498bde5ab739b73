import HeraldTestSupport
import KeyPathBridge
import Testing

@Suite("Bindings")
struct BindingTests {
    final class Label {
        @ObservableVar var text = ""
    }

    final class Form {
        @ObservableVar var email = ""
    }

    @Test func aOneWayBindingSyncsTheTargetAtOnceAndOnEveryChange() {
        let ann = User(name: "Ann")
        let label = Label()
        let binding = bind(ann, PropertyPath(\User.$name), to: label, PropertyPath(\Label.$text)) {
            "Hello, \($0)"
        }
        #expect(label.text == "Hello, Ann")  // synced at once

        ann.name = "Annie"
        #expect(label.text == "Hello, Annie")

        label.text = "edited"  // one way: the source does not follow
        #expect(ann.name == "Annie")
        #expect(binding.isBound)
    }

    @Test func aOneWayBindingFollowsPathsThatRewire() {
        let cache = UserCache()
        let label = Label()
        let binding = bind(
            cache, PropertyPath(\UserCache.$currentUser).appending(\.$name),
            to: label, PropertyPath(\Label.$text)
        ) { $0 }
        #expect(label.text == "")  // the source is unreachable: the target keeps its value

        cache.currentUser = User(name: "Ann")
        #expect(label.text == "Ann")
        cache.currentUser = nil
        #expect(label.text == "Ann")  // unreachable again: kept
        withExtendedLifetime(binding) {}
    }

    @Test func aOneWayBindingSyncsATargetThatRewires() {
        let ann = User(name: "Ann")
        let cache = UserCache()
        cache.currentUser = User(name: "placeholder")
        let binding = bind(
            ann, PropertyPath(\User.$name),
            to: cache, PropertyPath(\UserCache.$currentUser).appending(\.$name)
        ) { $0 }
        #expect(cache.currentUser?.name == "Ann")

        let bob = User(name: "Bob")
        cache.currentUser = bob  // the target path now ends at bob's name: synced at once

        #expect(bob.name == "Ann")
        withExtendedLifetime(binding) {}
    }

    @Test func aTwoWayBindingPropagatesBothWaysWithoutAFeedbackLoop() {
        let form = Form()
        form.email = "a@example.com"
        let settings = Form()
        let formUpdates = Recording<String>()
        let settingsUpdates = Recording<String>()
        let observer = TestObserver()
        observer.observe(form.$email) { formUpdates.append($0.new) }
        observer.observe(settings.$email) { settingsUpdates.append($0.new) }

        let binding = bindTwoWay(form.$email, settings.$email)
        #expect(settings.email == "a@example.com")  // b takes a's value

        form.email = "b@example.com"
        settings.email = "c@example.com"

        #expect(form.email == "c@example.com")
        #expect(settings.email == "c@example.com")
        // Each change reached each side exactly once: no echo, no loop.
        #expect(formUpdates.elements == ["b@example.com", "c@example.com"])
        #expect(settingsUpdates.elements == ["a@example.com", "b@example.com", "c@example.com"])
        withExtendedLifetime(binding) {}
    }

    @Test func aNormalizedValueFlowsBackOnceSoBothSidesEndEqual() {
        let form = Form()
        let settings = Form()
        let normalizer = TestObserver()
        // The settings side normalizes whatever it receives.
        normalizer.observe(settings.$email) { update in
            let normalized = update.new.lowercased()
            if normalized != update.new { settings.email = normalized }
        }
        let formUpdates = Recording<String>()
        let observer = TestObserver()
        observer.observe(form.$email) { formUpdates.append($0.new) }
        let binding = bindTwoWay(form.$email, settings.$email)

        form.email = "Ada@Example.COM"

        #expect(settings.email == "ada@example.com")
        #expect(form.email == "ada@example.com")  // the normalized value came back
        #expect(formUpdates.elements == ["Ada@Example.COM", "ada@example.com"])  // once
        withExtendedLifetime(binding) {}
    }

    /// Another observer of `a`, there before the binding, changes `b` while `a`'s change is
    /// being delivered: the binding hears of `b`'s change first, then of `a`'s older one, and
    /// must not copy that older value over the newer one.
    @Test func aChangeMadeWhileAnotherSideIsDeliveredIsNotOverwrittenByTheOlderValue() {
        let form = Form()
        let settings = Form()
        let other = TestObserver()
        other.observe(form.$email) { update in
            if update.new == "first" { settings.email = "second" }
        }
        let binding = bindTwoWay(
            form, PropertyPath(\Form.$email), settings, PropertyPath(\Form.$email))

        form.email = "first"

        #expect(settings.email == "second")
        #expect(form.email == "second")
        withExtendedLifetime(binding) {}
    }

    /// The same on the other side: an observer of `b` that changes `a` when `b` changes.
    @Test func aChangeMadeWhileTheOtherSideIsDeliveredFlowsToBothSides() {
        let form = Form()
        let settings = Form()
        let other = TestObserver()
        other.observe(settings.$email) { update in
            if update.new == "first" { form.email = "third" }
        }
        let binding = bindTwoWay(form.$email, settings.$email)

        settings.email = "first"

        #expect(form.email == "third")
        #expect(settings.email == "third")
        withExtendedLifetime(binding) {}
    }

    /// A one-way target re-wired while the source changes takes the source's newest value.
    @Test func aOneWayBindingCopiesTheSourcesNewestValue() {
        let source = Form()
        let target = Label()
        let other = TestObserver()
        other.observe(source.$email) { update in
            if update.new == "old" { source.email = "new" }
        }
        let binding = bind(source.$email, to: target.$text)

        source.email = "old"

        #expect(target.text == "new")
        withExtendedLifetime(binding) {}
    }

    @Test func droppingOrUnbindingABindingEndsIt() {
        let a = Var(1)
        let b = Var(0)
        var binding: PropertyBinding? = bind(a, to: b)
        let box = WeakBox(binding!)
        #expect(b.value == 1)
        binding = nil
        #expect(box.isFreed)
        a.value = 2
        #expect(b.value == 1)
        #expect(!a.isObserved)

        let second = bindTwoWay(a, b)
        #expect(b.value == 2)
        second.unbind()
        second.unbind()
        a.value = 3
        #expect(b.value == 2)
        #expect(!second.isBound)
    }

    @Test func aBindingKeepsNeitherSideAlive() {
        var ann: User? = User(name: "Ann")
        var label: Label? = Label()
        let annBox = WeakBox(ann!)
        let labelBox = WeakBox(label!)
        let binding = bind(ann!, PropertyPath(\User.$name), to: label!, PropertyPath(\Label.$text))
        {
            $0
        }
        ann = nil
        label = nil
        #expect(annBox.isFreed)
        #expect(labelBox.isFreed)
        withExtendedLifetime(binding) {}
    }

    @Test func aBindingWithATransformBetweenVariables() {
        let volume = Var(7)
        let slider = Var(0.0)
        let binding = bind(volume, to: slider) { Double($0) / 10 }
        volume.value = 5
        #expect(slider.value == 0.5)
        withExtendedLifetime(binding) {}
    }
}
