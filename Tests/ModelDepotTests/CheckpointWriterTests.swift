import Dispatch
import Foundation
import Synchronization
import Testing

@testable import ModelDepot
@testable import ModelDepotCache
@testable import ModelDepotCore
@testable import ModelDepotHub
@testable import ModelDepotTransfer

@Suite struct CheckpointWriterTests {
    /// Counts saves; the first one waits until the test lets it finish.
    final class Saves: Sendable {
        let count = Mutex(0)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        func save() {
            let number = count.withLock { count -> Int in
                count += 1
                return count
            }
            if number == 1 {
                started.signal()
                release.wait()
            }
            finished.signal()
        }
    }

    @Test func requestsDuringASaveFoldIntoOneMoreSave() async throws {
        let writer = CheckpointWriter()
        let saves = Saves()
        writer.request { saves.save() }
        await waitOnQueue(saves.started)
        for _ in 0..<5 { writer.request { saves.save() } }
        saves.release.signal()
        await waitOnQueue(saves.finished)
        await waitOnQueue(saves.finished)
        await writer.close()
        #expect(saves.count.withLock { $0 } == 2)
    }

    @Test func closeWaitsForTheSaveInProgressAndRefusesLaterRequests() async throws {
        let writer = CheckpointWriter()
        let saves = Saves()
        writer.request { saves.save() }
        await waitOnQueue(saves.started)
        writer.request { saves.save() }
        let closed = Task { await writer.close() }
        // The pending request is dropped by close(); the running save finishes first.
        saves.release.signal()
        await closed.value
        let afterClose = saves.count.withLock { $0 }
        writer.request { saves.save() }
        await writer.close()  // would wait for a save the refused request had started
        #expect(saves.count.withLock { $0 } == afterClose)
        #expect(afterClose >= 1 && afterClose <= 2)
    }

    /// Waits for `semaphore` without blocking a thread of the cooperative pool.
    private func waitOnQueue(_ semaphore: DispatchSemaphore) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                semaphore.wait()
                continuation.resume()
            }
        }
    }
}
