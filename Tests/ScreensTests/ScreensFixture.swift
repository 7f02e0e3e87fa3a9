import Foundation
import Logging
import ModelDepot
import ModelDepotScreens
import ModelDepotServer
import ModelDepotTesting
import Synchronization
import Testing

/// A mirror on 127.0.0.1 serving three small models, a catalog naming them (and one the mirror lacks), and
/// `ModelDownloads` over a fresh cache.
struct ScreensFixture {
    static let weights = SampleData.bytes(count: 1 << 20, seed: 23)
    static let layout: [String: [UInt8]] = [
        "acme/chat/weights.bin": weights, "acme/chat/config.json": Array(#"{"a": 1}"#.utf8),
        "acme/embed/model.safetensors": SampleData.bytes(count: 64 << 10, seed: 24),
        "acme/embed/vocab.txt": Array("a\nb\n".utf8),
        "acme/extra/notes.txt": Array("not in the catalog\n".utf8),
    ]
    static let catalog = try! ModelCatalog(
        models: [
            CatalogEntry(
                name: "chat", repo: try! RepoID("acme/chat"), files: ["weights.bin", "config.json"],
                required: ["weights.bin"], format: .gguf, capabilities: [.textGeneration], contextLength: 2048,
                sizeBytes: Int64(weights.count + 8), recommended: true, description: "A small chat model"),
            CatalogEntry(
                name: "embed", repo: try! RepoID("acme/embed"), files: ["vocab.txt"], required: ["vocab.txt"],
                format: .safetensors, capabilities: [.embeddings], embeddingDimensions: 384, sizeBytes: 4,
                description: "Sentence vectors"),
            CatalogEntry(
                name: "ghost", repo: try! RepoID("acme/ghost"), files: ["x.gguf"], required: ["x.gguf"],
                format: .gguf, capabilities: [.textGeneration], sizeBytes: 10, description: "Not on the mirror"),
        ],
        presets: ["minimal": ["embed"], "standard": ["embed", "chat"]])

    let folder: TemporaryDirectory
    let endpoint: URL
    let downloads: ModelDownloads
    let server: MirrorServer

    /// What the manager sent: each request's path, as the client sent it.
    let sent: RequestLog

    /// Requests of the Hub's API sent so far (`/api/…`: what planning asks; file downloads are not counted).
    var apiRequestsSent: Int { sent.paths.filter { $0.hasPrefix("/api/") }.count }

    /// Runs `body` with the mirror up; `limit` caps the downloads' bytes per second from the start.
    static func with(
        limit: Int64? = nil, clock: any Clock<Duration> = ContinuousClock(),
        _ body: (ScreensFixture) async throws -> Void
    ) async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-screens")
        defer { folder.remove() }
        try folder.write(layout, in: "repos")
        let server = MirrorServer(
            root: folder.path("repos"), logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let address = Mutex<URL?>(nil)
        let task = Task { try await server.run(host: "127.0.0.1", port: 0) { url in address.withLock { $0 = url } } }
        defer { task.cancel() }
        try #require(await waitUntil { address.withLock { $0 } != nil }, "the mirror did not start")
        let endpoint = address.withLock { $0 }!
        var configuration = ModelManager.Configuration(endpoint: endpoint, cache: HubCache(root: folder.path("cache")))
        configuration.engine.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1))
        configuration.apiRetryPolicy = RetryPolicy(maxAttempts: 1)
        configuration.bandwidth.bytesPerSecond = limit
        // The platform's transport, logged; the configuration puts its per-host limit around it (once).
        let sent = RequestLog(base: DefaultTransport.shared(for: configuration.networkPolicy))
        configuration.transport = sent
        let downloads = ModelDownloads(
            manager: try ModelManager(configuration: configuration), catalog: catalog, clock: clock)
        // Downloads end before the mirror does: a server closing while a client connects trips over the new
        // connection (swift-nio: "Deinited NIOAsyncWriter without calling finish()").
        do {
            try await body(
                ScreensFixture(folder: folder, endpoint: endpoint, downloads: downloads, server: server, sent: sent))
        } catch {
            await downloads.stopAll()
            throw error
        }
        await downloads.stopAll()
    }

    /// Waits until `name`'s download reaches a state `matches` accepts.
    /// Downloads of the fixture's catalog with an offline Hub, over an empty cache in `folder`.
    static func offline(in folder: TemporaryDirectory) throws -> ModelDownloads {
        ModelDownloads(
            manager: try ModelManager(
                configuration: .init(
                    endpoint: URL(string: "http://127.0.0.1:9")!, offline: true, cache: HubCache(root: folder.url))),
            catalog: catalog)
    }

    func waitFor(_ name: String, _ matches: @escaping @Sendable (ModelDownloadTask.State) -> Bool) async -> Bool {
        await waitUntil(timeout: .seconds(60)) {
            guard let entry = await downloads.entry(name) else { return false }
            return matches(entry.state)
        }
    }
}

/// A transport that notes the path of every request before passing it on.
final class RequestLog: HTTPTransport {
    let base: any HTTPTransport
    private let log = Mutex<[String]>([])

    init(base: any HTTPTransport) { self.base = base }

    var paths: [String] { log.withLock { $0 } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        log.withLock { $0.append(request.url.path) }
        return try await base.send(request)
    }
}
