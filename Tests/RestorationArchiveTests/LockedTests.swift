import Dispatch
import Testing
@testable import RestorationArchive

@Suite("Locked")
struct LockedTests {
    @Test func incrementsFromManyThreadsAreNeverLost() {
        let counter = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test func aThrowingBodyLeavesTheLockFreeAndItsChangesKept() {
        struct Refused: Error {}
        let state = Locked([1])
        #expect(throws: Refused.self) {
            try state.withLock { (values: inout [Int]) throws(Refused) -> Void in
                values.append(2)
                throw Refused()
            }
        }
        // Not deadlocked, and the change made before the throw stays, as with Mutex.
        #expect(state.withLock { $0 } == [1, 2])
    }
}
