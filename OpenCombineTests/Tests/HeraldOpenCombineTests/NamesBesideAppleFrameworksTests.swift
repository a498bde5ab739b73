import Foundation
import HeraldOpenCombine
import KeyPathBridge
import Observation
import OpenCombine
import Synchronization
import Testing

// Every public Herald type, named unqualified in a file that imports Foundation, Observation and
// a Combine-compatible package beside Herald: that this file compiles is the proof that no name
// clashes. The one exception is SwiftObserver's `ObservableObject`, kept for the drop-in, which
// Combine has too: qualify it (`Messaging.ObservableObject`), as README says.
private typealias Names = (
    AnyAuthor, ArrayBatchUpdates, ArrayChange<Int>, ArrayEdit<Int>,
    AuthorFilter<Messenger<Int>>, Cache<Messenger<Int>, Int>,
    CacheOnOptionalMessage<Messenger<Int?>, Int>, Coalescer,
    CombineLatest<Var<Int>, Var<Int>>, DeclarationSite, DictionaryChange<String, Int>,
    Filter<Messenger<Int>, Int>, ImmediateMessageScheduler, Inspector<NSObject>, KeyChange<Int>,
    MainQueueMessageScheduler, Map<Messenger<Int>, Int>, Mapper<Messenger<Int>, Int>,
    Merge<Int>, any MessageScheduler, MainActorDelivery,
    MainActorObservationChain<Messenger<Int>, Int>,
    ArrayBatchUpdates.Move, ObservableArray<Int>,
    any ObservableCache,
    ObservableDictionary<String, Int>, any ObservableProperty<Int>, ObservableSet<Int>,
    ObservableVar<Int>, ObservationChain<Messenger<Int>, Int>, ObservationOptions,
    ObservationPublisher<Var<Int>>, ObservationTransformer<Messenger<Int>, Int>,
    ObservedPath<NSObject, Int>, any Observer, Observing<Messenger<Int>>, PathDiagnostics,
    PathError, PropertyPath<NSObject, Int>, PropertyReport, Receiver,
    Rescheduled<Messenger<Int>>, SetChange<Int>, any SettableProperty<Int>,
    SwitchToLatest<Messenger<Messenger<Int>>, Messenger<Int>>, Synthetic<NSObject, Int>,
    SyntheticDependency<NSObject>, any SyntheticPropertyOwner, TestMessageScheduler,
    Unwrapper<Messenger<Int?>, Int>, Update<Int>, Var<Int>, Variable<Int>, Weak<Messenger<Int>>,
    any Messaging.ObservableObject<Int>
)

@Suite("Herald's names beside Foundation, Observation and Combine")
struct NamesBesideAppleFrameworksTests {
    @Test func theRenamedTypesWorkUnqualifiedBesideCombine() {
        let scheduler = TestMessageScheduler()
        let first = Var(1)
        let second = Var(2)
        var sums: [Int] = []
        let subscription = combine(first, second) { $0.new + $1.new }
            .publisher()
            .sink { sums.append($0) }
        let combined: CombineLatest<Var<Int>, Var<Int>> = combine(first, second)
        first.value = 10
        #expect(sums == [12])
        #expect(combined.latestMessage.0.new == 10)
        // Herald's schedulers, where Combine's `Scheduler` and `ImmediateScheduler` are visible.
        let immediate: any MessageScheduler = .immediate
        let ran = Mutex<[String]>([])
        immediate.schedule { ran.withLock { $0.append("immediate") } }
        scheduler.schedule { ran.withLock { $0.append("test") } }
        #expect(ran.withLock { $0 } == ["immediate"])
        scheduler.runTurn()
        #expect(ran.withLock { $0 } == ["immediate", "test"])
        _ = MainQueueMessageScheduler()
        _ = ImmediateScheduler.shared  // Combine's own, beside them
        withExtendedLifetime(subscription) {}
    }
}
