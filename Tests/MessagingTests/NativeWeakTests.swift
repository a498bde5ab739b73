import Dispatch
import Foundation
import HeraldTestSupport
import Testing

@testable import Messaging

@Suite("NativeWeak: a weak reference without a side table")
struct NativeWeakTests {
    /// An object whose deinit says that it started, then waits until told to go on.
    final class Dying: @unchecked Sendable {
        let started: DispatchSemaphore
        let mayFinish: DispatchSemaphore
        init(started: DispatchSemaphore, mayFinish: DispatchSemaphore) {
            self.started = started
            self.mayFinish = mayFinish
        }
        deinit {
            started.signal()
            mayFinish.wait()
        }
    }

    @Test func givesTheObjectWhileItLivesAndNothingOnceItDied() {
        var object: Canary? = Canary()
        let reference = NativeWeak(object!)
        #expect(reference.object === object)
        object = nil
        #expect(reference.object == nil)
    }

    @Test func doesNotKeepTheObjectAlive() {
        var object: Canary? = Canary()
        let box = WeakBox(object!)
        let reference = NativeWeak(object!)
        object = nil
        #expect(box.isFreed)
        #expect(reference.object == nil)
    }

    @Test func anEmptyReferenceGivesNothing() {
        #expect(NativeWeak<Canary>().object == nil)
    }

    /// The case `weak` exists for: another thread asks for the object while its deinit runs.
    /// It must get nil (a retain then would bring a dying object back), and the object's memory
    /// must still be there to ask.
    @Test func givesNothingWhileTheObjectDeinitializesOnAnotherThread() {
        let started = DispatchSemaphore(value: 0)
        let mayFinish = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let box: Box<Dying>
        let reference: NativeWeak<Dying>
        do {
            let object = Dying(started: started, mayFinish: mayFinish)
            box = Box(object)
            reference = NativeWeak(object)
        }
        #expect(reference.object != nil)
        Thread {
            // The last strong reference goes here: the deinit starts, and waits.
            _ = box.take()
            done.signal()
        }.start()
        started.wait()
        #expect(reference.object == nil)
        mayFinish.signal()
        done.wait()
        #expect(reference.object == nil)
    }
}
