import Synchronization
import Transforms

/// Learning the owner (every way to the property passes it), observing the declared paths, and
/// the property's name.
extension Synthetic {
    /// Learns the owner (once): every way to the property passes it.
    @inlinable @inline(__always)
    func bind(to owner: Owner, name: @autoclosure () -> AnyKeyPath) {
        if _fastPath(isBound.load(ordering: .acquiring)) { return }
        bindSlowly(to: owner, name: name())
    }

    /// Binds the owner. The name is not looked for now (reflection over the owner's stored
    /// properties costs more than the rest of making the property): only when a message or a
    /// debugging tool needs it (see `resolvedName`).
    @usableFromInline @inline(never)
    func bindSlowly(to owner: Owner, name keyPath: AnyKeyPath?) {
        bind(to: owner, named: nil, keyPath: keyPath)
    }

    /// The property's name: the one it was given, else the name of the stored property of its
    /// owner that holds it (`_fullName`, named `fullName`), found by reflection once and kept.
    /// Where reflection does not show it (the owner died, or is `CustomReflectable`: its mirror
    /// is its own code, which this may not run, under a lock), the description of the key path
    /// the first access passed (the setter, `$name`), else a name made from the property's
    /// identity, so that two such properties still differ in a cycle's message. `nil` until the
    /// owner is bound.
    func resolvedName() -> String? {
        let (known, owner, keyPath, isBound) = core.lock.withLock {
            (name, self.owner.object, nameKeyPath, bound || binding != nil)
        }
        if let known { return known }
        guard isBound else { return nil }
        let found =
            owner.flatMap(propertyName(in:)) ?? keyPath.map { String(describing: $0) }
            ?? "<unnamed \(Value.self) \(ObjectIdentifier(self))>"
        return core.lock.withLock {
            if name == nil { name = found }
            return name
        }
    }

    /// The name of the stored property of `owner` that holds this property, by reflection
    /// (never through a custom mirror).
    private func propertyName(in owner: Owner) -> String? {
        guard !(owner is CustomReflectable) else { return nil }
        return ObservableProperties.storedProperties(of: owner).first {
            ($0.value as? Synthetic) === self
        }?.name
    }

    /// Learns the owner and the property's name, and starts observing the declared paths.
    ///
    /// Another thread that reaches the property meanwhile does not wait for the paths to be
    /// observed (observing them may wait for that very thread, computing a property along
    /// them): it reads the property at once. A change along the paths before they are observed
    /// would then be missed, so a value another thread computed meanwhile is invalidated once
    /// they are, as is one the binding thread computed (re-entering the property while observing
    /// a path) before the last path was observed. A value set meanwhile stands.
    @usableFromInline
    func bind(to owner: Owner, named name: String?, keyPath: AnyKeyPath? = nil) {
        let thread = DependencyTracking.thisThread
        let mustWire = core.lock.withLock { () -> Bool in
            // A name given later (by `Inspector`, say) saves looking for one.
            if self.name == nil, let name { self.name = name }
            guard !bound, binding == nil else { return false }
            self.owner.set(owner)
            nameKeyPath = keyPath
            binding = thread
            return true
        }
        guard mustWire else { return }
        let observations = declared.isEmpty ? [] : observeDeclaredPaths(from: owner)
        let computedMeanwhile = core.lock.withLock { () -> Bool in
            declaredObservations = observations
            binding = nil
            bound = true
            defer {
                computedDuringBinding = false
                pathsLeftToObserve = 0
            }
            let computing = state.phase.holder
            return computedDuringBinding || (computing != nil && computing != thread)
        }
        isBound.store(true, ordering: .releasing)
        if computedMeanwhile && !declared.isEmpty { invalidate() }
    }

    /// Observes the declared paths from `owner`: a change along one invalidates the property.
    /// (Apart, so that a property with none makes no box for the reference the observations
    /// capture.)
    private func observeDeclaredPaths(from owner: Owner) -> [AnyObject] {
        let this = NativeWeak(self)
        // Wiring a path reads properties: they are not dependencies of an evaluation that
        // happens to be the first to reach this property.
        return DependencyTracking.withoutFrames {
            declared.indices.map { index in
                core.lock.withLock { pathsLeftToObserve = declared.count - 1 - index }
                return declared[index].observe(from: owner) { this.object?.invalidate() }
            }
        }
    }
}
