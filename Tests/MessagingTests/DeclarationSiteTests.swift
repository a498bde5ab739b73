import HeraldTestSupport
import Messaging
import Testing

@Suite("Declaration sites")
struct DeclarationSiteTests {
    @Test func observeRecordsItsFileIDAndLine() {
        let messenger = Messenger<Int>()
        let observer = TestObserver()
        let line = UInt32(#line + 1)
        observer.observe(messenger) { _ in }
        let sites = messenger.observationSites
        #expect(sites.count == 1)
        #expect(sites.first?.fileID == "MessagingTests/DeclarationSiteTests.swift")
        #expect(sites.first?.line == line)
        #expect(sites.first?.description == "MessagingTests/DeclarationSiteTests.swift:\(line)")
    }

    @Test func sitesAreListedInRegistrationOrderAndForgottenWhenStopped() {
        let messenger = Messenger<Int>()
        let first = TestObserver()
        let second = TestObserver()
        first.observe(messenger) { _ in }
        second.observe(messenger) { _ in }
        let lines = messenger.observationSites.map(\.line)
        #expect(lines.count == 2)
        #expect(lines[0] < lines[1])
        first.stopObserving()
        #expect(messenger.observationSites.map(\.line) == [lines[1]])
    }
}
