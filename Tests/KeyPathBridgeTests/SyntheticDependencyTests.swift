import HeraldTestSupport
import Testing

@testable import KeyPathBridge

/// A diamond: left and right over one source, both over both.
final class Diamond {
    @ObservableVar var source = 1
    @Synthetic({ (d: Diamond) in d.source + 1 }) var left: Int
    @Synthetic({ (d: Diamond) in d.source * 10 }) var right: Int
    @Synthetic({ (d: Diamond) in "\(d.left)/\(d.right)" }) var both: String
}

/// A branch chosen by a variable.
final class Branching {
    @ObservableVar var useFirst = true
    @ObservableVar var first = "a"
    @ObservableVar var second = "b"
    @Synthetic({ (b: Branching) in b.useFirst ? b.first : b.second }) var chosen: String
}

/// A loader serving several properties of a dictionary-backed model.
final class Record: SyntheticPropertyOwner {
    let fields = ObservableDictionary<String, String>()
    let loads = Recording<String>()
    @Synthetic("name", loader: Record.field) var name: String?
    @Synthetic("email", loader: Record.field) var email: String?

    static func field(_ record: Record, _ key: String) -> String? {
        record.loads.append(key)
        return record.fields[key]
    }
}

/// A private collection with a public snapshot.
final class Playlist {
    let editableSongs = ObservableArray<String>()
    @Synthetic(snapshotOf: \Playlist.editableSongs) var songs: [String]
    let editableTags = ObservableSet<String>()
    @Synthetic(snapshotOf: \Playlist.editableTags) var tags: Set<String>
    let editableRatings = ObservableDictionary<String, Int>()
    @Synthetic(snapshotOf: \Playlist.editableRatings) var ratings: [String: Int]
}

/// Declared paths: a value read outside Herald, and a path unreachable at first.
final class DisplaySettings {
    @ObservableVar var separator = " "
}

final class Declared {
    @ObservableVar var settings: DisplaySettings? = nil
    nonisolated(unsafe) var plainSuffix = "!"
    @Synthetic(
        dependsOn: [.path(PropertyPath(\Declared.$settings).appending(\.$separator))],
        { (d: Declared) in "x" + (d.settings.map { _ in "+" } ?? "-") + d.plainSuffix })
    var typed: String
    @Synthetic(dependsOn: [.path("settings.separator")], { (d: Declared) in d.plainSuffix })
    var text: String
}

/// Subclasses keep the superclass's synthetic properties and may add their own.
class Shape: SyntheticPropertyOwner {
    @ObservableVar var side = 2.0
    @Synthetic({ (s: Shape) in s.side * s.side }) var area: Double
}

final class Cube: Shape {
    @Synthetic({ (c: Cube) in c.area * c.side }) var volume: Double
}

@Suite("Synthetic properties: dependencies, glitch-freedom, loaders, snapshots")
struct SyntheticDependencyTests {
    @Test("automatic dependencies: a branch not taken is not a dependency")
    func branchNotTakenIsNoDependency() {
        let branching = Branching()
        #expect(branching.chosen == "a")
        branching.second = "B"
        #expect(branching.$chosen.isValid)
        branching.useFirst = false
        #expect(branching.chosen == "B")
        branching.first = "A"
        #expect(branching.$chosen.isValid)
        #expect(branching.$chosen.evaluationCount == 2)
    }

    @Test("automatic dependencies: re-taking a branch gives a fresh value")
    func retakingBranchIsFresh() {
        let branching = Branching()
        _ = branching.chosen
        branching.useFirst = false
        _ = branching.chosen
        branching.first = "changed while not a dependency"
        branching.useFirst = true
        #expect(branching.chosen == "changed while not a dependency")
    }

