import Dispatch
import HeraldTestSupport
import KeyPathBridge
import Observation
import Testing

/// Observation → Herald: a synthetic property that reads a property of an `@Observable` object
/// depends on it as on a Herald property. Observation announces a change before it stores the
/// value; Herald invalidates at once and tells observers once the set is over (the main queue's
/// next turn, for a set made on it), so no observer hears of a value computed from the old state
/// as new.
@Suite("Synthetic properties depend on the @Observable properties they read")
@MainActor
struct SyntheticObservedSourcesTests {
    @Observable final class Settings: @unchecked Sendable {  // set on the main actor only
        var unit = "°C"
        var precision = 0
        var showsUnit = true
    }

    /// An `@Observable` type written by hand, as the macro would, with a hook that runs inside
    /// the set after Observation announced the change and before the value is stored: where a
    /// read of a dependent property would compute from the old value.
    final class Thermometer: Observable, @unchecked Sendable {
        private let registrar = ObservationRegistrar()
        private var storedCelsius = 20
        /// Runs during each set, between the announcement and the store.
        var beforeStore: (() -> Void)?

        var celsius: Int {
            get {
                registrar.access(self, keyPath: \.celsius)
                return storedCelsius
            }
            set {
                registrar.withMutation(of: self, keyPath: \.celsius) {
                    beforeStore?()
                    storedCelsius = newValue
                }
            }
        }
    }

    final class Reading: @unchecked Sendable {  // its own state is Herald's
        let settings: Settings
        let thermometer: Thermometer
        @ObservableVar var label = "Kitchen"
        @Synthetic(
            tracksObservation: true,
            { (r: Reading) in
                "\(r.thermometer.celsius)\(r.settings.unit)"
            })
        var text: String
        @Synthetic(tracksObservation: true, { (r: Reading) in r.label + ": " + r.text })
        var line: String
        @Synthetic(
            tracksObservation: true,
            { (r: Reading) in
                r.settings.showsUnit ? "\(r.thermometer.celsius) \(r.settings.unit)" : r.label
            })
        var caption: String
        @ObservableVar var showsTemperature = true
        @Synthetic(
            tracksObservation: true,
            { (r: Reading) in r.showsTemperature ? "\(r.thermometer.celsius)°" : r.label })
        var summary: String
        /// Not declared to track Observation: it depends on Herald's properties only.
        @Synthetic({ (r: Reading) in "\(r.label) \(r.settings.unit)" }) var untracked: String

        init(settings: Settings = Settings(), thermometer: Thermometer = Thermometer()) {
            self.settings = settings
            self.thermometer = thermometer
        }
    }

    @Test func aLazyPropertyIsInvalidAfterTheChangeAndComputesTheNewValue() {
        let reading = Reading()
        #expect(reading.text == "20°C")
        #expect(reading.$text.isValid)
        reading.settings.unit = "°F"
        #expect(!reading.$text.isValid)
        #expect(reading.text == "20°F")
        reading.thermometer.celsius = 25
        #expect(reading.text == "25°F")
        #expect(reading.$text.evaluationCount == 3)
    }

    @Test func aPropertyNotDeclaredToTrackObservationDependsOnHeraldPropertiesOnly() {
        let reading = Reading()
        #expect(reading.untracked == "Kitchen °C")
        reading.settings.unit = "°F"
        #expect(reading.$untracked.isValid)
        #expect(reading.untracked == "Kitchen °C")
        reading.label = "Hall"
        #expect(reading.untracked == "Hall °F")
    }

    @Test func aPropertyReadOnlyWhileTheObjectIsUnchangedComputesOnce() {
        let reading = Reading()
        #expect(reading.text == "20°C")
        #expect(reading.text == "20°C")
        reading.settings.precision = 2  // not read by `text`
        #expect(reading.$text.isValid)
        #expect(reading.text == "20°C")
        #expect(reading.$text.evaluationCount == 1)
    }

    @Test func whatDependsOnThePropertyIsInvalidatedToo() {
        let reading = Reading()
        #expect(reading.line == "Kitchen: 20°C")
        reading.settings.unit = "K"
        #expect(!reading.$line.isValid)
        #expect(reading.line == "Kitchen: 20K")
    }

    @Test func observersHearTheNewValueOnceTheSetIsOver() async {
        let reading = Reading()
        let observer = TestObserver()
        let updates = Recording<String>()
        observer.observe(reading.$text) { updates.append("\($0.old) → \($0.new)") }
        reading.settings.unit = "°F"
        // Observation announced the change before storing the value: nothing is told yet.
        #expect(updates.elements.isEmpty)
        await drainMainQueue()
        #expect(updates.elements == ["20°C → 20°F"])
        reading.thermometer.celsius = 30
        await drainMainQueue()
        #expect(updates.elements == ["20°C → 20°F", "20°F → 30°F"])
    }

