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

/// Combine's `CombineLatest` for OpenCombine, which (as of 0.14) lacks it: one output, the latest
/// value of every upstream, per upstream output once each has sent one. Built from OpenCombine's
/// own `sink` and `PassthroughSubject`, so it costs what a CombineLatest costs there, and shows
/// the same glitches: in a diamond it sends once per path a write takes.
final class CombineLatestAll {
    private var latest: [Int?]
    private var missing: Int
    private let subject = PassthroughSubject<[Int], Never>()
    private var upstreams: [AnyCancellable] = []

    init(_ publishers: [AnyPublisher<Int, Never>]) {
        latest = Array(repeating: nil, count: publishers.count)
        missing = publishers.count
        for (index, publisher) in publishers.enumerated() {
            upstreams.append(
                publisher.sink { [unowned self] value in
                    if latest[index] == nil { missing -= 1 }
                    latest[index] = value
                    if missing == 0 { subject.send(latest.map { $0! }) }
                })
        }
    }

    /// The combined values.
    var publisher: AnyPublisher<[Int], Never> { subject.eraseToAnyPublisher() }
}

extension Publisher where Output == Int, Failure == Never {
    /// The latest values of `self` and `others`, combined (see `CombineLatestAll`), kept alive by
    /// the returned publisher's subscribers... and by `keep`, which the caller holds.
    func combineLatest(_ others: [AnyPublisher<Int, Never>], keep: inout [AnyObject])
        -> AnyPublisher<[Int], Never>
    {
        let combined = CombineLatestAll([eraseToAnyPublisher()] + others)
        keep.append(combined)
        return combined.publisher
    }
}
