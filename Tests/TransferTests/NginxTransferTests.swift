import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// The engine against a real, third-party HTTP server.
@Suite(.serialized) struct NginxTransferTests {
    @Test func parallelRangesFromNginxAreByteExact() async throws {
        let bytes = SampleData.bytes(count: 24 << 20, seed: 31)
        let nginx = try await NginxServer(files: ["model.bin": bytes])
        defer { nginx.stop() }
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        var configuration = DownloadConfiguration()
        configuration.segmentSize = 2 << 20
        let result = try await Downloader(configuration: configuration).download(
            DownloadRequest(
                url: nginx.url("/files/model.bin"), destination: folder.path("model.bin"),
                expectedSHA256: SampleData.sha256(bytes)))
        #expect(result.sha256 == SampleData.sha256(bytes))
        #expect(try Data(contentsOf: folder.path("model.bin")) == Data(bytes))
        let log = nginx.accessLog()
        #expect(log.count >= 12)
        #expect(log.allSatisfy { $0.status == 206 && $0.range.hasPrefix("bytes=") })
    }

    /// nginx lets each request send `limit_rate` bytes at once (its one-second allowance), so ranges larger
    /// than that are needed to feel the cap. How much faster than one connection this is, is measured by
    /// `bench/transfer.sh`; here the point is correctness under a cap with several connections.
    @Test func aPerConnectionRateCapIsSpreadOverSeveralConnections() async throws {
        let bytes = SampleData.bytes(count: 4 << 20, seed: 32)
        let nginx = try await NginxServer(files: ["model.bin": bytes], limitRate: "512k")
        defer { nginx.stop() }
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        var configuration = DownloadConfiguration()
        configuration.segmentSize = 1 << 20
        configuration.initialConnections = 2
        _ = try await Downloader(configuration: configuration).download(
            DownloadRequest(
                url: nginx.url("/limited/model.bin"), destination: folder.path("model.bin"),
                expectedSHA256: SampleData.sha256(bytes)))
        #expect(try Data(contentsOf: folder.path("model.bin")) == Data(bytes))
        let log = nginx.accessLog()
        #expect(Set(log.map(\.connection)).count >= 2)
        #expect(log.allSatisfy { $0.status == 206 })
    }

    @Test func aCancelledDownloadResumesFromNginxWithIfRange() async throws {
        let size = 8 << 20
        let bytes = SampleData.bytes(count: size, seed: 33)
        let nginx = try await NginxServer(files: ["model.bin": bytes], limitRate: "2m")
        defer { nginx.stop() }
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        var configuration = DownloadConfiguration()
        configuration.segmentSize = 1 << 20
        configuration.checkpointBytes = 256 << 10
        let limited = DownloadRequest(
            url: nginx.url("/limited/model.bin"), destination: folder.path("model.bin"),
            expectedSHA256: SampleData.sha256(bytes))
        let downloader = Downloader(configuration: configuration)
        let first = Task { try await downloader.download(limited) }
        #expect(await waitUntil { downloader.resumableBytes(for: limited) >= 1 << 20 })
        first.cancel()
        _ = try? await first.value
        let firstRunLines = nginx.accessLog().count

        // Same request again: the sidecar's ranges are kept and only the rest is fetched.
        let fast = DownloadRequest(
            url: nginx.url("/limited/model.bin"), destination: folder.path("model.bin"),
            expectedSHA256: SampleData.sha256(bytes))
        let result = try await downloader.download(fast)
        #expect(result.bytesResumed > 0)
        #expect(result.bytesReceived + result.bytesResumed == Int64(size))
        #expect(try Data(contentsOf: folder.path("model.bin")) == Data(bytes))
        let secondRun = nginx.accessLog().dropFirst(firstRunLines)
        #expect(
            !secondRun.isEmpty && secondRun.allSatisfy { $0.status == 206 && !$0.ifRange.isEmpty && $0.ifRange != "-" })
    }
}
