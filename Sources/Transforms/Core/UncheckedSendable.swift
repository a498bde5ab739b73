/// Carries a value into a `@Sendable` closure. Herald hands messages from the thread that sends
/// to the thread that delivers; whether a message type is safe to share is the sender's call, as
/// it is for any message.
@usableFromInline
package struct UncheckedSendable<Value>: @unchecked Sendable {
    @usableFromInline package let value: Value
    @usableFromInline package init(_ value: Value) { self.value = value }
}
