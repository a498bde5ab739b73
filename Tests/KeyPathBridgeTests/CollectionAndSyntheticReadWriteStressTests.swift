import HeraldTestSupport
import KeyPathBridge
import Testing

/// A synthetic property of a heap-stored string, over a variable.
final class Labelled: @unchecked Sendable {
    @ObservableVar var number = 0
    @Synthetic({ (l: Labelled) in "a label long enough to be stored on the heap: \(l.number)" })
    var label: String
}

/// A class made anew by each evaluation.
final class BoxedNumber: @unchecked Sendable {
    let tag: Int
    init(_ tag: Int) { self.tag = tag }
}

/// Synthetic properties whose values live on the heap: a class, and an array of strings.
final class Boxing: @unchecked Sendable {
    @ObservableVar var number = 0
    @Synthetic({ (m: Boxing) in BoxedNumber(m.number) }) var boxed: BoxedNumber
    @Synthetic({ (m: Boxing) in (0..<4).map { "\(m.number) long enough for the heap \($0)" } })
    var strings: [String]
}

/// "Any method may be called from any thread" for collections and synthetic properties, as
/// users ship them: each of these crashed (use after free) only in optimized builds, where the
/// retain of storage read under a lock had been moved after the unlocking. CI runs them in a
/// release build, one test at a time. The loops are bounded by count.
@Suite("Stress: collection and synthetic reads during writes", .serialized)
struct CollectionAndSyntheticReadWriteStressTests {
    static let rounds = 1_000_000

    @Test func readingAnArraysElementsWhileAnotherThreadMutatesIt() {
        let array = ObservableArray([0])
        let strays = AtomicCount()
        concurrently(threads: 2) { thread in
            if thread == 0 {
                for index in 1...Self.rounds {
                    array.append(index)
                    if array.count > 64 { array.removeAll() }
                }
            } else {
                for _ in 0..<Self.rounds where array.elements.count > 65 { strays.increment() }
            }
        }
        #expect(strays.value == 0)
        #expect(array.last == Self.rounds)
    }

    @Test func readingADictionarysElementsWhileAnotherThreadMutatesIt() {
        let dictionary = ObservableDictionary<Int, String>()
        let strays = AtomicCount()
        concurrently(threads: 2) { thread in
            if thread == 0 {
                for index in 1...Self.rounds {
                    dictionary[index % 64] = "a value long enough to be stored on the heap"
                    if index % 97 == 0 { dictionary.removeAll() }
                }
            } else {
                for _ in 0..<Self.rounds where dictionary.elements.count > 64 {
                    strays.increment()
                }
            }
        }
        #expect(strays.value == 0)
    }

    @Test func replacingAllOfAnArrayWhileAnotherThreadAppendsInsertsAndPops() {
        let array = ObservableArray([1, 2, 3])
        concurrently(threads: 2) { thread in
            if thread == 0 {
                for index in 0..<Self.rounds / 4 { array.replaceAll(with: [index, index + 1]) }
            } else {
                for index in 0..<Self.rounds / 4 {
                    switch index % 3 {
                    case 0: array.append(index)
                    case 1: array.insert(index, at: 0)
                    default: _ = array.popLast()
                    }
                }
            }
        }
        // Whatever the interleaving, each mutation was whole: the contents are a valid array.
        #expect(array.elements.count == array.count)
    }

    @Test func readingASyntheticStringWhileAnotherThreadWritesItsSource() {
        let labelled = Labelled()
        let strays = AtomicCount()
        let prefix = "a label long enough to be stored on the heap: "
        concurrently(threads: 3) { thread in
            if thread == 0 {
                for index in 1...Self.rounds { labelled.number = index }
            } else {
                for _ in 0..<Self.rounds where !labelled.label.hasPrefix(prefix) {
                    strays.increment()
                }
            }
        }
        #expect(strays.value == 0)
        #expect(labelled.label == prefix + String(Self.rounds))
    }

    @Test func readingASetsElementsWhileAnotherThreadMutatesIt() {
        let set = ObservableSet<String>([])
        let strays = AtomicCount()
        concurrently(threads: 3) { thread in
            if thread == 0 {
                for index in 1...300_000 {
                    _ = set.insert("member number \(index) long enough for the heap")
                    if set.count > 32 { set.removeAll() }
                }
            } else {
                for _ in 0..<300_000 where set.elements.count > 33 { strays.increment() }
            }
        }
        #expect(strays.value == 0)
    }

    @Test func readingObservedAndUnobservedSyntheticObjectsWhileTheSourceChanges() {
        let model = Boxing()
        let observer = TestObserver()
        observer.observe(model.$strings) { _ in }
        let bad = AtomicCount()
        concurrently(threads: 3) { thread in
            for index in 1...300_000 {
                switch thread {
                case 0: model.number = index
                case 1: if model.boxed.tag < 0 { bad.increment() }
                default: if model.strings.count != 4 { bad.increment() }
                }
            }
        }
        #expect(bad.value == 0)
    }
}
