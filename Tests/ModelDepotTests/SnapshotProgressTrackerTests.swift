import Foundation
import ModelDepotTesting
import Synchronization
import Testing

@testable import ModelDepot

/// What a pull counts as received over the network, which its speed and the speed charts go by: not the cache,
/// not the partial files a resume continues, and nothing twice when a file's run starts again.
@Suite struct SnapshotProgressTrackerTests {
    @Test func bytesOnDiskAreNeverReceivedAndARestartedRunKeepsWhatTheOneBeforeReceived() {
        let reports = Mutex<[SnapshotProgress]>([])
        let tracker = SnapshotProgressTracker(
            clock: EngineClock(TestClock()), interval: .zero,
            report: { progress in reports.withLock { $0.append(progress) } })
        func received() -> Int64 { reports.withLock { $0.last?.bytesReceived ?? -1 } }
        func completed() -> Int64 { reports.withLock { $0.last?.bytesCompleted ?? -1 } }
        tracker.planned(totalBytes: 10_000, totalFiles: 3, cachedBytes: 1000, cachedFiles: 1)
        #expect(received() == 0 && completed() == 1000)
        // A partial file resumed: 4000 bytes were on disk when its run began.
        tracker.fileProgress("a", done: 0, size: 6000)
        tracker.fileProgress("a", done: 4000, size: 6000, resumed: 4000)
        #expect(received() == 0 && completed() == 5000)
        tracker.fileProgress("a", done: 5000, size: 6000, resumed: 4000)
        #expect(received() == 1000)
        tracker.fileFinished("a", size: 6000)
        #expect(received() == 2000 && completed() == 7000)
        // Another file: 1500 bytes in, then the network policy pauses it (what it holds is kept as on disk), and a
        // new run continues from there.
        tracker.fileProgress("b", done: 1500, size: 3000)
        #expect(received() == 3500)
        tracker.fileProgress("b", done: 1500, size: 3000, resumed: 1500)
        tracker.fileProgress("b", done: 0, size: 3000)
        tracker.fileProgress("b", done: 1500, size: 3000, resumed: 1500)
        #expect(received() == 3500 && completed() == 8500)
        tracker.fileProgress("b", done: 3000, size: 3000, resumed: 1500)
        tracker.fileFinished("b", size: 3000)
        #expect(received() == 5000 && completed() == 10_000)
        // The speed is that of the received bytes: never the 4000 resumed ones in an instant.
        #expect(reports.withLock { $0.allSatisfy { $0.bytesReceived <= 5000 } })
    }
}
