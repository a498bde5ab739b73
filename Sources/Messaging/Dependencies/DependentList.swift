import RuntimeShims

/// The dependents of a source, held weakly. Immutable: a change makes a new list, so a sender
/// can use the list it read under the source's lock after unlocking.
///
/// One allocation: the entries are stored inline, after the header (a marking walks them in
/// place, one entry after another, with no object per entry to load).
@usableFromInline
package final class DependentList: ManagedBuffer<DependentList.Header, DependentList.Entry> {
    @usableFromInline
    package struct Header {
        /// The identity of the source whose dependents these are.
        let source: ObjectIdentifier
        let count: Int
    }

    /// One dependent.
    @usableFromInline
    package struct Entry {
        /// Holds the dependent's unowned count, which keeps its memory (not the object) while
        /// the entry lives, so that its address (`identity`) can be asked whether it lives.
        /// Never read: reading an unowned reference to an object that has begun to
        /// deinitialize traps.
        /// Not `weak`: that would give every dependent a side table, slowing each retain and
        /// release of it (see ``NativeWeak``). Dependents are Herald's own, native, objects.
        private unowned let keeper: AnyObject
        /// The dependent's address (never made into a reference here: it may be
        /// deinitializing).
        package let identity: ObjectIdentifier
        /// The dependent's type, for calling the object that `retained(at:)` gave — never
        /// before, when it may have begun to deinitialize.
        let kind: any Dependent.Type

        init(_ dependent: any Dependent) {
            keeper = dependent
            identity = ObjectIdentifier(dependent)
            kind = type(of: dependent)
        }

        private var address: UnsafeMutableRawPointer {
            UnsafeMutableRawPointer(bitPattern: UInt(bitPattern: identity)).unsafelyUnwrapped
        }

        /// The dependent at `entry` retained once (for the caller to release), if it has not
        /// begun to deinitialize. (Static, on the entry's address: a method would copy the
        /// entry, retaining its unowned reference.)
        @inline(__always)
        static func retained(at entry: UnsafePointer<Entry>) -> Unmanaged<AnyObject>? {
            let address = UnsafeMutableRawPointer(
                bitPattern: UInt(bitPattern: entry.pointee.identity))
            return swift_tryRetain(address.unsafelyUnwrapped).map {
                Unmanaged<AnyObject>.fromOpaque($0)
            }
        }

        /// Whether the dependent has not begun to deinitialize (asked under the source's lock:
        /// it retains nothing, so it cannot release a last reference there).
        package var isLive: Bool { !swift_isDeallocating(address) }
    }

    /// The identity of the source whose dependents these are.
    /// (Through the pointer: `header` checks exclusivity at run time.)
    package var source: ObjectIdentifier {
        withUnsafeMutablePointerToHeader { $0.pointee.source }
    }

    /// The entries, copied (for tests and debugging tools).
    package var entries: [Entry] { withEntries(Array.init) }

    /// `body` applied to the entries, in place.
    @inline(__always)
    func withEntries<Result>(_ body: (UnsafeBufferPointer<Entry>) -> Result) -> Result {
        withExtendedLifetime(self) { body(unsafeEntries) }
    }

    /// The entries, in place: only while the caller keeps the list.
    @inline(__always)
    var unsafeEntries: UnsafeBufferPointer<Entry> {
        withUnsafeMutablePointers { header, entries in
            UnsafeBufferPointer(start: entries, count: header.pointee.count)
        }
    }

    /// A list of `entries`, the dependents of `source`.
    private static func make(
        _ entries: some Collection<Entry>, adding extra: Entry? = nil, of source: ObjectIdentifier
    ) -> DependentList {
        let count = entries.count + (extra == nil ? 0 : 1)
        let list = create(minimumCapacity: count) { _ in Header(source: source, count: count) }
        list.withUnsafeMutablePointerToElements { elements in
            var next = elements
            for entry in entries {
                next.initialize(to: entry)
                next += 1
            }
            if let extra { next.initialize(to: extra) }
        }
        return unsafeDowncast(list, to: DependentList.self)
    }

    deinit {
        _ = withUnsafeMutablePointers { header, entries in
            entries.deinitialize(count: header.pointee.count)
        }
    }

    /// `list`, the dependents of `source`, with `dependent` added (once).
    package static func adding(
        _ dependent: any Dependent, to list: DependentList?, of source: AnyObject
    ) -> DependentList {
        let identity = ObjectIdentifier(dependent)
        let of = ObjectIdentifier(source)
        guard let list else { return make(EmptyCollection(), adding: Entry(dependent), of: of) }
        return list.withEntries { entries in
            let live = entries.filter { $0.isLive }
            if live.contains(where: { $0.identity == identity }) { return make(live, of: of) }
            return make(live, adding: Entry(dependent), of: of)
        }
    }

    /// `list` without `dependent` (and without dependents that died), or nil if none is left.
    package static func removing(_ identity: ObjectIdentifier, from list: DependentList?)
        -> DependentList?
    {
        guard let list else { return nil }
        return list.withEntries { entries in
            let rest = entries.filter { $0.identity != identity && $0.isLive }
            return rest.isEmpty ? nil : make(rest, of: list.source)
        }
    }
}
