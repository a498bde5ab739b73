import HeraldTestSupport
import KeyPathBridge
import Messaging
import Testing

final class Pantry {
    let jars: ObservableArray<Int> = [1, 2, 3]
    let labels: ObservableDictionary<String, String> = [:]
    let tags: ObservableSet<String> = []
    @ObservableVar var shelf = 0
}

/// Collection components with Herald's other tools: coalesced observation, bindings (to
/// elements and keys, and from parts) and the Inspector.
@Suite("Collections with coalescing, bindings and the Inspector")
struct CollectionToolsTests {
    final class Label: Observer {
        let receiver = Receiver()
        let shown = Recording<String>()
    }

    @Test func aCoalescedBlockRunsOncePerFlushForCollectionParts() {
        let scheduler = TestMessageScheduler()
        let pantry = Pantry()
        let label = Label()
        label.observeCoalesced(
            pantry, PropertyPath(\Pantry.jars).appendingCount(),
            PropertyPath(\Pantry.jars).appendingElement(at: 0),
            PropertyPath(\Pantry.labels).appendingValue(forKey: "lid"),
            PropertyPath(\Pantry.tags).appendingChanges(),
            in: Coalescer(scheduler: scheduler)
        ) { label, pantry in
            label.shown.append("\(pantry.jars.elements) \(pantry.labels["lid"] ?? "-")")
        }

        pantry.jars.append(4)
        pantry.jars[0] = 9
        pantry.labels["lid"] = "red"
        pantry.tags.insert("jam")
        #expect(label.shown.elements.isEmpty)
        #expect(scheduler.pendingCount == 1)
        scheduler.runTurn()
        pantry.jars[2] = 8  // an element no path follows, the same count: nothing
        scheduler.flush()

        #expect(label.shown.elements == ["[9, 2, 3, 4] red"])
    }

    @Test func aBindingWritesADictionaryKeyAddingIt() {
        let source = Node()
        let pantry = Pantry()
        let binding = bind(
            source, PropertyPath(\Node.value),
            to: pantry, PropertyPath(\Pantry.labels).appendingValue(forKey: "size")
        ) { "\($0)" }

        #expect(pantry.labels.elements == ["size": "0"])  // in sync at once
        source.value.value = 3
        #expect(pantry.labels.elements == ["size": "3"])
        _ = binding
    }

    @Test func aBindingFromACollectionsCountKeepsATargetInSync() {
        let pantry = Pantry()
        let target = Node()
        let binding = bind(
            pantry, PropertyPath(\Pantry.jars).appendingCount(), to: target,
            PropertyPath(\Node.value)
        ) { $0 }

        #expect(target.value.value == 3)
        pantry.jars.removeAll()
        #expect(target.value.value == 0)
        _ = binding
    }

    @Test func theInspectorCountsACollectionsObservationsWithThoseOfItsParts() throws {
        let pantry = Pantry()
        let observer = TestObserver()
        observer.observe(pantry.jars) { _ in }
        observer.observe(pantry, PropertyPath(\Pantry.jars).appendingCount()) { _ in }
        observer.observe(pantry, PropertyPath(\Pantry.jars).appendingElement(at: 7)) { _ in }
        // Keys are observed on messengers of their own, fed by one observation of Herald's.
        observer.observe(pantry, PropertyPath(\Pantry.labels).appendingValue(forKey: "a")) { _ in
        }
        try observer.observe(pantry, path: "labels.b") { _ in }
        let inspector = Inspector(pantry)

        #expect(try inspector.observationCount(of: "jars") == 3)
        #expect(try inspector.observationCount(of: "labels") == 2)
        #expect(try inspector.observationCount(of: "tags") == 0)
        #expect(inspector.properties.map(\.name) == ["jars", "labels", "tags", "shelf"])
        #expect(inspector.report.contains("labels: 2 observations"))
        #expect(!inspector.report.contains("ObservableDictionary+Paths"))
        #expect(throws: PathError.self) { try inspector.observationCount(of: "lids") }
    }

