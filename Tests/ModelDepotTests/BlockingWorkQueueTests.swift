import Foundation
import Testing

@testable import ModelDepot
@testable import ModelDepotCache
@testable import ModelDepotCore
@testable import ModelDepotHub
@testable import ModelDepotTransfer

@Suite struct BlockingWorkQueueTests {
    struct Failure: Error {}

    @Test func runsJobsInOrderAndPassesErrorsBack() async throws {
        let queue = BlockingWorkQueue(label: "test")
        var results: [Int] = []
        for number in 0..<20 { results.append(try await queue.run { number * number }) }
        #expect(results == (0..<20).map { $0 * $0 })
        await #expect(throws: Failure.self) { try await queue.run { () throws -> Int in throw Failure() } }
        #expect(try await queue.run { 7 } == 7)
    }
}
