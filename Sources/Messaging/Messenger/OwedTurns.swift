import RuntimeShims

/// The turns a thread owes: messengers it queued work at, behind another thread's delivery that
/// was behind, while it could not wait (it was delivering itself). Kept in the thread's context,
/// and only until the thread's last role ends.
@usableFromInline
enum OwedTurns {
    /// Records that this thread owes `core` a turn.
    @usableFromInline
    static func owe(_ core: any DeliveryTurns) {
        ThreadContext.withThisThread { context in
            if !context.owedTurns.contains(where: { $0 === core }) {
                context.owedTurns.append(core)
            }
        }
        herald_set_owes_turns(true)
    }

    /// Pays the turns this thread owes, now that it holds no role; also those it comes to owe
    /// while paying (a turn it takes delivers, and may queue work elsewhere). Whether it may wait
    /// is decided where every wait is, in `takeTurnIfBehind()`: a thread that is bringing a
    /// computed value up to date does not, and so forgets what it owes.
    @usableFromInline
    static func pay() {
        ThreadContext.withThisThread { context in
            // A turn taken here ends with the same call, which leaves the rest to this loop.
            guard !context.isPayingOwedTurns else { return }
            context.isPayingOwedTurns = true
            defer { context.isPayingOwedTurns = false }
            while !context.owedTurns.isEmpty {
                let owed = context.owedTurns
                context.owedTurns = []
                herald_set_owes_turns(false)
                for core in owed { core.takeTurnIfBehind() }
            }
        }
    }
}
