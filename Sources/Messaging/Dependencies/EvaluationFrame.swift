/// What an evaluation read: a source, and for a computed (synthetic) source the version it had.
@usableFromInline
package struct SourceLink {
    @usableFromInline package let source: any DependencySource
    /// For a synthetic source, how to refresh it (its version is then checked before a
    /// recomputation, so an unchanged value recomputes nothing downstream).
    @usableFromInline package let refresh: VersionRefresh?
    @usableFromInline package var version: UInt64

    package init(source: any DependencySource, refresh: VersionRefresh?, version: UInt64) {
        self.source = source
        self.refresh = refresh
        self.version = version
    }

    var identity: ObjectIdentifier { ObjectIdentifier(source) }
}

/// Brings a computed source (the argument) up to date and returns its version. Made where the
/// source's types are known (where it is read), so that it runs specialized for them: a call
/// through a protocol would run the generic code, which looks up type metadata as it goes.
@usableFromInline
package typealias VersionRefresh = (AnyObject) -> UInt64

/// What an evaluation read, against what the previous one did.
@usableFromInline
package struct SourcesRead {
    /// What was read, in order.
    @usableFromInline package var sources: [SourceLink]
    /// What the previous evaluation read and this one did not (usually nothing).
    @usableFromInline package var dropped: [SourceLink]
}

/// The evaluation of one computed (synthetic) property on this thread: records what it reads,
/// keeping the subscriptions it had to sources it reads again and subscribing (before the read)
/// to new ones. Each property has one, used for one evaluation at a time, opened with
/// ``DependencyTracking/withFrame(_:on:_:)``.
///
/// A final class, not a protocol: the innermost frame, loaded on every recorded read, is then
/// used without a retain or a witness table.
///
/// While the evaluation reads the previous one's sources in the same order, nothing is copied:
/// the frame holds the previous sources (taken from the property for the evaluation), a cursor
/// moves over them, and the versions of synthetic sources are written in place.
@usableFromInline
package final class EvaluationFrame {
    /// The property being computed.
    package unowned let dependent: any Dependent
    /// The frame that was innermost when this one opened (set by ``DependencyTracking``). Not
    /// retained: it is open further up this thread's stack, whose evaluation keeps it alive.
    @exclusivity(unchecked) var parent: Unmanaged<EvaluationFrame>?
    @exclusivity(unchecked) private var previous: [SourceLink] = []
    /// While true, every read so far was `previous[0..<cursor]`, in order.
    @exclusivity(unchecked) private var same = true
    @exclusivity(unchecked) private var cursor = 0
    /// Once the reads differ: which previous sources were read again, and what was read.
    @exclusivity(unchecked) private var reused: [Bool] = []
    @exclusivity(unchecked) private var sources: [SourceLink] = []
    /// The index in `sources` (or, while `same`, in `previous`) of the last source recorded.
    @exclusivity(unchecked) private var lastRecorded = -1
    /// The identity of the source recorded last: a read of it again records nothing.
    @exclusivity(unchecked) private var lastIdentity: ObjectIdentifier?

    /// The frame of `dependent`'s evaluations.
    @usableFromInline
    package init(for dependent: any Dependent) {
        self.dependent = dependent
    }

    /// Starts an evaluation whose previous one read `previous` (taken from the property: the
    /// frame updates it in place).
    @usableFromInline
    package func begin(previous: consuming [SourceLink]) {
        self.previous = previous
        same = true
        cursor = 0
        lastRecorded = -1
        lastIdentity = nil
    }

    /// Ends the evaluation: what it read.
    @usableFromInline
    package func finish() -> SourcesRead {
        // Moved out, not copied: the frame keeps nothing of an evaluation that ended.
        var previous: [SourceLink] = []
        swap(&previous, &self.previous)
        if same {
            // The common case: the same sources again, versions updated in place.
            if cursor == previous.count { return SourcesRead(sources: previous, dropped: []) }
            return SourcesRead(
                sources: Array(previous[..<cursor]), dropped: Array(previous[cursor...]))
        }
        var sources: [SourceLink] = []
        swap(&sources, &self.sources)
        var dropped: [SourceLink] = []
        for index in previous.indices where !reused[index] { dropped.append(previous[index]) }
        return SourcesRead(sources: sources, dropped: dropped)
    }

    /// `source` was read (called before the value is read, so a change that follows the read
    /// is never missed).
    @usableFromInline func recordRead(of source: any DependencySource) {
        record(source, refresh: nil)
    }

    /// Records a read of `source` (with `refresh` if it is a synthetic property).
    @usableFromInline
    package func record(_ source: any DependencySource, refresh: VersionRefresh?) {
        let identity = ObjectIdentifier(source)
        // The same source again (a property read several times in a row), the commonest repeat.
        if identity == lastIdentity { return }
        // Each way below ends with `lastRecorded` at this source.
        lastIdentity = identity
        if same {
            if cursor < previous.count, previous[cursor].identity == identity {
                lastRecorded = cursor
                cursor += 1
                return
            }
            if lastRecorded >= 0, previous[lastRecorded].identity == identity { return }
            diverge()
        }
        // The same source again (a property read several times in a row).
        if lastRecorded >= 0, sources[lastRecorded].identity == identity { return }
        // The next source the previous evaluation read.
        if cursor < previous.count, !reused[cursor], previous[cursor].identity == identity {
            reused[cursor] = true
            cursor += 1
            append(previous[cursor - 1])
            return
        }
        if let index = sources.firstIndex(where: { $0.identity == identity }) {
            lastRecorded = index
            return
        }
        if let index = previous.indices.first(where: {
            !reused[$0] && previous[$0].identity == identity
        }) {
            reused[index] = true
            append(previous[index])
            return
        }
        source.addDependent(dependent)
        append(SourceLink(source: source, refresh: refresh, version: 0))
    }

    /// The reads stop following the previous evaluation's: copy what was read so far.
    private func diverge() {
        same = false
        sources = []
        sources.reserveCapacity(previous.count + 1)
        reused.removeAll(keepingCapacity: true)
        for index in previous.indices { reused.append(index < cursor) }
        sources.append(contentsOf: previous[..<cursor])
        lastRecorded = sources.count - 1
    }

    /// Records the version the source recorded last had when it was read.
    @usableFromInline
    package func recordVersion(_ version: UInt64) {
        guard lastRecorded >= 0 else { return }
        if same {
            previous[lastRecorded].version = version
        } else {
            sources[lastRecorded].version = version
        }
    }

    private func append(_ link: SourceLink) {
        sources.append(link)
        lastRecorded = sources.count - 1
    }
}
