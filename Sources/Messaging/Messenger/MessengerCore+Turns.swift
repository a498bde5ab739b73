import RuntimeShims

/// Delivery turns (see ``DeliveryTurn``): when a sender waits to take a messenger's delivering
/// role over, and how a thread that could not wait pays the turn later.
///
/// A sender waits only if it is *free to wait*: it holds no messenger's delivering role and
/// brings no computed value up to date (a synthetic property's evaluation or check), since
/// either may be what the delivering thread waits for. A thread that holds a role never waits for
/// a turn, so no circle of such waits forms; and a wait ends once the delivering thread took no
/// step for ``DeliveryTurn/longestWait``, so a wait in a circle the user's code closes (a handler
/// that waits for a lock the waiting thread holds) is a pause, not a deadlock.
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

    /// After unlocking, for a thread whose work was queued behind another thread's delivery
    /// that is behind, once the thread did everything else its call does (so that it waits with
    /// nothing left over): waits to take the role over if the thread is free to wait, and the
    /// messenger is still behind. A thread that delivers owes the turn instead; one that brings
    /// a computed value up to date goes on. Also how a thread pays a turn it owes.
    @usableFromInline package func takeTurnIfBehind() {
        if herald_is_delivering() {
            OwedTurns.owe(self)
            return
        }
        guard DependencyTracking.holdsNothing else { return }
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
