import HeraldTestSupport
import Testing

@testable import Messaging

/// "Any method may be called from any thread", as users ship it: these programs crashed (use
/// after free) only in optimized builds, where the retain of a reference read under a lock had
/// been moved after the unlocking. CI runs them in a release build, one test at a time (they
/// pass in a debug build before and after the fix: they guard what users ship). The loops are
/// bounded by count.
@Suite("Stress: reads and observations during writes", .serialized)
struct ReadWriteStressTests {
    /// A class, so that each read retains what another thread's set releases; its string (on
    /// the heap) is released with it.
    final class Payload: Sendable {
        let text: String
        init(_ number: Int) { text = "a string long enough to be stored on the heap: \(number)" }
        var number: Int { Int(text.split(separator: " ").last!) ?? -1 }
    }

    static let rounds = 300_000

    /// Runs `set` for 1...rounds on one thread while two others run `read`, and checks that
    /// every read saw a value some set stored (`read` returns -1 for anything else). The
    /// closures are written where the variable's type is known, so that its accessors are
    /// specialized and inlined as in a user's code.
    func readsDuringSets(
        set: @escaping @Sendable (Int) -> Void, read: @escaping @Sendable () -> Int
    ) {
        let strays = AtomicCount()
        concurrently(threads: 3) { thread in
            if thread == 0 {
                for index in 1...Self.rounds { set(index) }
            } else {
                for _ in 0..<Self.rounds {
                    let seen = read()
                    if seen < 0 || seen > Self.rounds { strays.increment() }
                }
            }
        }
        #expect(strays.value == 0)
        #expect(read() == Self.rounds)
    }

    @Test func readingAVariableOfAClassWhileAnotherThreadSetsIt() {
        let variable = Var(Payload(0))
        readsDuringSets(set: { variable.value = Payload($0) }, read: { variable.value.number })
    }

    @Test func readingAVariableOfAStringWhileAnotherThreadSetsIt() {
        // Long enough to live on the heap, not inline in the string.
        let prefix = "a string long enough to be stored on the heap, number "
        let variable = Var(prefix + "0")
        readsDuringSets(
            set: { variable.value = prefix + String($0) },
            read: { Int(variable.value.dropFirst(prefix.count)) ?? -1 })
    }

    @Test func readingAVariableOfAnArrayWhileAnotherThreadSetsIt() {
        let variable = Var([0, 0])
        readsDuringSets(
            set: { variable.value = [$0, $0] },
            read: {
                let pair = variable.value
                return pair[0] == pair[1] ? pair[0] : -1
            })
    }

    @Test func sendsWhileAnotherThreadStartsAndDropsObservations() {
        let number = Var(0)
        let keeper = TestObserver()
        let heard = AtomicCount()
        keeper.observe(number) { _ in heard.increment() }
        concurrently(threads: 2) { thread in
            if thread == 0 {
                for index in 1...Self.rounds { number.value = index }
            } else {
                for _ in 0..<Self.rounds {
                    let watch = Observing(number) { _ in }
                    withExtendedLifetime(watch) {}
                }
            }
        }
        #expect(heard.value == Self.rounds)
    }

    @Test func sendsWhileAnotherThreadObservesAndStops() {
        let number = Var(0)
        let keeper = TestObserver()
        let heard = AtomicCount()
        keeper.observe(number) { _ in heard.increment() }
        let churner = TestObserver()
        concurrently(threads: 2) { thread in
            if thread == 0 {
                for index in 1...Self.rounds { number.value = index }
            } else {
                for _ in 0..<Self.rounds / 2 {
                    churner.observe(number) { _ in }
                    churner.stopObserving(number)
                }
            }
        }
        #expect(heard.value == Self.rounds)
        #expect(!churner.isObserving(number))
    }

    @Test func readingSitesAndTheSoleConnectionWhileObservationsComeAndGo() {
        let number = Var(0)
        let bad = AtomicCount()
        concurrently(threads: 3) { thread in
            for index in 1...100_000 {
                switch thread {
                case 0:
                    let o = Observing(number) { _ in }
                    number.value = index
                    withExtendedLifetime(o) {}
                case 1:
                    if number.observationSites.count > 1 { bad.increment() }
                default:
                    if let sole = number.core.soleConnection, !(sole is Connection<Update<Int>>) {
                        bad.increment()
                    }
                }
            }
        }
        #expect(bad.value == 0)
    }
}
