import Foundation
import Testing

@testable import ModelDepot

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct BlockingWorkQueueTests {
    struct Failure: Error {}

    @Test(arguments: [BlockingWorkQueue.Priority.normal, .background])
    func runsJobsInOrderAndPassesErrorsBack(priority: BlockingWorkQueue.Priority) async throws {
        let queue = BlockingWorkQueue(label: "test", priority: priority)
        var results: [Int] = []
        for number in 0..<20 { results.append(try await queue.run { number * number }) }
        #expect(results == (0..<20).map { $0 * $0 })
        await #expect(throws: Failure.self) { try await queue.run { () throws -> Int in throw Failure() } }
        #expect(try await queue.run { 7 } == 7)
    }

    #if os(Linux)
        @Test func backgroundWorkRunsAtIdlePriorityAndNormalWorkDoesNot() async throws {
            let background = BlockingWorkQueue(label: "test.background", priority: .background)
            let normal = BlockingWorkQueue(label: "test.normal")
            #expect(try await background.run { sched_getscheduler(0) } == 5)  // SCHED_IDLE
            #expect(try await normal.run { sched_getscheduler(0) } == 0)  // SCHED_OTHER
        }
    #endif
}