    @Test func observersOfWhatDependsOnThePropertyHearTheNewValueToo() async {
        let reading = Reading()
        let observer = TestObserver()
        let lines = Recording<String>()
        observer.observe(reading.$line) { lines.append($0.new) }
        reading.settings.unit = "K"
        await drainMainQueue()
        #expect(lines.elements == ["Kitchen: 20K"])
        reading.label = "Attic"  // a Herald source, told at once as always
        #expect(lines.elements == ["Kitchen: 20K", "Attic: 20K"])
    }

    @Test func aValueComputedBeforeTheStoreIsNeitherKeptNorTold() async {
        let reading = Reading()
        let observer = TestObserver()
        let updates = Recording<String>()
        observer.observe(reading.$line) { updates.append($0.new) }
        var readDuringTheSet: [String] = []
        reading.thermometer.beforeStore = { [unowned reading] in
            // The property is invalid here and computes from the value not stored yet.
            readDuringTheSet.append(reading.text)
            readDuringTheSet.append(reading.line)
        }
        reading.thermometer.celsius = 21
        #expect(readDuringTheSet == ["20°C", "Kitchen: 20°C"])
        // Read after the set (before the main queue's turn): the new value, not the one
        // computed during the set.
        #expect(reading.text == "21°C")
        #expect(reading.line == "Kitchen: 21°C")
        await drainMainQueue()
        #expect(updates.elements == ["Kitchen: 21°C"])
        #expect(reading.line == "Kitchen: 21°C")
        #expect(reading.$line.isValid)
    }

    @Test func aPropertyThatNoLongerReadsAnObjectsPropertyIsNotInvalidatedByIt() async {
        let reading = Reading()
        #expect(reading.caption == "20 °C")
        reading.settings.showsUnit = false
        await drainMainQueue()
        #expect(reading.caption == "Kitchen")
        let evaluations = reading.$caption.evaluationCount
        reading.thermometer.celsius = 5  // read by the first evaluation only
        reading.settings.unit = "°F"
        #expect(reading.$caption.isValid)
        await drainMainQueue()
        #expect(reading.$caption.isValid)
        #expect(reading.caption == "Kitchen")
        #expect(reading.$caption.evaluationCount == evaluations)
        reading.settings.showsUnit = true
        #expect(reading.caption == "5 °F")
    }

    @Test func untilTheSetIsOverEveryReadComputesAndAfterItTheValueIsKept() async {
        let reading = Reading()
        #expect(reading.text == "20°C")
        reading.settings.unit = "°F"
        #expect(reading.text == "20°F")
        #expect(reading.text == "20°F")
        #expect(!reading.$text.isValid)  // computed from what may be the old value: not kept
        await drainMainQueue()
        #expect(reading.text == "20°F")
        #expect(reading.$text.isValid)
        #expect(reading.text == "20°F")
        #expect(reading.$text.evaluationCount == 4)
    }

    @Test(.timeLimit(.minutes(1)))
    func aHandlerThatSetsAnObservablePropertyInAPropagationEnds() async {
        // The handler runs when `label` changes, before `line` (which reads both) recomputes in
        // the propagation: `text`, announced, cannot give `line` a value to keep before the set
        // settles, on this thread's next turn. `line` waits for that, told the settled value.
        let reading = Reading()
        #expect(reading.text == "20°C")  // cached: `line` reads no `@Observable` property itself
        let observer = TestObserver()
        let lines = Recording<String>()
        observer.observe(reading.$line) { lines.append($0.new) }
        observer.observe(reading.$label) { [unowned reading] update in
            reading.thermometer.celsius = update.new.count
        }
        reading.label = "Cellar"
        await drainMainQueue()
        #expect(lines.elements == ["Cellar: 6°C"])
        #expect(reading.line == "Cellar: 6°C")
        #expect(reading.$line.isValid)
    }

    @Test func aSetOnAnotherThreadIsSettledOnTheMainQueue() async {
        let reading = Reading()
        let observer = TestObserver()
        let texts = Recording<String>()
        observer.observe(reading.$text) { texts.append($0.new) }
        let thermometer = UncheckedBox(reading.thermometer)
        // Over before the main queue turns (the main thread waits for it): the settling, due
        // on the main queue, comes after the store.
        DispatchQueue.global().sync { thermometer.value.celsius = 40 }
        #expect(reading.text == "40°C")
        #expect(texts.elements.isEmpty)
        await drainMainQueue()
        #expect(texts.elements == ["40°C"])
    }

