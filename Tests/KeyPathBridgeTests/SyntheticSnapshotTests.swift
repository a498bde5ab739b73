import HeraldTestSupport
import Testing

@testable import KeyPathBridge
@testable import Messaging

/// A private collection with a public snapshot.
final class Playlist {
    let editableSongs = ObservableArray<String>()
    @Synthetic(snapshotOf: \Playlist.editableSongs) var songs: [String]
    let editableTags = ObservableSet<String>()
    @Synthetic(snapshotOf: \Playlist.editableTags) var tags: Set<String>
    let editableRatings = ObservableDictionary<String, Int>()
    @Synthetic(snapshotOf: \Playlist.editableRatings) var ratings: [String: Int]
}

/// `@Synthetic(snapshotOf:)` shows a private observable collection as a plain value, copied at
/// most once per mutation.
@Suite("Synthetic properties: public snapshots of private collections")
struct SyntheticSnapshotTests {
    @Test("public snapshot of a private collection: copied at most once per mutation")
    func aSnapshotIsCopiedAtMostOncePerMutation() {
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
}
