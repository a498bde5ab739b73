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

extension ConnectionCountObserver {
    /// Tells `object`, which is of this type.
    fileprivate static func tell(_ object: AnyObject) {
        unsafeDowncast(object, to: Self.self).connectionCountChanged()
    }
}

/// How a messenger core refers to its ``ConnectionCountObserver``: without keeping it alive, and
/// without a closure (for a synthetic property, a closure capturing it was two allocations, its
/// context and a box for the reference), nor a `weak` reference (a side table, which makes every
/// retain of the observer slow: see ``NativeWeak``). The observer's type is kept beside it, so
/// that telling it needs no dynamic cast.
@usableFromInline
struct CountObserverReference: ~Copyable {
    @usableFromInline let observer: NativeWeak<AnyObject>
    @usableFromInline let kind: (any ConnectionCountObserver.Type)?

    /// No observer.
    @inlinable init() {
        observer = NativeWeak()
        kind = nil
    }

    /// Refers to `observer`.
    init<Observer: ConnectionCountObserver>(_ observer: Observer) {
        #if canImport(ObjectiveC)
            assert(!(observer is NSObject), "Herald: a count observer must be a native object")
        #endif
        self.observer = NativeWeak(observer)
        kind = Observer.self
    }

    /// Tells the observer, if there is one and it lives. (Most messengers have none: they pay
    /// one comparison.)
    @inlinable func tell() {
        if _slowPath(kind != nil) { tellObserver() }
    }

    @usableFromInline func tellObserver() {
        guard let kind, let object = observer.object else { return }
        kind.tell(object)
    }
}
