import KeyPathBridge

/// The contents before and after W11-diff's replacement: 100,000 distinct elements, then
/// 10,000 of them removed, 10,000 new ones inserted and 2,000 moved, at seeded positions.
func w11DiffContents(size: Int) -> (old: [Int], new: [Int]) {
    var random = SplitMix(seed: 1_111)
    let old = Array(0..<size)
    var new = old
    for _ in 0..<(size / 10) {
        new.remove(at: Int.random(in: 0..<new.count, using: &random))
    }
    for added in 0..<(size / 10) {
        new.insert(size + added, at: Int.random(in: 0...new.count, using: &random))
    }
    for _ in 0..<(size / 50) {
        let moved = new.remove(at: Int.random(in: 0..<new.count, using: &random))
        new.insert(moved, at: Int.random(in: 0...new.count, using: &random))
    }
    return (old, new)
}

/// W11-diff: `replaceAll(with:)` on 100,000 distinct elements with 10,000 removed, 10,000
/// inserted and 2,000 moved, observed by one observer of the change set. RAW: the standard
/// library's `difference(from:)`, then applying it. Each trial replaces once, from fresh
/// contents.
func w11Diff() -> Workload {
    let size = 100_000
    let (old, new) = w11DiffContents(size: size)
    let checked = Counter()
    return Workload(
        id: "W11-diff",
        summary: "replaceAll of 100,000 distinct elements: 10,000 out, 10,000 in, 2,000 moved",
        operations: 1, unit: "replace",
        notApplicable: [
            .openCombine: "no diff of its own: the peer is the standard library's",
            .observation: "no diff of its own: the peer is the standard library's",
        ],
        targets: [.time(atMost: 0.1, of: .raw)],
        cases: [
            Case(.raw) {
                var contents = old
                return {
                    let difference = new.difference(from: contents)
                    guard let applied = contents.applying(difference) else {
                        preconditionFailure("W11-diff: the difference did not apply")
                    }
                    contents = applied
                    return difference.insertions.count &+ difference.removals.count
                }
            },
            Case(.herald) {
                // Once per run, untimed: the change set transforms the old contents into the
                // new ones (applying it edit by edit is slower than the diff).
                if checked.value == 0 {
                    checked.value = 1
                    let array = ObservableArray(old)
                    let observer = HeraldObserver()
                    var mirror = old
                    observer.observe(array) { $0.apply(to: &mirror) }
                    array.replaceAll(with: new)
                    precondition(mirror == new, "W11-diff: the change set did not apply")
                }
                let array = ObservableArray(old)
                let observer = HeraldObserver()
                let edits = Counter()
                observer.observe(array) { change in edits.value &+= change.edits.count }
                return {
                    array.replaceAll(with: new)
                    withExtendedLifetime(observer) {}
                    return edits.value
                }
            },
        ])
}