    @Test("automatic dependencies: collections, their parts, and other objects")
    func collectionsAndOtherObjects() {
        final class Basket {
            let items = ObservableArray<Int>([1, 2])
            let other = Contact()
            @Synthetic({ (b: Basket) in "\(b.items.count):\(b.items.last ?? 0):\(b.other.first)" })
            var summary: String
        }
        let basket = Basket()
        #expect(basket.summary == "2:2:Ada")
        basket.items.append(5)
        #expect(basket.summary == "3:5:Ada")
        basket.other.first = "Grace"
        #expect(basket.summary == "3:5:Grace")
        basket.items[0] = 9
        #expect(!basket.$summary.isValid)
    }

    @Test("glitch-free: in a diamond each property computes at most once per change")
    func diamondComputesOnce() {
        let diamond = Diamond()
        let observer = TestObserver()
        let seen = Recording<String>()
        observer.observe(diamond.$both) { seen.append($0.new) }
        for value in 2...5 { diamond.source = value }
        #expect(diamond.$left.evaluationCount == 5)
        #expect(diamond.$right.evaluationCount == 5)
        #expect(diamond.$both.evaluationCount == 5)
        #expect(seen.elements == ["3/20", "4/30", "5/40", "6/50"])
    }

    @Test("glitch-free: no observer of anything sees a mix of old and new values")
    func noObserverSeesAMix() {
        let diamond = Diamond()
        let observer = TestObserver()
        let mixes = Recording<String>()
        func check(_ who: String) {
            let source = diamond.source
            let both = diamond.both
            if both != "\(source + 1)/\(source * 10)" { mixes.append("\(who): \(source) \(both)") }
        }
        observer.observe(diamond.$source) { _ in check("source") }
        observer.observe(diamond.$left) { _ in check("left") }
        observer.observe(diamond.$right) { _ in check("right") }
        observer.observe(diamond.$both) { _ in check("both") }
        for value in 2...20 { diamond.source = value }
        #expect(mixes.elements.isEmpty)
    }

    @Test("glitch-free: an observer of a synthetic property runs once per source change")
    func observerRunsOncePerChange() {
        let diamond = Diamond()
        let observer = TestObserver()
        let runs = Recording<Int>()
        observer.observe(diamond.$both) { _ in runs.append(diamond.source) }
        diamond.source = 7
        diamond.source = 8
        #expect(runs.elements == [7, 8])
    }

    @Test("glitch-free: coalesced observers run once per batch")
    func coalescedOncePerBatch() {
        let diamond = Diamond()
        let scheduler = TestScheduler()
        let observer = TestObserver()
        let runs = Recording<String>()
        observer.observeCoalesced(diamond, \.$both, in: Coalescer(scheduler: scheduler)) {
            _, diamond in runs.append(diamond.both)
        }
        diamond.source = 2
        diamond.source = 3
        scheduler.flush()
        #expect(runs.elements == ["4/30"])
    }

    @Test("a synthetic property is a binding's source")
    func bindingSource() {
        let contact = Contact()
        let label = Var("")
        let binding = bind(contact.$fullName, to: label)
        #expect(label.value == "Ada Lovelace")
        contact.first = "Grace"
        #expect(label.value == "Grace Lovelace")
        _ = binding
    }

    @Test("a synthetic property is reachable through string paths and Inspector")
    func stringPathsAndInspector() throws {
        let contact = Contact()
        let observer = TestObserver()
        let names = Recording<String?>()
        try observer.observe(contact, path: "fullName") { names.append($0 as? String) }
        contact.last = "King"
        #expect(names.elements == ["Ada King"])
        #expect(try Inspector(contact).observationCount(of: "fullName") == 1)
    }

    @Test("debugging: valid and invalid synthetic properties, and force-all-valid")
    func debuggingValidity() {
        let contact = Contact()
        _ = contact.fullName
        let inspector = Inspector(contact)
        #expect(inspector.validSyntheticProperties == ["fullName"])
        #expect(inspector.invalidSyntheticProperties == ["address", "shortName"])
        inspector.forceAllSyntheticPropertiesValid()
        #expect(inspector.invalidSyntheticProperties.isEmpty)
        #expect(inspector.validSyntheticProperties == ["fullName", "address", "shortName"])
    }

