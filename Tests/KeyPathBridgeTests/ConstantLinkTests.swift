import HeraldTestSupport
import KeyPathBridge
import Testing

/// A path goes through a plain `let` property holding an object (EBN observes through
/// read-only properties): the link is followed and never changes; typed and string paths.
@Suite("Paths through constant links")
struct ConstantLinkTests {
    final class Settings {
        @ObservableVar var volume = 5
        let audio = Audio()
    }

    final class Audio {
        @ObservableVar var muted = false
    }

    final class Player {
        let settings = Settings()
        let spare: Settings? = nil
        @ObservableVar var current: Player?
        let name = "player"  // a constant that is not an object
    }

    @Test func aTypedPathGoesThroughALetProperty() {
        let player = Player()
        let volumes = Recording<Int?>()
        let observer = TestObserver()
        let path = observer.observe(
            player, PropertyPath(constant: \Player.settings).appending(\.$volume)
        ) { volumes.append($0) }

        player.settings.volume = 7
        player.settings.volume = 7  // no change

        #expect(volumes.elements == [7])
        #expect(path.value == 7)
    }

    @Test func aTypedPathGoesThroughConstantsInTheMiddleAndAfterAnOptional() {
        let player = Player()
        let observer = TestObserver()
        let muted = Recording<Bool?>()
        let path = PropertyPath(\Player.$current).appending(constant: \.settings)
            .appending(constant: \.audio).appending(\.$muted)
        observer.observe(player, path) { muted.append($0) }

        let other = Player()
        player.current = other  // reachable: false
        other.settings.audio.muted = true
        player.current = nil  // unreachable

        #expect(muted.elements == [false, true, nil])
    }

    @Test func aStringPathGoesThroughLetProperties() throws {
        let player = Player()
        let observer = TestObserver()
        let values = Recording<Bool?>()
        try observer.observe(player, path: "settings.audio.muted") {
            values.append($0 as? Bool)
        }

        player.settings.audio.muted = true

        #expect(values.elements == [true])
        #expect(try ObservedPath(player, path: "current.settings.volume").value == nil)
    }

    /// A stored constant that holds a value, not an object, is no component of a string path:
    /// a name the object has no usable property of, whose error lists what it has.
    @Test func aStringPathThroughAConstantValueThrows() {
        let player = Player()
        #expect(
            throws: PathError.unknownProperty(
                "name", type: "Player", path: "name.count",
                known: ["settings", "spare", "current"])
        ) {
            try ObservedPath(player, path: "name.count")
        }
    }

    /// The path holds the object behind the constant weakly, as every object along a path; it
    /// ends with its root.
    @Test func aPathThroughAConstantEndsWithItsRoot() {
        var player: Player? = Player()
        let settings = WeakBox(player!.settings)
        let observer = TestObserver()
        let volumes = Recording<Int?>()
        observer.observe(player!, PropertyPath(constant: \Player.settings).appending(\.$volume)) {
            volumes.append($0)
        }

        player = nil

        #expect(settings.isFreed)
        #expect(volumes.elements == [nil])
    }

    /// "When the root dies, every observation of the path ends and is freed": also a path that
    /// ends at a constant link, which observes nothing (its object cannot tell of the root's
    /// death, and the path can never change).
    @Test(arguments: [false, true])
    func aPathThatEndsAtAConstantEndsWithItsRoot(asText: Bool) throws {
        var player: Player? = Player()
        let freed = WeakBox(player!)
        let observer = TestObserver()
        weak var observed: AnyObject?
        if asText {
            observed = try observer.observe(player!, path: "settings") { _ in }
        } else {
            observed = observer.observe(player!, PropertyPath(constant: \Player.settings)) { _ in }
        }

        player = nil

        #expect(freed.isFreed)
        #expect(observed == nil)  // the observation ended, and freed its path
    }

    /// "A nil intermediate makes the end point unreachable": a string path through an optional
    /// `let` that holds nil is unreachable, as the typed `appending(constant:)` after an
    /// optional is; the property exists, so it is no unknown name.
    @Test func aStringPathThroughANilOptionalConstantIsUnreachable() throws {
        let player = Player()

        let path = try ObservedPath(player, path: "spare.volume")

        #expect(path.value == nil)
    }

    /// An unknown name's error "lists every name a string path can use there": the constant
    /// links among them.
    @Test func anUnknownNameListsTheConstantsAPathCanGoThrough() {
        let player = Player()
        #expect(
            throws: PathError.unknownProperty(
                "setings", type: "Player", path: "setings.volume",
                known: ["settings", "spare", "current"])
        ) {
            try ObservedPath(player, path: "setings.volume")
        }
    }
}