    @Test func aHybridSetAfterTheChangeStandsAndIsTold() async {
        let reading = Reading()
        let observer = TestObserver()
        let texts = Recording<String>()
        observer.observe(reading.$text) { texts.append($0.new) }
        reading.thermometer.celsius = 21
        reading.text = "manual"  // set after the change: newer than it
        await drainMainQueue()
        #expect(reading.text == "manual")
        #expect(texts.elements == ["manual"])
        reading.settings.unit = "K"  // a change after the set replaces it
        await drainMainQueue()
        #expect(texts.elements == ["manual", "21K"])
    }

    @Test func severalChangesBeforeATurnAreToldOnceWithTheLast() async {
        let reading = Reading()
        let observer = TestObserver()
        let lines = Recording<String>()
        observer.observe(reading.$line) { lines.append($0.new) }
        reading.thermometer.celsius = 21
        reading.settings.unit = "°F"
        reading.thermometer.celsius = 70
        await drainMainQueue()
        #expect(lines.elements == ["Kitchen: 70°F"])
    }

    @Test func aBatchOfHeraldAndObservableChangesTellsOnceWithBoth() async {
        let reading = Reading()
        let observer = TestObserver()
        let lines = Recording<String>()
        observer.observe(reading.$line) { lines.append($0.new) }
        batch {
            reading.settings.unit = "°F"
            reading.label = "Hall"
        }
        await drainMainQueue()
        #expect(lines.elements == ["Hall: 20°F"])
    }

    @Test func aChangeOfWhatOnlyAnEarlierEvaluationReadTellsNothing() async {
        // The branch switches with a Herald property, so the earlier evaluation's tracking of
        // `celsius` is still installed (Observation cannot cancel it): its change makes the
        // property compute once more, to the same value, and nobody hears of it.
        let reading = Reading()
        let observer = TestObserver()
        let summaries = Recording<String>()
        observer.observe(reading.$summary) { summaries.append($0.new) }
        reading.showsTemperature = false
        #expect(summaries.elements == ["Kitchen"])
        reading.thermometer.celsius = 30
        await drainMainQueue()
        #expect(summaries.elements == ["Kitchen"])
        #expect(reading.summary == "Kitchen")
        #expect(reading.$summary.isValid)
    }

    @Test func aChangeUnsettledElsewhereHoldsUpNoOtherProperty() {
        // `first` has a change announced and not settled (the main queue has not turned);
        // `second`, which reads nothing of it, propagates its Herald changes as always.
        let first = Reading()
        let second = Reading()
        #expect(first.text == "20°C")
        #expect(second.text == "20°C")
        let observer = TestObserver()
        let lines = Recording<String>()
        observer.observe(second.$line) { lines.append($0.new) }
        first.thermometer.celsius = 1
        second.label = "Attic"
        #expect(lines.elements == ["Attic: 20°C"])
    }

    @Test func aReadBeforeHeraldsAnnouncementInTheSameSetIsNotKept() async {
        // Another tracking's `onChange` may run before Herald's in the same set: it reads the
        // property, invalid, which computes from the old value; Herald's announcement after it
        // drops that value.
        let reading = Reading()
        #expect(reading.text == "20°C")
        reading.$text.invalidate()
        let reads = Recording<String>()
        _ = withObservationTracking {
            reading.settings.unit
        } onChange: { [unowned reading] in
            reads.append(reading.text)
        }
        reading.settings.unit = "°F"
        #expect(reads.elements == ["20°C"])
        #expect(reading.text == "20°F")
        await drainMainQueue()
        #expect(reading.text == "20°F")
    }

    @Test func aFunctionThatChangesAnObservablePropertyItReadIsReportedLikeACycle() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let ticker = Ticker()
            _ = ticker.next  // the tracking is installed after the function returned
            ticker.$next.invalidate()  // a Herald invalidation: the tracking stays installed
            _ = ticker.next  // changes what the last evaluation read and is tracked for
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("Ticker.next changed an @Observable property"), "\(text)")
        }
    }

    @Test func aPropertyKeepsNoOwnerOrObjectAlive() async {
        weak var weakReading: Reading?
        weak var weakSettings: Settings?
        do {
            let reading = Reading()
            weakReading = reading
            weakSettings = reading.settings
            #expect(reading.text == "20°C")
            let settings = reading.settings
            settings.unit = "°F"  // announced: the settling holds the property, not the owner
        }
        await drainMainQueue()
        #expect(weakReading == nil)
        #expect(weakSettings == nil)
    }
}

@Observable private final class Counter {
    var count = 0
}

/// Its function changes the `@Observable` property it reads.
private final class Ticker {
    let counter = Counter()
    @Synthetic(
        tracksObservation: true,
        { (ticker: Ticker) in
            let count = ticker.counter.count
            ticker.counter.count = count + 1
            return count
        })
    var next: Int
}

/// Carries a value to another thread (the test's own objects, set on one thread at a time).
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