    @Test("custom loaders: one loader serves many properties")
    func customLoaders() {
        let record = Record()
        record.fields["name"] = "Ada"
        #expect(record.name == "Ada")
        #expect(record.email == nil)
        #expect(record.loads.elements == ["name", "email"])
        record.fields["email"] = "ada@example.com"
        #expect(record.email == "ada@example.com")
        #expect(record.name == "Ada")
        #expect(record.loads.elements == ["name", "email", "email", "name"])
    }

    @Test("public snapshot of a private collection: copied at most once per mutation")
    func snapshotCopiedOncePerMutation() {
        let playlist = Playlist()
        let observer = TestObserver()
        let updates = Recording<Update<[String]>>()
        observer.observe(playlist.$songs) { updates.append($0) }
        playlist.editableSongs.append("Blue")
        for _ in 0..<10 { #expect(playlist.songs == ["Blue"]) }
        playlist.editableSongs.append("Green")
        for _ in 0..<10 { #expect(playlist.songs == ["Blue", "Green"]) }
        #expect(playlist.$songs.evaluationCount == 3)
        #expect(updates.elements == [Update([], ["Blue"]), Update(["Blue"], ["Blue", "Green"])])
        playlist.editableTags.insert("calm")
        playlist.editableRatings["Blue"] = 5
        #expect(playlist.tags == ["calm"])
        #expect(playlist.ratings == ["Blue": 5])
        _ = playlist.tags
        #expect(playlist.$tags.evaluationCount == 1)
    }

    @Test("dependencies as paths: typed and string, unreachable at first, re-wired")
    func declaredPaths() {
        let declared = Declared()
        #expect(declared.typed == "x-!")
        #expect(declared.text == "!")
        declared.plainSuffix = "?"
        // A value outside Herald: no invalidation.
        #expect(declared.typed == "x-!")
        let settings = DisplaySettings()
        declared.settings = settings
        #expect(declared.typed == "x+?")
        #expect(declared.text == "?")
        declared.plainSuffix = "."
        settings.separator = "-"
        #expect(declared.typed == "x+.")
        #expect(declared.text == ".")
    }

    @Test("subclasses keep their superclass's synthetic properties and add their own")
    func subclasses() {
        let cube = Cube()
        #expect(cube.area == 4)
        #expect(cube.volume == 8)
        cube.side = 3
        #expect(cube.volume == 27)
        #expect(Inspector(cube).validSyntheticProperties.sorted() == ["area", "volume"])
        cube.invalidateAllSyntheticProperties()
        #expect(Inspector(cube).invalidSyntheticProperties.sorted() == ["area", "volume"])
    }

    @Test("the cycle message names the properties of the cycle")
    func cycleMessage() {
        let message = SyntheticCycle.message(cycle: ["A.b", "A.c", "A.b"])
        #expect(message.hasPrefix("Herald: synthetic property cycle: A.b → A.c → A.b."))
    }

    @Test("a cycle is a runtime error, not a stack overflow or a hang")
    func cycleStopsTheProcess() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Loop {
                @ObservableVar var closed = true
                @Synthetic({ (l: Loop) in l.closed ? l.b + 1 : 0 }) var a: Int
                @Synthetic({ (l: Loop) in l.a + 1 }) var b: Int
            }
            _ = Loop().a
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("synthetic property cycle: Loop.a → Loop.b → Loop.a"))
        }
    }

    @Test("a cycle that closes at a property being checked names every property, in order")
    func cycleClosingAtACheckedProperty() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = Loop()
            _ = loop.a  // valid, through b and c
            // c now reads a: a and b are checked (they may be stale), c is evaluated.
            loop.closed = true
            _ = loop.a
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains(Loop.cycle), "\(text)")
        }
    }

    @Test("a cycle through a property checked inside an evaluation names it in its place")
    func cycleThroughACheckInsideAnEvaluation() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let loop = Loop()
            _ = loop.a
            loop.closed = true  // c invalid; b and a may be stale
            loop.x = 1  // a invalid: it is evaluated, and checks b, which evaluates c
            _ = loop.a
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains(Loop.cycle), "\(text)")
        }
    }

    /// c (checked) → s (evaluated) → starts observing b (withoutFrames hides s's frame) → b
    /// reads s. The cycle is s → b → s; c is not part of it.
    @Test("a cycle that closes in an observer started by an evaluation names only its own")
    func hiddenFramesDoNotLeakChecks() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Outside {
                @ObservableVar var closed = false
                let observer = TestObserver()
                @Synthetic({ (o: Outside) in o.s + 1 }) var c: Int
                @Synthetic({ (o: Outside) in
                    if o.closed { o.observer.observe(o.$b) { _ in } }
                    return 1
                })
                var s: Int
                @Synthetic({ (o: Outside) in o.s }) var b: Int
            }
            let model = Outside()
            _ = model.c  // c and s valid
            model.closed = true  // s invalid, c may be stale
            _ = model.c  // c is checked; s evaluates, observes b, b reads s
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                text.contains("synthetic property cycle: Outside.s → Outside.b → Outside.s."),
                "\(text)")
        }
    }

    /// Found by the adversarial round: wiring a declared path runs without frames, and the
    /// message lost the properties evaluated around it.
    @Test("a cycle found while a declared path is wired names the properties around it")
    func cycleWhileWiringADeclaredPath() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Wired {
                @ObservableVar var base = 1
                @Synthetic({ (w: Wired) in w.b + 1 }) var a: Int
                // Reading b binds it: observing its declared path evaluates c, which reads a.
                @Synthetic(dependsOn: [.path(\Wired.$c)], { (w: Wired) in w.base }) var b: Int
                @Synthetic({ (w: Wired) in w.a + 1 }) var c: Int
            }
            _ = Wired().a
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                text.contains("synthetic property cycle: Wired.a → Wired.c → Wired.a."),
                "\(text)")
        }
    }

    @Test("a cycle among properties made at run time, closing at a checked one, is a loop")
    func runtimeCycleClosingAtACheckedProperty() async {
        await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Sheet {
                @ObservableVar var closed = false
                var cells: [Synthetic<Sheet, Int>] = []
            }
            let sheet = Sheet()
            sheet.cells = [
                Synthetic(owner: sheet, name: "cell0") { $0.cells[1].value + 1 },
                Synthetic(owner: sheet, name: "cell1") { $0.closed ? $0.cells[0].value : 0 },
            ]
            _ = sheet.cells[0].value
            sheet.closed = true
            _ = sheet.cells[0].value
        }.map { result in
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                text.contains("synthetic property cycle: Sheet.cell0 → Sheet.cell1 → Sheet.cell0."),
                "\(text)")
        }
    }

    @Test("leaks: a synthetic property, its owner, its dependencies and observers are freed")
    func freed() {
        weak var contact: Contact?
        weak var fullName: Synthetic<Contact, String>?
        weak var source: Variable<String>?
        weak var watch: Canary?
        do {
            let strong = Contact()
            let observer = TestObserver()
            let canary = Canary()
            watch = canary
            observer.observe(strong.$address) { _ in _ = canary }
            strong.first = "Grace"
            contact = strong
            fullName = strong.$fullName
            source = strong.$first
        }
        #expect(contact == nil)
        #expect(fullName == nil)
        #expect(source == nil)
        #expect(watch == nil)
    }
}

/// a → b → c, where c reads a once `closed` (the cycle tests make it close at a checked
/// property).
private final class Loop {
    @ObservableVar var closed = false
    @ObservableVar var x = 0
    @ObservableVar var base = 1
    @Synthetic({ (l: Loop) in l.x + l.b }) var a: Int
    @Synthetic({ (l: Loop) in l.c + 1 }) var b: Int
    @Synthetic({ (l: Loop) in l.closed ? l.a : l.base }) var c: Int

    /// The message's cycle.
    static let cycle = "synthetic property cycle: Loop.a → Loop.b → Loop.c → Loop.a."
}
