import KeyPathBridge

/// W11-each: an every-element path (`items.*.title`, typed) over an array of 20,000 objects
/// (`W11-each`) or 2,500 (`W11-each-2.5k`); a tenth of the elements removed one at a time (from
/// the end, so that the array's own removal costs the same at both sizes), each removal firing
/// the observation once (EBN's rule: an element that leaves has changed the path); ns per
/// removal. The per-removal cost must not grow with the array.
///
/// Each case's checksum is the number of fires; a trial that does not fire once per removal
/// fails the run.
func w11Each(elements count: Int) -> Workload {
    let removals = count / 10
    let large = count == 20_000
    return Workload(
        id: large ? "W11-each" : "W11-each-2.5k",
        summary: "remove 1 of \(Report.withSeparators(count)) elements under an items.*.title path",
        operations: removals, unit: "removal",
        notApplicable: [
            .openCombine: "OpenCombine has no path into a collection",
            .observation:
                "Observation has no path into a collection: a tracking of every element's title "
                + "is re-armed by hand and cannot tell an element that left",
        ],
        targets: large ? [.scaling(atMost: 2, of: "W11-each-2.5k")] : [],
        notifications: removals,
        cases: [
            Case(.raw) {
                // Each element calls the list's handler when its title changes; a removal
                // unhooks the element and tells the handler it left.
                let fires = Counter()
                let list = RawEachList(handler: { _ in fires.value &+= 1 })
                for index in 0..<count { list.append(RawEachItem(title: "\(index)")) }
                return {
                    for _ in 0..<removals { list.removeLast() }
                    return verified(fires.value, "RAW", removals)
                }
            },
            Case(.herald) {
                let fires = Counter()
                let lists = EachLists(count)
                let observer = HeraldObserver()
                observer.observe(
                    lists, PropertyPath(\EachLists.items).appendingEachElement().appending(\.$title)
                ) { _ in fires.value &+= 1 }
                return {
                    for _ in 0..<removals { lists.items.removeLast() }
                    withExtendedLifetime(observer) {}
                    return verified(fires.value, "Herald", removals)
                }
            },
        ])
}

/// `fires`, the trial's checksum; fails the run unless it is one per removal.
private func verified(_ fires: Int, _ system: String, _ removals: Int) -> Int {
    guard fires == removals else {
        fatalError("W11-each: \(system) fired \(fires) times for \(removals) removals")
    }
    return fires
}

/// W11-each's Herald model: an array of objects with an observable title.
private final class EachLists {
    final class Item {
        @ObservableVar var title: String

        init(_ title: String) {
            self.title = title
        }
    }

    let items: ObservableArray<Item>

    init(_ count: Int) {
        items = ObservableArray((0..<count).map { Item("\($0)") })
    }
}

/// RAW: an element whose title change calls its list's handler while it is in the list.
private final class RawEachItem {
    var onChange: ((RawEachItem) -> Void)?
    var title: String {
        didSet { onChange?(self) }
    }

    init(title: String) {
        self.title = title
    }
}

/// RAW: the list hooks its elements as they join and unhooks them as they leave, telling its
/// handler of each (the every-element observation).
private final class RawEachList {
    private var items: [RawEachItem] = []
    private let handler: (RawEachItem?) -> Void

    init(handler: @escaping (RawEachItem?) -> Void) {
        self.handler = handler
    }

    func append(_ item: RawEachItem) {
        item.onChange = { [handler] in handler($0) }
        items.append(item)
    }

    func removeLast() {
        let item = items.removeLast()
        item.onChange = nil
        handler(nil)  // it left
    }
}
