import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

@Suite struct DownloadBasicsTests {
    @Test func downloadsWithParallelRangesAndReportsTheHash() async throws {
        let fixture = try await DownloadFixture.make()
        defer { Task { await fixture.cleanUp() } }
        let result = try await fixture.downloader().download(fixture.request(sha256: fixture.sha256))
        #expect(try fixture.destinationBytes() == fixture.bytes)
        #expect(result.sha256 == fixture.sha256)
        #expect(result.bytesReceived == Int64(fixture.bytes.count))
        #expect(!FileManager.default.fileExists(atPath: fixture.request().partialPath))
        #expect(!FileManager.default.fileExists(atPath: fixture.request().resumeRecordPath))
        let ranged = fixture.server.requests.filter { $0.header("Range") != nil }
        #expect(ranged.count >= 12, "3 MiB in 256 KiB segments needs at least 12 ranged requests")
    }
}
