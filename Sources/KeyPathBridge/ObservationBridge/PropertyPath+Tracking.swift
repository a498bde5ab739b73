import Observation
import Transforms

// Paths through properties of `@Observable` classes (Swift's Observation module).

extension PropertyPath where Root: Observable {
    /// A path of one property of an `@Observable` object, tracked with Swift's Observation.
    ///
    /// ```swift
    /// @Observable final class Profile { var name = "" }
    ///
    /// observer.observe(profile, PropertyPath(tracking: \.name)) { name in }
    /// ```
    ///
    /// Observation tells before a property is set, and only once, so a tracked property
    /// delivers on `scheduler` (the main queue by default), after the set: handlers see the new
    /// value. Each delivery re-arms the tracking, so no later change is missed; the changes made
    /// before a delivery runs arrive as one update with the latest value. Changes are authored by
    /// the object (or by the binding that wrote them). The object is read on the scheduler, so
    /// use the queue your model lives on and set it there.
    ///
    /// - Precondition: `scheduler` runs work later, not at once: `.immediate` is refused (it
    ///   would read the value before the set).
    public init(
        tracking property: KeyPath<Root, Value>, on scheduler: some MessageScheduler = .mainQueue
    ) {
        self.init(components: [PathComponent(tracking: property, on: scheduler)])
    }
}

extension PropertyPath {
    /// This path extended by a property of the `@Observable` object it leads to, tracked with
    /// Swift's Observation (see ``init(tracking:on:)``).
    ///
    /// ```swift
    /// PropertyPath(\Session.$profile).appending(tracking: \.name)   // profile: Profile?
    /// ```
    public func appending<Next>(
        tracking property: KeyPath<Value, Next>, on scheduler: some MessageScheduler = .mainQueue
    ) -> PropertyPath<Root, Next> where Value: AnyObject & Observable {
        PropertyPath<Root, Next>(
            components: components + [PathComponent(tracking: property, on: scheduler)])
    }

    /// This path extended by a property of the optional `@Observable` object it leads to,
    /// tracked with Swift's Observation (see ``init(tracking:on:)``); where that object is `nil`,
    /// the extended path is unreachable.
    ///
    /// ```swift
    /// PropertyPath(tracking: \Profile.address).appending(tracking: \.zipCode)
    /// ```
    public func appending<Object: AnyObject & Observable, Next>(
        tracking property: KeyPath<Object, Next>, on scheduler: some MessageScheduler = .mainQueue
    ) -> PropertyPath<Root, Next> where Value == Object? {
        PropertyPath<Root, Next>(
            components: components + [PathComponent(tracking: property, on: scheduler)])
    }
}
