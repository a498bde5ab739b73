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

/// Brings a computed source (the argument) up to date and returns its version, or nil if the
/// value it got is not one that a result may be stored from (see
/// ``EvaluationFrame/readWhatIsNotCurrent()``): the check then counts the source as moved. Made
/// where the source's types are known (where it is read), so that it runs specialized for them:
/// a call through a protocol would run the generic code, which looks up type metadata as it
/// goes.
@usableFromInline
package typealias VersionRefresh = (AnyObject) -> UInt64?

/// An evaluation of one computed (synthetic) property: records what it reads, keeping the
/// subscriptions it had to sources it reads again and subscribing (before the read) to new
/// ones, and keeps what the last one read (`links`). Each property has one, which only the
/// thread holding the property (checking or computing it: see the property's state) uses; a
/// thread that computes the property while another holds it uses a frame of its own, which
/// starts with no links. An evaluation opens it with ``DependencyTracking/withFrame(_:on:_:)``.
///
/// A final class, not a protocol: the innermost frame, loaded on every recorded read, is then
/// used without a retain or a witness table.
///
/// While an evaluation reads the previous one's sources in the same order (the common case),
/// nothing is copied or moved: a cursor moves over `links`, and the versions of synthetic
/// sources are written in place.
@usableFromInline
package final class EvaluationFrame {
    /// The property being computed (set once, by the property, as it is made).
    @exclusivity(unchecked) package unowned(safe) var dependent: (any Dependent)?
    /// The frame that was innermost when this one opened (set by ``DependencyTracking``). Not
    /// retained: it is open further up this thread's stack, whose evaluation keeps it alive.
    @exclusivity(unchecked) var parent: Unmanaged<EvaluationFrame>?
    /// What the last evaluation read, in order, with the versions its synthetic sources had
    /// (during an evaluation: what the previous one read). Only for the thread computing or
    /// checking the property, or its deinit.
    @exclusivity(unchecked) private var links: [SourceLink] = []
    /// While true, every read so far was `links[0..<cursor]`, in order.
    @exclusivity(unchecked) private var same = true
    @exclusivity(unchecked) private var cursor = 0
    /// Once the reads differ: which of `links` were read again, and what was read.
    @exclusivity(unchecked) private var reused: [Bool] = []
    @exclusivity(unchecked) private var sources: [SourceLink] = []
    /// The index in `sources` (or, while `same`, in `links`) of the last source recorded.
    @exclusivity(unchecked) private var lastRecorded = -1
    /// The identity of the source recorded last: a read of it again records nothing.
    @exclusivity(unchecked) private var lastIdentity: ObjectIdentifier?
    /// Whether the evaluation read a value that is not current (see
    /// ``readWhatIsNotCurrent()``).
    @exclusivity(unchecked) package private(set) var isTainted = false

    /// ``isTainted``, read here: a read of the stored property from the property's inlined code
    /// in another module would check exclusivity at run time (`swift_beginAccess`, about 40
    /// instructions).
    @usableFromInline package var readSomethingNotCurrent: Bool { isTainted }
    /// Whether a value it read that is not current is one that a coming marking replaces (see
    /// ``readWhatAMarkingWillReplace()``).
    @exclusivity(unchecked) private var awaitsMarking = false
    /// ``awaitsMarking``, read here (see ``readSomethingNotCurrent``).
    @usableFromInline package var readWhatAwaitsAMarking: Bool { awaitsMarking }
    /// Whether the evaluation subscribes the property to new sources (not for a computation
    /// aside, whose value is never current: see the property's state).
    @exclusivity(unchecked) package var subscribes = true

    /// Whether a synthetic source the last evaluation read has a version other than the one it
    /// read, once brought up to date (in the order read; stops at the first), or gave a value
    /// that is not current. (Here, and not inlined where the property is: the frame's
    /// properties are used without exclusivity checks only in this module.)
    @usableFromInline
    package func sourceMoved() -> Bool {
        // A copy: refreshing a source runs other properties' evaluations, which may append to
        // the array this one shares storage with.
        let links = links
        for index in links.indices {
            guard let refresh = links[index].refresh else { continue }
            // The source is passed unretained (an atomic retain and release per source
            // checked): the copy of the links holds it until this returns.
            let source = Unmanaged.passUnretained(links[index].source as AnyObject)
            guard let version = source._withUnsafeGuaranteedRef(refresh),
                version == links[index].version
            else { return true }
        }
        return false
    }

    /// The evaluation read a value from which no result may be stored: a computed source that
    /// was invalidated or set while it was computed, or that was read while another thread
    /// held it and changed meanwhile. The evaluation's own result is then not stored either
    /// (the reader still gets it), so no stored value is ever computed from one.
    @usableFromInline
    package func readWhatIsNotCurrent() {
        isTainted = true
    }

    /// The value not current that the evaluation read (see ``readWhatIsNotCurrent()``) is one
    /// that a marking already due will replace: the property's computation need not be queued
    /// again for it (computed again now, it would only read the same), that marking reaches it.
    @usableFromInline
    package func readWhatAMarkingWillReplace() {
        awaitsMarking = true
    }

    /// Whether the running evaluation recorded a read of the source whose identity is `source`.
    func hasRecorded(_ source: ObjectIdentifier) -> Bool {
        if same { return links[..<cursor].contains { $0.identity == source } }
        return sources.contains { $0.identity == source }
    }

    /// Stops what the last evaluation read from telling `dependent` of changes (the property is
    /// going away).
    package func forgetSources(of dependent: ObjectIdentifier) {
        for link in links { link.source.removeDependent(dependent) }
    }

    /// A frame for a property that sets itself as ``dependent`` once it can.
    @usableFromInline
    package init() {}

    /// Starts an evaluation.
    @usableFromInline
    package func begin() {
        assert(dependent != nil, "Herald: a frame was used before its property set itself")
        same = true
        cursor = 0
        lastRecorded = -1
        lastIdentity = nil
        isTainted = false
        awaitsMarking = false
    }

    /// Ends the evaluation: `links` become what it read. Returns what the previous evaluation
    /// read and this one did not (usually nothing).
    @usableFromInline
    package func finish() -> [SourceLink] {
        if same {
            // The common case: the same sources again, versions updated in place.
            if cursor == links.count { return [] }
            let dropped = Array(links[cursor...])
            links.removeSubrange(cursor...)
            return dropped
        }
        var dropped: [SourceLink] = []
        for index in links.indices where !reused[index] { dropped.append(links[index]) }
        swap(&links, &sources)
        sources = []
        return dropped
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
        // The commonest cases inline: the same source again (a property read several times in
        // a row), and the next source the previous evaluation read.
        if identity == lastIdentity { return }
        lastIdentity = identity
        if same, cursor < links.count, links[cursor].identity == identity {
            lastRecorded = cursor
            cursor += 1
            return
        }
        recordOther(source, identity, refresh: refresh)
    }

    /// `record(_:refresh:)` for the other cases; each ends with `lastRecorded` at the source.
    @inline(never)
    private func recordOther(
        _ source: any DependencySource, _ identity: ObjectIdentifier, refresh: VersionRefresh?
    ) {
        if same {
            if lastRecorded >= 0, links[lastRecorded].identity == identity { return }
            diverge()
        }
        // The same source again (a property read several times in a row).
        if lastRecorded >= 0, sources[lastRecorded].identity == identity { return }
        // The next source the previous evaluation read.
        if cursor < links.count, !reused[cursor], links[cursor].identity == identity {
            reused[cursor] = true
            cursor += 1
            append(links[cursor - 1])
            return
        }
        if let index = sources.firstIndex(where: { $0.identity == identity }) {
            lastRecorded = index
            return
        }
        if let index = links.indices.first(where: {
            !reused[$0] && links[$0].identity == identity
        }) {
            reused[index] = true
            append(links[index])
            return
        }
        if subscribes { source.addDependent(dependent.unsafelyUnwrapped) }
        append(SourceLink(source: source, refresh: refresh, version: 0))
    }

    /// The reads stop following the previous evaluation's: copy what was read so far.
    private func diverge() {
        same = false
        sources = []
        sources.reserveCapacity(links.count + 1)
        reused.removeAll(keepingCapacity: true)
        for index in links.indices { reused.append(index < cursor) }
        sources.append(contentsOf: links[..<cursor])
        lastRecorded = sources.count - 1
    }

    /// Records the version the source recorded last had when it was read.
    @usableFromInline
    package func recordVersion(_ version: UInt64) {
        guard lastRecorded >= 0 else { return }
        if same {
            links[lastRecorded].version = version
        } else {
            sources[lastRecorded].version = version
        }
    }

    private func append(_ link: SourceLink) {
        sources.append(link)
        lastRecorded = sources.count - 1
    }
}
