import OpenCombine

/// An object owning OpenCombine subscriptions, the way an app's observer stores them.
final class CombineObserver {
    var cancellables: [AnyCancellable] = []
}

/// An object owning OpenCombine subscriptions by subject, so that it can stop observing one
/// subject without a search (W5-many).
final class KeyedCombineObserver {
    var cancellables: [ObjectIdentifier: AnyCancellable] = [:]
}
