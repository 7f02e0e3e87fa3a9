import ModelDepotTesting
import Synchronization
import Testing

@testable import ModelDepotServer

/// Files streamed through memory at once are bounded across connections (HTTP/2 carries many streams on one).
@Suite struct OpenFileBudgetTests {
    final class Counters: Sendable {
        let peak = Mutex(0)
        let releases = Mutex(0)

        /// Takes one release when there is one.
        func takeRelease() -> Bool {
            releases.withLock { count in
                guard count > 0 else { return false }
                count -= 1
                return true
            }
        }
    }

    @Test func aResponsePastTheBudgetWaitsForAFileToClose() async throws {
        let budget = OpenFileBudget(limit: 2)
        let counters = Counters()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    await budget.withFile {
                        counters.peak.withLock { $0 = max($0, budget.open) }
                        _ = await waitUntil { counters.takeRelease() }
                    }
                }
            }
            // Two hold files and three wait; as each closes, one more goes in, never more than two at once.
            let two = await waitUntil { budget.open == 2 }
            #expect(two)
            counters.releases.withLock { $0 = 5 }
        }
        #expect(counters.peak.withLock { $0 } == 2)
        #expect(budget.open == 0)
    }
}
