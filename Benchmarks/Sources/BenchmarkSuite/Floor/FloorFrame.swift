/// The reads of one computed property's evaluations (one at a time: only the thread that checks
/// or computes the property uses its frame).
///
/// While an evaluation reads what the last one read, in the same order (the common case),
/// nothing is copied: a cursor moves over `links`, and the versions are written in place. Once
/// it reads something else, what it read so far is copied to `reads`, a buffer kept from one
/// evaluation to the next (swapped with `links` when the evaluation ends), so that no
/// evaluation allocates once the buffers have grown.
final class FloorFrame {
    /// The property whose evaluations these are (set once, as it is made).
    @exclusivity(unchecked) var dependent: Unmanaged<FloorComputedBase>?
    /// What the last evaluation read, in order (during an evaluation: what the previous one
    /// read, with the versions of what this one read again in the same order).
    @exclusivity(unchecked) var links: [FloorLink] = []
    /// While the evaluation reads what the last one read: how many of `links` it read.
    @exclusivity(unchecked) var cursor = 0
    /// Whether the evaluation's reads stopped following the last one's (then they are in
    /// `reads`).
    @exclusivity(unchecked) var diverged = false
    /// Once the reads diverged: what this evaluation read. Between evaluations: a spare buffer.
    @exclusivity(unchecked) var reads: [FloorLink] = []
    /// Once the reads diverged: where the link of the source recorded last is, in `reads`.
    @exclusivity(unchecked) var lastIndex = 0

    /// Starts an evaluation.
    func begin() {
        cursor = 0
        diverged = false
    }

    /// Records a read of `node` (`computed`: the same node if it is a computed property) and
    /// returns where its link is (for ``setVersion(at:_:)``). Called before the value is read,
    /// so that a change after the read is not missed.
    ///
    /// The commonest cases inline: the next source the last evaluation read, and the source
    /// recorded last read again at once (as W13-repeated reads one variable thirty times), which
    /// records nothing. (Herald finds the latter with the last identity recorded, checked first;
    /// here it is the link before the cursor, checked only where the cursor's does not match, so
    /// that the common case stores nothing more than the cursor.)
    @inline(__always)
    func record(_ node: FloorNode, computed: FloorComputedBase?) -> Int {
        let identity = Unmanaged.passUnretained(node).toOpaque()
        if !diverged {
            if cursor < links.count, links[cursor].node.toOpaque() == identity {
                cursor += 1
                return cursor - 1
            }
            if cursor > 0, links[cursor - 1].node.toOpaque() == identity { return cursor - 1 }
        } else if reads[lastIndex].node.toOpaque() == identity {
            return lastIndex
        }
        lastIndex = recordOther(node, identity, computed: computed)
        return lastIndex
    }

    /// ``record(_:computed:)`` for a source other than the next the last evaluation read.
    @inline(never)
    private func recordOther(
        _ node: FloorNode, _ identity: UnsafeMutableRawPointer, computed: FloorComputedBase?
    ) -> Int {
        if !diverged {
            // A source read earlier in this evaluation: nothing changes.
            if let index = links[..<cursor].firstIndex(where: { $0.node.toOpaque() == identity }) {
                return index
            }
            diverged = true
            reads.removeAll(keepingCapacity: true)
            reads.append(contentsOf: links[..<cursor])
        }
        if let index = reads.firstIndex(where: { $0.node.toOpaque() == identity }) {
            return index
        }
        if !links.contains(where: { $0.node.toOpaque() == identity }) {
            node.addDependent(dependent.unsafelyUnwrapped)
        }
        reads.append(
            FloorLink(
                node: .passUnretained(node), computed: computed.map { .passUnretained($0) },
                version: 0))
        return reads.count - 1
    }

    /// Records the version a computed source had when it was read (its link at `index`, as
    /// ``record(_:computed:)`` returned it).
    @inline(__always)
    func setVersion(at index: Int, _ version: UInt64) {
        if diverged { reads[index].version = version } else { links[index].version = version }
    }

    /// Ends the evaluation: what it read becomes the links; what it no longer reads stops
    /// marking the property.
    func finish() {
        if diverged {
            for link in links
            where !reads.contains(where: { $0.node.toOpaque() == link.node.toOpaque() }) {
                link.node._withUnsafeGuaranteedRef {
                    $0.removeDependent(dependent.unsafelyUnwrapped)
                }
            }
            // The old links become the spare buffer (cleared when the reads next diverge).
            swap(&links, &reads)
            diverged = false
        } else if cursor < links.count {
            for link in links[cursor...] {
                link.node._withUnsafeGuaranteedRef {
                    $0.removeDependent(dependent.unsafelyUnwrapped)
                }
            }
            links.removeSubrange(cursor...)
        }
    }

    /// Whether a computed source has another version than the last evaluation read, once
    /// brought up to date (in the order read; stops at the first).
    func sourcesMoved() -> Bool {
        var index = 0
        while index < links.count {
            if let computed = links[index].computed,
                computed._withUnsafeGuaranteedRef({ $0.refreshedVersion($0) })
                    != links[index].version
            {
                return true
            }
            index += 1
        }
        return false
    }
}
