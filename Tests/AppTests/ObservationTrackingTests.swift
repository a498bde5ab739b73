import Dispatch
import HeraldTestSupport
import KeyPathBridge
import Observation
import Testing

/// Herald → Observation: a Herald property read through `tracked` inside
/// `withObservationTracking` (what SwiftUI does when it renders a view) is tracked, and the
/// tracking's `onChange` runs when the property changes, with no glue.
/// Tracks what `read` reads; its change appends `label` to `changes`.
private func track<T>(_ read: () -> T, as label: String, in changes: Recording<String>) {
    _ = withObservationTracking(read) { changes.append(label) }
}

/// Tracks `person.$fullName`; its change appends the full name read then to `changes`.
private func trackFullName(
    of person: ObservationTrackingTests.Person, in changes: Recording<String>
) {
    _ = withObservationTracking {
        person.$fullName.tracked
    } onChange: {
        changes.append(person.fullName)
    }
}

@Suite("Swift Observation sees Herald properties")
struct ObservationTrackingTests {
    final class Document {
        @ObservableVar var title = "Draft"
        @ObservableVar var body = ""
    }

    final class Person: @unchecked Sendable {  // its state is Herald's, which is thread-safe
        @ObservableVar var first = "Ada"
        @ObservableVar var last = "Lovelace"
        @ObservableVar var age = 36
        @Synthetic({ (p: Person) in p.first + " " + p.last }) var fullName: String
        @Synthetic({ (p: Person) in p.fullName.count }) var nameLength: Int
    }

    @Test func aTrackedReadOfAVariableIsToldOfItsNextChange() {
        let title = Var("a")
        let changes = Recording<String>()
        let read = withObservationTracking {
            title.tracked
        } onChange: {
            changes.append("changed")
        }
        #expect(read == "a")
        #expect(changes.count == 0)
        title.value = "b"
        #expect(changes.count == 1)
        title.value = "c"  // a tracking is told once, as Observation's own are
        #expect(changes.count == 1)
    }

    @Test func onlyTrackedReadsAreReported() {
        let person = Person()
        let changes = Recording<String>()
        _ = withObservationTracking {
            (person.first, person.$last.value, person.fullName)
        } onChange: {
            changes.append("changed")
        }
        person.first = "Grace"
        person.last = "Hopper"
        #expect(changes.count == 0)
    }

    @Test func onChangeRunsAfterTheChangeAndReadsTheNewValue() {
        let title = Var("a")
        let seen = Recording<String>()
        _ = withObservationTracking {
            title.tracked
        } onChange: {
            seen.append(title.value)
        }
        title.value = "b"
        #expect(seen.elements == ["b"])
    }

    @Test func aSetThatChangesNothingTellsNothing() {
        let title = Var("a")
        let changes = Recording<String>()
        _ = withObservationTracking {
            title.tracked
        } onChange: {
            changes.append("changed")
        }
        title.value = "a"
        #expect(changes.count == 0)
        title.value = "b"
        #expect(changes.count == 1)
    }

    @Test func anObservableVarOfAModelIsTrackedThroughItsOwner() {
        let document = Document()
        let changes = Recording<String>()
        _ = withObservationTracking {
            document.$title.tracked
        } onChange: {
            changes.append("title")
        }
        document.body = "text"  // not read: not told
        #expect(changes.count == 0)
        document.title = "Final"
        #expect(changes.elements == ["title"])
    }

    @Test func everyTrackingThatReadAVariableIsTold() {
        let count = Var(0)
        let changes = Recording<String>()
        track({ count.tracked }, as: "first", in: changes)
        track({ count.tracked }, as: "second", in: changes)
        count.value = 1
        #expect(changes.elements.sorted() == ["first", "second"])
    }

    @Test func aReTrackedReadIsToldAgain() {
        let count = Var(0)
        let changes = Recording<Int>()
        func track() {
            _ = withObservationTracking {
                count.tracked
            } onChange: {
                changes.append(count.value)
            }
        }
        track()
        count.value = 1
        track()  // as a view re-renders after its onChange
        count.value = 2
        count.value = 3  // not read again since: no tracking to tell
        #expect(changes.elements == [1, 2])
    }

