import Messaging

/// A transform stage in continuation-passing form: given what receives its output, it returns
/// what receives its input. Stateful transforms are written once as a stage and used by both the
/// ad hoc and the stand-alone form.
@usableFromInline
typealias Stage<Input, Output> = (
    _ downstream: @escaping (Output, AnyAuthor) -> Void
) -> (Input, AnyAuthor) -> Void
