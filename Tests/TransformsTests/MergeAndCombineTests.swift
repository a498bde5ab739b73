import HeraldTestSupport
import Testing
import Transforms

@Suite("merge, combine")
struct MergeAndCombineTests {
    @Test func mergeForwardsEverySourceWithItsAuthor() {
        let network = Messenger<String>()
        let disk = Messenger<String>()
        let allErrors = merge(network, disk)
        let observer = RecordingObserver<String>()
        observer.record(allErrors)

        network.send("timeout")
        disk.send("full")

        #expect(observer.messages.elements == ["timeout", "full"])
        #expect(observer.authors.elements.first === network)
        #expect(observer.authors.elements.last === disk)
        #expect(allErrors.sources.count == 2)
    }

    @Test func aDroppedMergeEndsItsObservations() {
        let first = Messenger<Int>()
        let second = Messenger<Int>()
        var merged: Merge<Int>? = merge(first, second)
        let box = WeakBox(merged!)
        #expect(first.isObserved && second.isObserved)
        merged = nil
        #expect(box.isFreed)
        #expect(!first.isObserved && !second.isObserved)
    }

    @Test func combineOfTwoSendsBothLatestValues() {
        let first = Var("Ada")
        let last = Var("Lovelace")
        let fullName = combine(first.new(), last.new()) { "\($0) \($1)" }
        let observer = RecordingObserver<String>()
        observer.record(fullName)

        last.value = "Byron"
        first.value = "Augusta"

        #expect(observer.messages.elements == ["Ada Byron", "Augusta Byron"])
        #expect(fullName.latestMessage == "Augusta Byron")
    }

    @Test func combineWorksForThreeAndFourSources() {
        let a = Var(1)
        let b = Var("b")
        let c = Var(true)
        let d = Var(2.5)
        let three = combine(a.new(), b.new(), c.new())
        let four = combine(a.new(), b.new(), c.new(), d.new())
        let threeLog = Recording<String>()
        let fourLog = Recording<String>()
        let observer = TestObserver()
        observer.observe(three) { threeLog.append("\($0.0) \($0.1) \($0.2)") }
        observer.observe(four) { fourLog.append("\($0.0) \($0.1) \($0.2) \($0.3)") }

        c.value = false
        d.value = 3.5

        #expect(threeLog.elements == ["1 b false"])
        #expect(fourLog.elements == ["1 b false 2.5", "1 b false 3.5"])
    }

    @Test func combineMessagesCarryTheAuthorOfTheCause() {
        let a = Var(1)
        let b = Var(2)
        let editor = Author("editor")
        let sum = combine(a, b) { $0.new + $1.new }
        let observer = RecordingObserver<Int>()
        observer.record(sum)
        a.set(10, as: editor)
        #expect(observer.messages.elements == [12])
        #expect(observer.authors.elements.first === editor)
    }

    @Test func aDroppedCombineEndsItsObservations() {
        let a = Var(1)
        let b = Var(2)
        var combined: CombineLatest<Var<Int>, Var<Int>>? = combine(a, b)
        let box = WeakBox(combined!)
        #expect(a.isObserved)
        combined = nil
        #expect(box.isFreed)
        #expect(!a.isObserved && !b.isObserved)
    }
}
