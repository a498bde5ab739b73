import Messaging

// SwiftObserver's names for Herald's stand-alone transforms, so that code written for it reads
// on (Docs/Messaging.md, "Coming from SwiftObserver").

/// SwiftObserver's name for a ``Map``: `Mapper(origin) { transform }`.
public typealias Mapper<Origin: ObservableObject, Mapped> = Map<Origin, Mapped>

/// SwiftObserver's name for the ``Filter`` that unwraps optional messages: `Unwrapper(origin)`.
public typealias Unwrapper<Origin: ObservableObject, Unwrapped> = Filter<Origin, Unwrapped>

/// SwiftObserver's name for the ``Filter`` that keeps messages by author:
/// `AuthorFilter(origin, keepingAuthors: { author in … })`.
public typealias AuthorFilter<Origin: ObservableObject> = Filter<Origin, Origin.Message>

/// SwiftObserver's name for an ad hoc chain of transforms on an observation (an
/// ``ObservationChain``: `observer.observe(origin).map { … }`).
public typealias ObservationTransformer<Origin: ObservableObject, Message> =
    ObservationChain<Origin, Message>
