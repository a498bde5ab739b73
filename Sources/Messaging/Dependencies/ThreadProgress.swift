/// What a thread is computing: the computed properties it evaluates or checks, outermost first
/// (for a cycle's message, which names them).
package struct ThreadProgress {
    /// Not retained: the thread's context lives as long as the thread.
    private let context: Unmanaged<ThreadContext>

    /// The calling thread's.
    package static var ofThisThread: ThreadProgress {
        ThreadProgress(context: .passUnretained(ThreadContext.forThisThread))
    }

    /// The computed properties the thread evaluates or checks, outermost first, also those that
    /// ``DependencyTracking/withoutFrames(_:)`` set aside. Only on the thread itself, or while the
    /// thread is alive and cannot change them (it waits, and cannot stop waiting meanwhile), with
    /// a lock taken after it began to wait.
    package var dependents: [any Dependent] {
        context._withUnsafeGuaranteedRef { context in
            let sections = context.hidden + [.init(top: context.top, checking: context.checking)]
            return sections.flatMap(Self.inOrder).compactMap {
                $0.takeUnretainedValue().dependent
            }
        }
    }

    /// The computed properties the thread checks inside its innermost evaluation (or outside
    /// every evaluation, if none is open), innermost first: each check is made for the one
    /// outside it, and the outermost for a read (the evaluation's, or one outside any). Those
    /// that ``DependencyTracking/withoutFrames(_:)`` set aside are not among them. Only on the
    /// thread itself.
    package var innermostChecks: [any Dependent] {
        context._withUnsafeGuaranteedRef { context in
            var checks: [any Dependent] = []
            var next = context.checking
            while let frame = next?.takeUnretainedValue(),
                frame.checkedInside?.toOpaque() == context.top?.toOpaque()
            {
                if let dependent = frame.dependent { checks.append(dependent) }
                next = frame.checkParent
            }
            return checks
        }
    }

    /// How many circles of reads a thread may leave (where dependencies switched while it
    /// computed, it reads a value that may be stale, and computes again) before its outermost
    /// refresh ends: a function that changes what it read overtakes its own evaluation every
    /// time, and a cycle through it would otherwise be left and computed again forever.
    package static let circlesAllowed = 100

    /// Whether the thread may leave another circle of reads (see ``circlesAllowed``). Only on the
    /// thread itself, or while it waits (see ``dependents``).
    package var mayLeaveCircle: Bool {
        context._withUnsafeGuaranteedRef { $0.leftCircles < Self.circlesAllowed }
    }

    /// Counts a circle of reads the thread leaves (see ``mayLeaveCircle``). Only on the thread
    /// itself.
    package func countCircleLeft() {
        context._withUnsafeGuaranteedRef { $0.leftCircles += 1 }
    }

    /// The frames evaluated and checked in `section`, outermost first. Checks and evaluations
    /// nest; each check comes right after the frame that was innermost when it began (a frame
    /// opened during the check is inside it).
    private static func inOrder(_ section: ThreadContext.Section) -> [Unmanaged<EvaluationFrame>] {
        let frames = chain(from: section.top) { $0.parent }
        let checked = chain(from: section.checking) { $0.checkParent }
        func checks(inside frame: Unmanaged<EvaluationFrame>?) -> [Unmanaged<EvaluationFrame>] {
            checked.filter {
                $0.takeUnretainedValue().checkedInside?.toOpaque() == frame?.toOpaque()
            }
        }
        var order = checks(inside: nil)
        for frame in frames { order += [frame] + checks(inside: frame) }
        return order
    }

    /// The frames from `start` through `next`, outermost (the last reached) first.
    private static func chain(
        from start: Unmanaged<EvaluationFrame>?,
        _ next: (EvaluationFrame) -> Unmanaged<EvaluationFrame>?
    ) -> [Unmanaged<EvaluationFrame>] {
        var chain: [Unmanaged<EvaluationFrame>] = []
        var current = start
        while let frame = current {
            chain.append(frame)
            current = next(frame.takeUnretainedValue())
        }
        return chain.reversed()
    }
}