    /// Every name the Inspector reports takes its observation-state hook: a stored collection's
    /// is the collection's, counting its parts' observations.
    @Test(arguments: ["jars", "labels", "tags"])
    func aCollectionHasAnObservationStateHookByName(name: String) throws {
        let pantry = Pantry()
        let states = Recording<Bool>()
        try Inspector(pantry).whenObservationStateChanges(of: name) { states.append($0) }
        let observer = TestObserver()

        let path = try observer.observe(pantry, path: "\(name).count") { _ in }  // 0 → 1
        try observer.observe(pantry, path: "\(name).count") { _ in }  // 1 → 2: no call
        path.stop()
        observer.stopObserving()  // → 0

        #expect(states.elements == [true, false])
    }

    /// A collection has no value to send as if it changed: triggering it says so, and an
    /// unknown name's error lists the collections among the names a path can use.
    @Test func triggeringACollectionIsAnErrorThatSaysWhy() {
        let pantry = Pantry()
        #expect(throws: PathError.notTriggerable("jars", type: "Pantry")) {
            try Inspector(pantry).trigger("jars")
        }
        #expect(
            throws: PathError.unknownProperty(
                "jar", type: "Pantry", path: "jar", known: ["jars", "labels", "tags", "shelf"])
        ) {
            try Inspector(pantry).trigger("jar")
        }
        #expect(
            throws: PathError.unknownProperty(
                "jar", type: "Pantry", path: "jar.count",
                known: ["jars", "labels", "tags", "shelf"])
        ) {
            try ObservedPath(pantry, path: "jar.count")
        }
    }

    @Test func breakOnChangeFollowsACollectionPart() throws {
        let pantry = Pantry()
        let lines = Recording<String>()
        let watch = try Inspector(pantry).breakOnChange("jars.#1") { lines.append($0) }

        pantry.jars.insert(0, at: 0)  // 1 moves to index 1
        pantry.jars[2] = 5  // another index: nothing

        #expect(lines.count == 1)
        #expect(lines.elements.first?.contains("jars.#1") == true)
        watch.stop()
    }

    /// The Inspector names the sites of a dictionary's live key observations: not Herald's own
    /// dispatcher (which the dictionary's `observationSites` lists), not a stopped observation.
    @Test func theInspectorNamesTheSitesOfADictionarysLiveKeyObservations() {
        let model = CollectionsModel()
        let observer = TestObserver()
        let first = observer.observe(
            model, PropertyPath(\CollectionsModel.words).appendingValue(forKey: "a")
        ) { _ in }
        let secondLine = UInt32(#line) + 1
        observer.observe(model, PropertyPath(\CollectionsModel.words).appendingValue(forKey: "b")) {
            _ in
        }
        first.stop()
        let words = Inspector(model).properties.first { $0.name == "words" }
        #expect(words?.observationSites.map(\.line) == [secondLine])
    }

    /// 354b2d3 leaves Herald's own dispatcher out of a dictionary's observations when the
    /// dictionary is a `let` property (`words: 1 observation`), but `Inspector(dictionary)`
    /// reports it as an observation of `self`, at a site inside Herald
    /// (`KeyPathBridge/ObservableDictionary+Paths.swift:0`): the same dictionary has one
    /// observer or two depending on where it is inspected from.
    @Test func theInspectorOfADictionaryDoesNotReportHeraldsDispatcherAsAnObservation() {
        let model = CollectionsModel()
        let observer = TestObserver()
        observer.observe(model, PropertyPath(\CollectionsModel.words).appendingValue(forKey: "k")) {
            _ in
        }
        #expect(Inspector(model).properties.first { $0.name == "words" }?.observationCount == 1)
        #expect(!Inspector(model.words).report.contains("ObservableDictionary+Paths.swift:0"))
    }
}
