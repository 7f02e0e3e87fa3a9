import Foundation
import Logging
import ModelDepot
import ModelDepotTesting
import Testing

/// A server with one file, a temp folder, and a downloader whose clock never really sleeps.
struct DownloadFixture {
    let server: FaultServer
    let folder: TemporaryDirectory
    let bytes: [UInt8]
    let clock: ImmediateClock

    static func make(size: Int = 3 << 20, seed: UInt64 = 7, options: FaultServer.Options = .init()) async throws
        -> DownloadFixture
    {
        let bytes = SampleData.bytes(count: size, seed: seed)
        let server = try await FaultServer.start(files: ["/model.bin": bytes], options: options)
        return DownloadFixture(server: server, folder: try TemporaryDirectory(), bytes: bytes, clock: ImmediateClock())
    }

    var url: URL { server.url("/model.bin") }
    var destination: URL { folder.path("model.bin") }
    var sha256: String { SampleData.sha256(bytes) }

    func request(sha256: String? = nil, headers: [(name: String, value: String)] = []) -> DownloadRequest {
        DownloadRequest(url: url, destination: destination, expectedSHA256: sha256, headers: headers)
    }

    /// Small segments so a few-MiB file exercises many ranges and connections.
    static func configuration(segment: Int64 = 256 << 10) -> DownloadConfiguration {
        var configuration = DownloadConfiguration()
        configuration.segmentSize = segment
        configuration.checkpointBytes = 64 << 10
        configuration.stallTimeout = nil
        configuration.retryPolicy = RetryPolicy(maxAttempts: 6)
        return configuration
    }

    func downloader(
        _ configuration: DownloadConfiguration = DownloadFixture.configuration(),
        fileSystem: any DownloadFileSystem = LocalFileSystem(),
        clock: (any Clock<Duration>)? = nil, transport: any HTTPTransport = AsyncHTTPTransport.shared
    ) -> Downloader {
        Downloader(
            transport: transport, fileSystem: fileSystem, clock: clock ?? self.clock,
            configuration: configuration, logger: testLogger(), random: { 0.5 })
    }

    func destinationBytes() throws -> [UInt8] { [UInt8](try Data(contentsOf: destination)) }

    func cleanUp() async {
        try? await server.shutdown()
        folder.remove()
    }
}

/// Engine logs on stderr when MODELDEPOT_TEST_LOG is set (trace level), silent otherwise.
func testLogger() -> Logger {
    guard ProcessInfo.processInfo.environment["MODELDEPOT_TEST_LOG"] != nil else {
        return Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    }
    var logger = Logger(label: "test", factory: { StreamLogHandler.standardError(label: $0) })
    logger.logLevel = .trace
    return logger
}

/// Runs `body` and returns the ModelDepotError it throws (nil if it succeeds).
func captureError(_ body: () async throws -> Void) async -> ModelDepotError? {
    do {
        try await body()
        return nil
    } catch let error as ModelDepotError {
        return error
    } catch {
        Issue.record("unexpected error type: \(error)")
        return nil
    }
}
