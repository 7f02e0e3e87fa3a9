import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

@Suite struct DownloadResumeTests {
    @Test func aCancelledDownloadResumesWithOnlyTheMissingBytes() async throws {
        let fixture = try await DownloadFixture.make(size: 4 << 20)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.throttle(bytesPerSecond: 1 << 20), times: 1000)
        let request = fixture.request(sha256: fixture.sha256)
        let downloader = fixture.downloader()
        let first = Task { try await downloader.download(request) }
        let someWritten = await waitUntil { downloader.resumableBytes(for: request) >= 1 << 20 }
        #expect(someWritten)
        first.cancel()
        let error = await captureError { _ = try await first.value }
        #expect(error?.code == .cancelled)
        #expect(FileManager.default.fileExists(atPath: request.partialPath))
        let saved = downloader.resumableBytes(for: request)
        #expect(saved >= 1 << 20)
        #expect(!FileManager.default.fileExists(atPath: fixture.destination.path))

        fixture.server.clearFaults()
        let servedBefore = fixture.server.bodyBytesSent
        let result = try await downloader.download(request)
        #expect(try fixture.destinationBytes() == fixture.bytes)
        #expect(result.bytesResumed == saved)
        #expect(result.bytesReceived == Int64(fixture.bytes.count) - saved)
        // The server may still have been pushing throttled bytes of the cancelled run; allow for that.
        #expect(fixture.server.bodyBytesSent - servedBefore <= Int64(fixture.bytes.count) - saved + (1 << 20))
        // The resumed requests asked for the same version of the file.
        let resumed = fixture.server.requests.suffix(from: fixture.server.requests.count - 1)
        #expect(resumed.allSatisfy { $0.header("If-Range") != nil })
    }

    @Test func aPartialFileOfAnotherVersionIsDiscarded() async throws {
        let fixture = try await DownloadFixture.make(size: 2 << 20)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.throttle(bytesPerSecond: 512 << 10), times: 1000)
        let request = fixture.request()
        let downloader = fixture.downloader()
        let first = Task { try await downloader.download(request) }
        #expect(await waitUntil { downloader.resumableBytes(for: request) >= 256 << 10 })
        first.cancel()
        _ = await captureError { _ = try await first.value }
        fixture.server.clearFaults()
        let replacement = SampleData.bytes(count: 2 << 20, seed: 1234)
        fixture.server.setFile("/model.bin", replacement)
        let result = try await downloader.download(request)
        #expect(try fixture.destinationBytes() == replacement)
        #expect(result.bytesResumed == 0)
    }

    @Test func aFullDiskIsReportedBeforeTheFirstByte() async throws {
        let fixture = try await DownloadFixture.make(size: 2 << 20)
        defer { Task { await fixture.cleanUp() } }
        let disk = DiskFullFileSystem(availableSpace: 1 << 20)
        let error = await captureError {
            _ = try await fixture.downloader(fileSystem: disk).download(fixture.request())
        }
        #expect(error?.code == .insufficientDiskSpace)
        #expect(error?.message.contains("\(2 << 20)") == true)
        #expect(error?.message.contains("\(1 << 20)") == true)
        #expect(fixture.server.requests.count == 1)
        #expect(!FileManager.default.fileExists(atPath: fixture.destination.path))
    }

    @Test func runningOutOfSpaceMidwayKeepsThePartialDataForLater() async throws {
        let fixture = try await DownloadFixture.make(size: 3 << 20)
        defer { Task { await fixture.cleanUp() } }
        let request = fixture.request(sha256: fixture.sha256)
        let disk = DiskFullFileSystem(writableBytes: 1 << 20)
        let downloader = fixture.downloader(fileSystem: disk)
        let error = await captureError { _ = try await downloader.download(request) }
        #expect(error?.code == .insufficientDiskSpace)
        #expect(FileManager.default.fileExists(atPath: request.partialPath))
        #expect(!FileManager.default.fileExists(atPath: fixture.destination.path))
        let saved = downloader.resumableBytes(for: request)
        #expect(saved > 0 && saved <= 1 << 20)

        let result = try await fixture.downloader().download(request)
        #expect(try fixture.destinationBytes() == fixture.bytes)
        #expect(result.bytesResumed == saved)
    }
}
