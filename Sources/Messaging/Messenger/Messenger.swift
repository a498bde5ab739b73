/// The object that delivers messages to observers; every observable object has one.
///
/// Use a messenger directly for the messenger (notifier) pattern:
///
/// ```swift
/// let textMessenger = Messenger<String>()
/// observer.observe(textMessenger) { text in print(text) }
/// textMessenger.send("my message")
/// // Prints "my message"
/// ```
///
/// or subclass it to make an object observable:
///
/// ```swift
/// final class Model: Messenger<Event> {
///     func save() { send(.didSave) }
/// }
/// ```
///
/// See ``ObservableObject`` for the delivery order and threading rules. A messenger is
/// thread-safe: any method may be called from any thread.
///
/// `Messenger` is not `Sendable` itself, because it is open for subclassing and a subclass's own
/// state is the subclass's business (Swift would make every subclass restate the conformance). A
/// final subclass whose own state is safe may declare `@unchecked Sendable`, as ``Variable``
/// does:
///
/// ```swift
/// final class Notifier: Messenger<Note>, @unchecked Sendable {}
/// ```
///
/// - Complexity: sending is O(*n*) in the number of observations; it allocates nothing unless
///   another send is in progress (then the message is queued).
open class Messenger<Message>: ObservableObject {
    @usableFromInline package final let core: MessengerCore<Message>

    /// Creates a messenger with no observers.
    public init() {
        core = MessengerCore()
    }

    /// Creates a messenger around an existing core, for Herald's own observable objects that
    /// must wire their core before `init` finishes.
    @usableFromInline
    package init(core: MessengerCore<Message>) {
        self.core = core
    }

    deinit {
        core.tearDown()
    }

    /// A messenger is its own messenger.
    public final var messenger: Messenger<Message> { self }
}
