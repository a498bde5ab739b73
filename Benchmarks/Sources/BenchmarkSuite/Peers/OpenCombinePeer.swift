import OpenCombine

/// An object owning OpenCombine subscriptions, the way an app's observer stores them.
final class CombineObserver {
    var cancellables: [AnyCancellable] = []
}
