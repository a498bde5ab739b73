import Observation
import Synchronization

/// How a Herald property reports to Swift's Observation, so that `withObservationTracking` —
/// and SwiftUI, which uses it — sees a read of the property through its `tracked` accessor and
/// is told when the property changes.
///
/// The first `tracked` read makes the property's ``ObservationHandle`` and every `tracked` read
/// passes it to Observation (`access`), which records it only inside a
/// `withObservationTracking` block. From then on, each change of the property is reported
/// (`willSet` and `didSet` on the handle, after the change, outside the property's lock). A
/// property never read through `tracked` pays one load per change, never Observation's lock.
///
/// (Reporting only the first change after each `tracked` read was tried and is wrong: a
/// tracking installs itself when its block returns, so a change between the read and that
/// moment would have used up the report, and the tracking would never hear of a later change.
/// Observation's own properties miss only the change in that gap, and so does this.)
@usableFromInline
package struct ObservationReport: ~Copyable, Sendable {
    /// The handle, made at the first `tracked` read, retained once while stored. (Not
    /// `AtomicLazyReference`: its `load` is not inlinable, and
    /// calling it looks up generic metadata, some 580 instructions, on every change.)
    @usableFromInline let slot = Atomic<Unmanaged<ObservationHandle>?>(nil)

    @inlinable package init() {}

    /// The handle, if a `tracked` read made it (the report's owner keeps it alive); at a change,
    /// read inside the property's locked section, and reported to once unlocked.
    @inlinable @inline(__always) package var made: ObservationHandle? {
        slot.load(ordering: .acquiring)?.takeUnretainedValue()
    }

    /// Reports a `tracked` read to Observation (making the handle the first time), unless a
    /// synthetic property's function makes it: inside an evaluation the read is a dependency of
    /// that property, which reports its own changes (a tracking around the evaluation would
    /// otherwise also track what the function read, and a property that tracks Observation
    /// would take each change of the source twice).
    @inlinable package func reportRead() {
        guard DependencyTracking.currentFrame == nil else { return }
        (made ?? make()).reportRead()
    }

    @usableFromInline func make() -> ObservationHandle {
        let made = Unmanaged.passRetained(ObservationHandle())
        let (stored, other) = slot.compareExchange(
            expected: nil, desired: made, ordering: .acquiringAndReleasing)
        if stored { return made.takeUnretainedValue() }
        made.release()
        return other.unsafelyUnwrapped.takeUnretainedValue()
    }

    /// Reports a change to the trackings (outside any lock), if a `tracked` read made the handle
    /// (for a synthetic property, whose `tracked` flag lives in its state machine).
    @inlinable package func reportChange() {
        made?.reportChange()
    }

    deinit {
        slot.load(ordering: .acquiring)?.release()
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
            changed = observation.made
            return message
        }
        if _slowPath(changed != nil) { changed.unsafelyUnwrapped.reportChange() }
    }
}
