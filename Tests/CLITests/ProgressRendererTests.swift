import ModelDepot
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

    @Test func byteFormatting() {
        #expect(ByteFormat.string(0) == "0 B")
        #expect(ByteFormat.string(1023) == "1023 B")
        #expect(ByteFormat.string(1536) == "1.5 KiB")
        #expect(ByteFormat.string(3 << 30) == "3.0 GiB")
    }
}
