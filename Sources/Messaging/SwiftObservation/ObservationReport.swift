import Observation
import Synchronization

/// How a Herald property reports to Swift's Observation, so that `withObservationTracking` —
/// and SwiftUI, which uses it — sees a read of the property through its `tracked` accessor and
/// is told when the property changes.
///
/// A `tracked` read *arms* the report and passes the property's ``ObservationHandle`` (made at
/// the first such read) to Observation, which records it only inside a
/// `withObservationTracking` block. A change is reported (`willSet` and `didSet` on the handle,
/// after the change, outside the property's lock) only if a `tracked` read armed the report
/// since the last reported change: Observation's trackings are one-shot and installed by a read,
/// so a change with no read since the last reported one has no tracking to tell. A property
/// nobody reads through `tracked` pays a flag per change, never Observation's lock.
///
/// Arming and disarming happen inside the property's locked sections (a read's, a change's),
/// which order them; the atomics make the report usable without a lock of its own.
@usableFromInline
package struct ObservationReport: ~Copyable, Sendable {
    /// The handle, made at the first `tracked` read.
    @usableFromInline let handle = ObservationHandleSlot()
    /// A `tracked` read came since the last reported change.
    @usableFromInline let armed = Atomic<Bool>(false)

    @inlinable package init() {}

    /// At a `tracked` read, inside the property's locked section: arms the report.
    @inlinable package func arm() {
        armed.store(true, ordering: .relaxed)
    }

    /// After a `tracked` read: reports it to Observation.
    @inlinable package func reportRead() {
        handle.reportRead()
    }

    /// At a change, inside the property's locked section: the handle to report the change to
    /// once unlocked, if a `tracked` read armed the report since the last reported change (it is
    /// then disarmed).
    @inlinable @inline(__always)
    package func takeChange() -> ObservationHandle? {
        guard _slowPath(armed.load(ordering: .relaxed)) else { return nil }
        armed.store(false, ordering: .relaxed)
        return handle.made
    }
}

/// A property's ``ObservationHandle``, made when first needed (at the first `tracked` read), for
/// a property that keeps its armed flag itself (a synthetic property keeps it in its state
/// machine; see ``ObservationReport`` for the rest).
@usableFromInline
package struct ObservationHandleSlot: ~Copyable, Sendable {
    @usableFromInline let slot = AtomicLazyReference<ObservationHandle>()

    @inlinable package init() {}

    /// The handle, if a `tracked` read made it.
    @inlinable package var made: ObservationHandle? { slot.load() }

    /// Reports a `tracked` read to Observation (making the handle the first time).
    @inlinable package func reportRead() {
        (slot.load() ?? make()).reportRead()
    }

    @usableFromInline func make() -> ObservationHandle {
        slot.storeIfNil(ObservationHandle())
    }

    /// Reports a change to the trackings (outside any lock), if a `tracked` read made the handle.
    @inlinable package func reportChange() {
        slot.load()?.reportChange()
    }
}

/// What a Herald property reports its reads and changes to Swift's Observation through: an
/// `Observable` object of its own, with a registrar (see ``ObservationReport``).
@usableFromInline
package final class ObservationHandle: Observable, Sendable {
    private let registrar = ObservationRegistrar()

    package init() {}

    /// What a tracking depends on: the property's value, whatever it is.
    package var value: Void { () }

    /// Reports a read (recorded by Observation only inside `withObservationTracking`).
    @usableFromInline
    package func reportRead() {
        registrar.access(self, keyPath: \.value)
    }

    /// Reports a change, which has happened: the trackings that read the property run their
    /// `onChange`.
    @usableFromInline
    package func reportChange() {
        registrar.willSet(self, keyPath: \.value)
        registrar.didSet(self, keyPath: \.value)
    }
}

extension MessengerCore {
    /// `send(from:_:)` for a property that reports to Observation: a message made (a change)
    /// is reported to `observation`'s trackings, if armed, once the send returns.
    @inlinable @inline(__always)
    package func send(
        from author: AnyAuthor, reportingTo observation: borrowing ObservationReport,
        _ makeMessage: () -> Message?
    ) {
        var changed: ObservationHandle? = nil
        send(from: author) { () -> Message? in
            guard let message = makeMessage() else { return nil }
            changed = observation.takeChange()
            return message
        }
        if _slowPath(changed != nil) { changed.unsafelyUnwrapped.reportChange() }
    }
}
