import Foundation
import Logging
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import Synchronization
import Testing

/// A mirror serving repositories from a folder, a fresh cache, and our client wired to both; optionally a
/// ``FaultServer`` on another origin standing in for the Hub's CDN (LFS downloads redirect there).
struct HubFixture {
    let mirror: MirrorFixture
    let cache: HubCache
    let cdn: FaultServer?
    let token: String?

    /// Runs `body` with a mirror over `layout` (paths `org/name/file`, relative to the root).
    ///
    /// - Parameter cdnFiles: when given, LFS files redirect to a FaultServer holding these blobs (by SHA-256).
    /// - Parameter logger: the mirror's logger (one line per request); silent by default.
    static func with<T>(
        _ layout: [String: [UInt8]], token: String? = nil, cdn cdnFiles: [[UInt8]]? = nil,
        logger: Logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
        _ body: (HubFixture) async throws -> T
    ) async throws -> T {
        let root = try TemporaryDirectory(prefix: "modeldepot-hub")
        defer { root.remove() }
        for (path, bytes) in layout {
            let url = root.path("repos/" + path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).writeUnsynced(to: url)
        }
        var cdn: FaultServer?
        if let cdnFiles {
            cdn = try await FaultServer.start(
                files: Dictionary(uniqueKeysWithValues: cdnFiles.map { ("/" + SampleData.sha256($0), $0) }))
        }
        var server = MirrorServer(
            roots: [root.path("repos")], caches: [], stateFolder: root.path("state"), token: token, logger: logger)
        // `localhost` rather than 127.0.0.1: another host name as well as another port, as a CDN is.
        server.lfsRedirectBase = cdn.map { URL(string: "http://localhost:\($0.baseURL.port!)")! }
        let result: Result<T, any Error>
        do {
            let value = try await MirrorFixture.serving(server, root: root) { mirror in
                try await body(
                    HubFixture(mirror: mirror, cache: HubCache(root: root.path("cache")), cdn: cdn, token: token))
            }
            result = .success(value)
        } catch {
            result = .failure(error)
        }
        try await cdn?.shutdown()
        return try result.get()
    }

    /// With an immediate clock every sleep returns at once, so a stall watchdog would fire at once: off.
    static var immediateConfiguration: DownloadConfiguration {
        var configuration = DownloadConfiguration()
        configuration.stallTimeout = nil
        return configuration
    }

    var hub: HubClient {
        HubClient(endpoint: mirror.baseURL, token: token, transport: DefaultTransport.shared, clock: ImmediateClock())
    }

    func downloader(
        offline: Bool = false, hub: HubClient? = nil,
        configuration: DownloadConfiguration = HubFixture.immediateConfiguration,
        fileSystem: any DownloadFileSystem = LocalFileSystem()
    ) -> SnapshotDownloader {
        let client =
            hub
            ?? HubClient(
                endpoint: mirror.baseURL, token: token, offline: offline, transport: DefaultTransport.shared,
                clock: ImmediateClock())
        return SnapshotDownloader(
            hub: client, cache: cache,
            downloader: Downloader(fileSystem: fileSystem, clock: ImmediateClock(), configuration: configuration),
            clock: ImmediateClock())
    }

    func repository(_ id: String) throws -> CachedRepository {
        cache.repository(try RepoID(id))
    }

    /// The target of a snapshot link, as written.
    static func linkTarget(_ url: URL) throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: url.path)
    }
}

/// Log messages kept in memory, for tests that read what a server logged (its access lines).
final class RecordedLog: Sendable {
    private let lines = Mutex<[String]>([])

    var messages: [String] { lines.withLock { $0 } }

    var logger: Logger {
        Logger(label: "recorded") { _ in Handler(log: self) }
    }

    private struct Handler: LogHandler {
        let log: RecordedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            log.lines.withLock { $0.append(event.message.description) }
        }
    }
}