    @Test func aChangeOnAnotherThreadIsTold() async {
        let count = Var(0)
        await withCheckedContinuation { continuation in
            _ = withObservationTracking {
                count.tracked
            } onChange: {
                continuation.resume()
            }
            DispatchQueue.global().async { count.value = 1 }
        }
        #expect(count.value == 1)
    }
    @Test func aTrackedReadOfALazySyntheticPropertyIsToldWhenItIsInvalidated() {
        let person = Person()
        let changes = Recording<String>()
        let read = withObservationTracking {
            person.$fullName.tracked
        } onChange: {
            changes.append("changed")
        }
        #expect(read == "Ada Lovelace")
        person.age = 37  // not read by fullName
        #expect(changes.count == 0)
        person.last = "King"
        #expect(changes.count == 1)
        // Still lazy: the tracking's onChange computes nothing; the next read does.
        #expect(!person.$fullName.isValid)
        #expect(person.fullName == "Ada King")
    }

    @Test func aTrackedSyntheticPropertyOverAChainIsToldOfAChangeAtItsBottom() {
        let person = Person()
        let changes = Recording<String>()
        _ = withObservationTracking {
            person.$nameLength.tracked
        } onChange: {
            changes.append("changed")
        }
        person.first = "Grace"
        #expect(changes.count == 1)
        #expect(person.nameLength == 14)
    }

    @Test func aTrackedSyntheticPropertyIsToldOnceForAChangeInABatch() {
        let person = Person()
        let changes = Recording<String>()
        _ = withObservationTracking {
            person.$fullName.tracked
        } onChange: {
            changes.append("changed")
        }
        batch {
            person.first = "Grace"
            person.last = "Hopper"
            #expect(changes.count == 0)  // nothing from the middle of a batch
        }
        #expect(changes.count == 1)
    }

    @Test func anObservedSyntheticPropertyTellsATrackingOnlyWhenItsValueChanges() {
        let person = Person()
        let observer = TestObserver()
        let updates = Recording<String>()
        observer.observe(person.$nameLength) { updates.append("\($0.new)") }
        let changes = Recording<Int>()
        _ = withObservationTracking {
            person.$nameLength.tracked
        } onChange: {
            changes.append(person.nameLength)
        }
        person.first = "Bob"  // "Bob Lovelace": 12, as "Ada Lovelace"
        #expect(changes.count == 0)
        person.first = "Grace"
        #expect(updates.elements == ["14"])
        // After the change, reading the new value, like a handler.
        #expect(changes.elements == [14])
    }

    @Test func aHybridSetOfATrackedSyntheticPropertyIsTold() {
        let person = Person()
        let changes = Recording<String>()
        trackFullName(of: person, in: changes)
        person.fullName = "Lord Byron"
        #expect(changes.elements == ["Lord Byron"])
    }
    @Test func aTrackedReadOfAnArrayIsToldOfItsNextMutation() {
        let todos: ObservableArray = ["milk"]
        let changes = Recording<[String]>()
        let read = withObservationTracking {
            todos.tracked
        } onChange: {
            changes.append(todos.elements)
        }
        #expect(read == ["milk"])
        todos.replaceSubrange(0..<1, with: ["milk"])  // changes nothing: tells nothing
        #expect(changes.count == 0)
        todos.append("eggs")
        #expect(changes.elements == [["milk", "eggs"]])
    }

    @Test func aTrackedReadOfADictionaryOrSetIsToldOfItsNextMutation() {
        let scores: ObservableDictionary = ["ada": 1]
        let tags: ObservableSet = ["swift"]
        let changes = Recording<String>()
        track({ scores.tracked }, as: "scores", in: changes)
        track({ tags.tracked }, as: "tags", in: changes)
        scores["ada"] = 1  // the same value: no change
        tags.insert("swift")  // already a member
        #expect(changes.count == 0)
        scores["grace"] = 2
        tags.insert("linux")
        #expect(changes.elements == ["scores", "tags"])
    }
    /// A tracking installs itself when its block returns: a change in between must not keep it
    /// from hearing of the next one (Observation's own properties miss only the one between).
    @Test func aChangeBeforeTheTrackingIsInstalledDoesNotSilenceTheNextOne() {
        let count = Var(0)
        let person = Person()
        let changes = Recording<String>()
        withObservationTracking {
            _ = count.tracked
            count.value = 1
        } onChange: {
            changes.append("count")
        }
        withObservationTracking {
            _ = person.$fullName.tracked
            person.first = "Grace"
        } onChange: {
            changes.append("fullName")
        }
        count.value = 2
        person.last = "Hopper"
        #expect(changes.elements == ["count", "fullName"])
    }

    @Test func aTrackedSyntheticPropertyObservedBeforeItsPassIsStillTold() {
        let person = Person()
        let observer = TestObserver()
        let changes = Recording<String>()
        trackFullName(of: person, in: changes)
        // Invalidated, then observed (which computes it) before its propagation pass runs.
        batch {
            person.first = "Grace"
            observer.observe(person.$fullName) { _ in }
        }
        #expect(changes.elements == ["Grace Lovelace"])
    }
}
