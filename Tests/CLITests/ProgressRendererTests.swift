import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

@testable import modeldepot

@Suite struct ProgressRendererTests {
    @Test func theBarShowsBytesPercentSpeedETAAndConnections() {
        let progress = DownloadProgress(
            phase: .downloading, bytesCompleted: 128 << 20, totalBytes: 256 << 20, bytesPerSecond: Double(64 << 20),
            estimatedSecondsRemaining: 2, activeConnections: 8)
        #expect(
            ProgressRenderer.bar(for: progress, width: 10)
                == "[#####-----]   50%  128.0 MiB / 256.0 MiB  64.0 MiB/s  ETA 0:02  8 conn")
    }

    @Test func anUnknownSizeShowsBytesOnly() {
        let progress = DownloadProgress(
            phase: .downloading, bytesCompleted: 1500, bytesPerSecond: 0, activeConnections: 1)
        #expect(ProgressRenderer.bar(for: progress, width: 4) == "[----]    0%  1.5 KiB  0 B/s  1 conn")
    }

    /// In a log, a wait for a server is told only once it has lasted two seconds (every request starts with
    /// one; a log of fast requests was a wall of "waiting for 127.0.0.1:PORT"); a retry is told at once.
    @Test func plainOutputTellsOnlyWaitsThatLast() async {
        let clock = TestClock()
        let lines = Mutex<[String]>([])
        let waits = PlainWaitReporter(patience: .seconds(2), clock: clock) { line in lines.withLock { $0.append(line) }
        }
        waits.update("waiting for 127.0.0.1:80", isServerWait: true)
        #expect(await waitUntil { clock.sleeperCount == 1 })
        waits.update(nil, isServerWait: false)
        #expect(await waitUntil { clock.sleeperCount == 0 })
        clock.advance(by: .seconds(3))
        #expect(lines.withLock { $0 }.isEmpty, "a fast answer is not worth a line")

        waits.update("waiting for 127.0.0.1:80", isServerWait: true)
        #expect(await waitUntil { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(1))
        #expect(lines.withLock { $0 }.isEmpty)
        clock.advance(by: .seconds(1))
        #expect(await waitUntil { lines.withLock { $0 } == ["waiting for 127.0.0.1:80\n"] })
        waits.update("waiting for 127.0.0.1:80", isServerWait: true)
        waits.update("retrying in 1.0 s (attempt 2 of 8): reset", isServerWait: false)
        #expect(
            lines.withLock { $0 } == [
                "waiting for 127.0.0.1:80\n", "retrying in 1.0 s (attempt 2 of 8): reset\n",
            ])
    }

    @Test func countsNameTheirNounInTheRightNumber() {
        #expect(counted(1, "file") == "1 file" && counted(0, "file") == "0 files" && counted(2, "file") == "2 files")
        #expect(counted(1, "repository", plural: "repositories") == "1 repository")
        #expect(counted(3, "repository", plural: "repositories") == "3 repositories")
    }

    @Test func byteFormatting() {
        #expect(ByteFormat.string(0) == "0 B")
        #expect(ByteFormat.string(1023) == "1023 B")
        #expect(ByteFormat.string(1536) == "1.5 KiB")
        #expect(ByteFormat.string(3 << 30) == "3.0 GiB")
    }
}
