/// The observations one receiver owns, indexed by the messenger they observe, so that each
/// operation costs O(1) expected per observation it touches, however many the receiver owns:
/// adding one, removing one (its owner ended it, or its messenger died), taking out those of one
/// messenger (`stopObserving(x)`, `x.stopBeingObserved(by:)`), asking whether one of a messenger
/// runs (`isObserving(x)`), and taking out all of them (the observer died).
///
/// A plain value with no side effects and no lock, testable without threads: `ReceiverStorage`
/// calls every method under its lock. The methods that end observations return the connections
/// they took out; the caller detaches them from their messengers after unlocking.
///
/// Layout: while it holds at most one connection, the connection sits inline (`.single`), so an
/// observer with one observation (and every ``Observing``) allocates nothing here. From the
/// second connection on, every connection lives in a table (`.groups`): per messenger core, the
/// connections to it, where each connection's `ownerSlot` is its index in its group, so that
/// removing it is a move of the group's last connection into its place. Taking everything out
/// is a move of the one stored word.
///
/// Invariants (`invariantViolation` checks them): the table is never empty; no group is empty;
/// every connection `c` of a group is at index `c.ownerSlot` and observes the core the group is
/// keyed by; `count` is the number of connections held.
package struct OwnedConnections {
    private enum Storage {
        case empty
        case single(ConnectionBase)
        case groups([CoreKey: Group])
    }

    private var storage = Storage.empty
    /// The number of connections held.
    package private(set) var count = 0

    /// Holds no connection.
    package init() {}

    /// Adds `connection`, which must not be held already.
    package mutating func insert(_ connection: ConnectionBase) {
        count += 1
        switch takeStorage() {
        case .empty:
            storage = .single(connection)
        case .single(let held):
            var groups: [CoreKey: Group] = [:]
            groups[CoreKey(held.coreIdentity), default: Group()].append(held)
            groups[CoreKey(connection.coreIdentity), default: Group()].append(connection)
            storage = .groups(groups)
        case .groups(var groups):
            groups[CoreKey(connection.coreIdentity), default: Group()].append(connection)
            storage = .groups(groups)
        }
    }

    /// Removes `connection` if it is held here; returns whether it was.
    package mutating func remove(_ connection: ConnectionBase) -> Bool {
        switch takeStorage() {
        case .empty:
            return false
        case .single(let held):
            guard held === connection else {
                storage = .single(held)
                return false
            }
            count = 0
            return true
        case .groups(var groups):
            guard let index = groups.index(forKey: CoreKey(connection.coreIdentity)) else {
                storage = .groups(groups)
                return false
            }
            // One in-place access to the group (reading it through `values` would copy it).
            let removal = groups.values[index].remove(connection)
            switch removal {
            case .notHeld: break
            case .removed: count -= 1
            case .removedLast:
                groups.remove(at: index)
                count -= 1
            }
            // The table goes when it empties.
            if count > 0 { storage = .groups(groups) }
            return removal != .notHeld
        }
    }

    /// Removes and returns the connections to the messenger core identified by `core` (an empty
    /// group if there are none).
    package mutating func removeAll(observing core: ObjectIdentifier) -> Group {
        switch takeStorage() {
        case .empty:
            return Group()
        case .single(let held):
            guard held.coreIdentity == core else {
                storage = .single(held)
                return Group()
            }
            count = 0
            return Group(held)
        case .groups(var groups):
            // Not optional: reading the count of an optional group copied it (two retains).
            let group = groups.removeValue(forKey: CoreKey(core)) ?? Group()
            count -= group.count
            if count > 0 { storage = .groups(groups) }
            return group
        }
    }

    /// Moves the storage out, leaving `.empty` behind: no reference counting, and a table taken
    /// out is uniquely referenced while it changes (no copy-on-write).
    private mutating func takeStorage() -> Storage {
        var taken = Storage.empty
        swap(&taken, &storage)
        return taken
    }

    /// Removes and returns every connection.
    package mutating func removeAll() -> OwnedConnections {
        defer {
            storage = .empty
            count = 0
        }
        return self
    }

    /// Whether a connection to the messenger core identified by `core` is held and still
    /// delivers.
    package func containsActive(observing core: ObjectIdentifier) -> Bool {
        switch storage {
        case .empty: false
        case .single(let held): held.coreIdentity == core && held.isActive
        case .groups(let groups): groups[CoreKey(core)]?.containsActive ?? false
        }
    }

    /// Whether a connection that still delivers is held.
    package var containsActive: Bool {
        switch storage {
        case .empty: false
        case .single(let held): held.isActive
        case .groups(let groups): groups.values.contains { $0.containsActive }
        }
    }

    /// Calls `body` with every connection held, in no particular order.
    package func forEachConnection(_ body: (ConnectionBase) -> Void) {
        switch storage {
        case .empty: break
        case .single(let held): body(held)
        case .groups(let groups): for group in groups.values { group.forEachConnection(body) }
        }
    }

    /// A description of the first broken invariant, or nil if all hold. For tests.
    package var invariantViolation: String? {
        switch storage {
        case .empty:
            return count == 0 ? nil : "count \(count), but none held"
        case .single:
            return count == 1 ? nil : "count \(count), but one held"
        case .groups(let groups):
            if groups.isEmpty { return "an empty table" }
            var counted = 0
            for (core, group) in groups {
                if group.isEmpty { return "an empty group" }
                for slot in 0..<group.count {
                    let connection = group[slot]
                    if connection.ownerSlot != slot {
                        return "ownerSlot \(connection.ownerSlot) at \(slot)"
                    }
                    if CoreKey(connection.coreIdentity) != core {
                        return "a connection in another core's group"
                    }
                }
                counted += group.count
            }
            return counted == count ? nil : "count \(count), but \(counted) held"
        }
    }

    /// A messenger core's identity as a table key, hashed by mixing its address instead of by
    /// `Hasher` (SipHash, about 140 instructions, a third of ending an observation). Addresses
    /// are the process's own, not input an attacker chooses; the mix (SplitMix64's finalizer
    /// over the address and the table's seed) spreads them over every bit. `_rawHashValue(seed:)`
    /// is the standard library's entry point for that (underscored, but what `Dictionary` and
    /// `Set` call); `hashValue` still goes through `hash(into:)`, which only tables use here.
    package struct CoreKey: Hashable {
        package let identity: ObjectIdentifier

        package init(_ identity: ObjectIdentifier) { self.identity = identity }

        package func hash(into hasher: inout Hasher) { hasher.combine(identity) }

        package func _rawHashValue(seed: Int) -> Int {
            var bits = UInt64(UInt(bitPattern: identity)) ^ UInt64(UInt(bitPattern: seed))
            bits = (bits ^ (bits &>> 30)) &* 0xbf58_476d_1ce4_e5b9
            bits = (bits ^ (bits &>> 27)) &* 0x94d0_49bb_1331_11eb
            return Int(truncatingIfNeeded: bits ^ (bits &>> 31))
        }
    }

    /// The connections to one messenger core: the first inline, the rest in an array (empty, and
    /// so unallocated, in the common case of one observation per messenger).
    package struct Group {
        private var first: ConnectionBase?
        private var rest: ContiguousArray<ConnectionBase> = []

        init() {}

        init(_ connection: ConnectionBase) {
            first = connection
        }

        /// The number of connections in the group.
        package var count: Int { first == nil ? 0 : rest.count + 1 }

        package var isEmpty: Bool { first == nil }

        subscript(slot: Int) -> ConnectionBase { slot == 0 ? first! : rest[slot - 1] }

        /// Adds `connection` at the end, recording its index as its `ownerSlot`.
        mutating func append(_ connection: ConnectionBase) {
            if first == nil {
                connection.ownerSlot = 0
                first = connection
            } else {
                rest.append(connection)
                connection.ownerSlot = Int32(rest.count)
            }
        }

        /// What `remove(_:)` did.
        enum Removal {
            case notHeld
            case removed
            /// Removed the group's only connection: the group is empty now.
            case removedLast
        }

        /// Removes `connection`, if the group holds it, by moving the last connection into its
        /// slot.
        mutating func remove(_ connection: ConnectionBase) -> Removal {
            let slot = Int(connection.ownerSlot)
            guard slot >= 0, slot < count, self[slot] === connection else { return .notHeld }
            guard let last = rest.popLast() else {
                first = nil
                return .removedLast
            }
            if slot <= rest.count {  // else the removed one was the last
                last.ownerSlot = Int32(slot)
                if slot == 0 { first = last } else { rest[slot - 1] = last }
            }
            return .removed
        }

        var containsActive: Bool {
            (first?.isActive ?? false) || rest.contains { $0.isActive }
        }

        /// Removes and returns a connection (the last), or nil if the group is empty. Moves it
        /// out: ending each connection taken this way costs no extra reference counting.
        package mutating func popLast() -> ConnectionBase? {
            if let last = rest.popLast() { return last }
            var taken: ConnectionBase? = nil
            swap(&taken, &first)
            return taken
        }

        /// Calls `body` with every connection of the group.
        package func forEachConnection(_ body: (ConnectionBase) -> Void) {
            if let first { body(first) }
            for connection in rest { body(connection) }
        }
    }
}
