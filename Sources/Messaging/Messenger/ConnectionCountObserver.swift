#if canImport(ObjectiveC)
    import ObjectiveC
#endif

/// An object told when observations of a messenger start and end (see
/// ``MessengerCore/setConnectionCountObserver(_:)``): a synthetic property, which is eager while
/// observed, or a transform that lends its stage only while nothing else observes it. Only
/// native Swift classes may conform (the core refers to the observer with a ``NativeWeak``;
/// an `NSObject`'s counts live elsewhere).
@usableFromInline
package protocol ConnectionCountObserver: AnyObject {
    /// An observation started or ended, or an attempt to end one found it ended (called outside
    /// the messenger's lock, on the thread that did it).
    func connectionCountChanged()
}

/// How a messenger core refers to its ``ConnectionCountObserver``: without keeping it alive, and
/// without a closure (for a synthetic property, a closure capturing it was two allocations, its
/// context and a box for the reference), nor a `weak` reference (a side table, which makes every
/// retain of the observer slow: see ``NativeWeak``). The observer's conformance is found when it
/// is told (a cached look-up, once per observation started or ended), so that the reference is
/// one `NativeWeak` and messengers without an observer pay for no more.
@usableFromInline
struct CountObserverReference: ~Copyable {
    @usableFromInline let observer: NativeWeak<AnyObject>

    /// No observer.
    @inlinable init() {
        observer = NativeWeak()
    }

    /// Refers to `observer`.
    init(_ observer: some ConnectionCountObserver) {
        #if canImport(ObjectiveC)
            assert(!(observer is NSObject), "Herald: a count observer must be a native object")
        #endif
        self.observer = NativeWeak(observer)
    }

    /// Tells the observer, if there is one and it lives. (Most messengers have none: they pay
    /// one comparison.)
    @inlinable func tell() {
        if _slowPath(observer.address != nil) { tellObserver() }
    }

    @usableFromInline func tellObserver() {
        guard let object = observer.object else { return }
        // Only conforming objects are referred to (see `init(_:)`).
        (object as? any ConnectionCountObserver)?.connectionCountChanged()
    }
}
