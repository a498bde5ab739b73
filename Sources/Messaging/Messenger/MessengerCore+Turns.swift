import RuntimeShims

/// Delivery turns (see ``DeliveryTurn``): when a sender waits to take a messenger's delivering
/// role over, and how a thread that could not wait pays the turn later.
///
/// A sender waits only if it is *free to wait*: it holds no messenger's delivering role and
/// brings no computed value up to date (a synthetic property's evaluation or check), since
/// either may be what the delivering thread waits for. A thread that holds a role never waits for
/// a turn, so no circle of such waits forms; and every wait ends after
/// ``DeliveryTurn/longestWait`` whatever the delivering thread does, so a wait in a circle the
/// user's code closes (a lock held around the send that a handler takes) is a pause, not a
/// deadlock.
///
/// A sender that delivers itself (a handler that sends to a messenger another thread delivers
/// and is behind) *owes* the turn instead (see ``OwedTurns``): once its last role ends, if it is
/// then free to wait, it waits to take that messenger over as any sender would. So a chain of
/// handlers fed by a fast sender slows that sender too.
extension MessengerCore {
    /// Under the lock, as this thread takes the delivering role: its turn begins.
    @inlinable @inline(__always)
    func beginTurn() {
        state.turn.begin()
        herald_enter_delivery()
    }

    /// As this thread gives the role up or hands it over: pays the turns it owes, if it now
    /// holds no role.
    @inlinable @inline(__always)
    func endTurn() {
        if _slowPath(herald_leave_delivery()) { OwedTurns.pay() }
    }

    /// Under the lock, for a thread whose work was just queued behind another thread's
    /// delivery: the parker to wait on for the role, if the messenger is behind and the thread
    /// is free to wait, retained for the caller; otherwise nil (and a thread that delivers owes
    /// the turn).
    @inlinable
    func queuedBehind() -> Unmanaged<Parker>? {
        guard _slowPath(state.turn.mustWait(waiting: pending.count)) else { return nil }
        return waitForRoleIfFree()
    }

    /// Under the lock, the messenger behind, something queued: registers this thread to be handed
    /// the role, if it is free to wait.
    @usableFromInline
    func waitForRoleIfFree() -> Unmanaged<Parker>? {
        if herald_is_delivering() {
            OwedTurns.owe(self)
            return nil
        }
        guard DependencyTracking.holdsNothing else { return nil }
        let taker = Parker()
        state.turn.wait(taker)
        return Unmanaged.passRetained(taker)
    }

    /// Outside the lock: waits until the delivering thread hands this one the role, then
    /// delivers what is queued; or, once the delivering thread took no step for
    /// ``DeliveryTurn/longestWait``, withdraws (its work stays queued).
    @usableFromInline
    func waitForTurn(_ taker: Parker) {
        waiting: while !taker.park(forAtMost: DeliveryTurn.longestWait) {
            switch lock.withLock({ state.turn.timedOut(taker) }) {
            case .keepWaiting:
                continue waiting
            case .withdrew:
                return
            case .handedOver:
                // As the time ran out: the delivering thread wakes this one next.
                taker.park()
                break waiting
            }
        }
        herald_enter_delivery()
        drainPending()
    }

    /// Pays a turn this thread owes (it holds no role now and is free to wait): if another thread
    /// still delivers, behind, waits to take over as a sender would.
    @usableFromInline package func takeTurnIfBehind() {
        let taker = lock.withLock { () -> Parker? in
            // While items are queued, the role is held and marked as having them (see
            // `admit`), so the delivering thread comes to its next step, and hands over.
            guard !pending.isEmpty, state.turn.mustWait(waiting: pending.count) else { return nil }
            let taker = Parker()
            state.turn.wait(taker)
            return taker
        }
        if let taker { waitForTurn(taker) }
    }
}
