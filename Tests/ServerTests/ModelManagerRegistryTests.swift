import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// The manager's one registry of downloads, over our mirror: cancelling by model from anywhere, one overall
/// progress value, and the configuration every front end builds a manager from.
@Suite struct ModelManagerRegistryTests {
    static let weights = SampleData.bytes(count: 8 << 20, seed: 23)
    static let layout: [String: [UInt8]] = [
        "acme/chat/model-q4.gguf": weights, "acme/chat/config.json": Array(#"{"n": 1}"#.utf8),
        "acme/small/config.json": Array(#"{"small": true}"#.utf8),
    ]

    /// A manager built the one way front ends build it, pointed at the fixture's mirror.
    static func manager(_ hub: HubFixture) throws -> ModelManager {
        var configuration = ModelManager.Configuration(endpoint: hub.mirror.baseURL, cache: hub.cache)
        configuration.engine = HubFixture.immediateConfiguration
        configuration.engine.progressInterval = .zero
        return try ModelManager(configuration: configuration)
    }

    @Test func cancellingByModelStopsItsDownloadWhereverItWasStarted() async throws {
        try await HubFixture.with(Self.layout, cdn: [Self.weights]) { hub in
            let cdn = try #require(hub.cdn)
            cdn.inject(.throttle(bytesPerSecond: 1 << 20), times: 1000)
            let models = try Self.manager(hub)
            let chat = try RepoID("acme/chat")
            let task = await models.download(chat)
            // The registry hands the same task to whoever asks, by request or by listing.
            #expect(await models.task(for: task.request) === task)
            #expect(await models.downloads.contains { $0 === task })
            #expect(await waitUntil { cdn.bodyBytesSent > 0 })

            // A model not being downloaded: nothing to cancel, and the running one is untouched.
            #expect(await models.cancelDownload(try RepoID("acme/other")) == 0)
            #expect(!task.state.isFinal)

            #expect(await models.cancelDownload(chat) == 1)
            guard case .cancelled = task.state else {
                Issue.record("expected cancelled, got \(task.state)")
                return
            }
            // Ended downloads stay listed (a screen shows them) but count in no overall bar.
            #expect(await models.overallProgress.downloads == 0)
            #expect(await models.cancelDownload(chat) == 0)

            // Started again, it is a new task that resumes from what arrived.
            cdn.clearFaults()
            let again = await models.download(chat)
            #expect(again !== task)
            #expect(await models.task(for: task.request) === again)
            _ = try await again.result()
            #expect(models.isComplete(chat))
        }
    }

    @Test func overallProgressAddsUpTheDownloadsThatHaveNotEnded() async throws {
        try await HubFixture.with(Self.layout, cdn: [Self.weights]) { hub in
            let cdn = try #require(hub.cdn)
            cdn.inject(.throttle(bytesPerSecond: 1 << 20), times: 1000)
            let models = try Self.manager(hub)
            #expect(await models.overallProgress == OverallProgress())
            #expect(await models.overallProgress.fractionCompleted == nil)

            let small = try await models.download(try RepoID("acme/small")).result()
            let chat = await models.download(try RepoID("acme/chat"))
            let total = Int64(Self.weights.count + #"{"n": 1}"#.utf8.count)
            #expect(await waitUntil { chat.latestProgress.map { $0.bytesCompleted > 1 << 20 } ?? false })
            await chat.pause()
            let overall = await models.overallProgress
            // The finished small download is not counted; the paused one is, with what it kept.
            #expect(overall.downloads == 1)
            #expect(overall.totalBytes == total)
            #expect(overall.bytesCompleted == chat.latestProgress?.bytesCompleted)
            #expect(overall.bytesCompleted > 1 << 20 && overall.bytesCompleted < total)
            #expect(overall.bytesPerSecond == 0, "a paused download moves no bytes")
            let fraction = try #require(overall.fractionCompleted)
            #expect(fraction > 0 && fraction < 1)
            #expect(small.files.count == 1)

            cdn.clearFaults()
            chat.resume()
            _ = try await chat.result()
            #expect(await models.overallProgress.downloads == 0)
        }
    }

    @Test func theConfigurationIsTheOnePlaceTheEngineIsBuilt() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        var configuration = ModelManager.Configuration(
            endpoint: URL(string: "http://127.0.0.1:9")!, token: "hf_secret", cache: HubCache(root: folder.url))
        configuration.engine.maxConnections = 3
        configuration.bandwidth.bytesPerSecond = 5_000_000
        configuration.maxConcurrentFiles = 2
        configuration.maxConcurrentSmallFiles = 5
        let models = try ModelManager(configuration: configuration)
        #expect(models.pull.downloadConfiguration.maxConnections == 3)
        #expect(models.pull.maxConcurrentFiles == 2 && models.pull.maxConcurrentSmallFiles == 5)
        // The cap a person changes is the one the engine reads.
        #expect(models.bandwidth === configuration.bandwidth)
        #expect(models.pull.downloadConfiguration.bandwidthLimit === configuration.bandwidth)
        #expect(models.cache.root == folder.url)
        // The token goes to the endpoint and nowhere else.
        let hub = models.pull.hub
        #expect(hub.authorization(for: URL(string: "http://127.0.0.1:9/acme/x/resolve/main/a")!).count == 1)
        #expect(hub.authorization(for: URL(string: "http://127.0.0.2:9/acme/x/resolve/main/a")!).isEmpty)
        #expect(!hub.isOffline)
        // With no token given, none is read from where the process runs (a mirror's upstream must not pull with
        // its operator's `hf auth login` token).
        let anonymous = ModelManager.Configuration(endpoint: URL(string: "https://hub.example")!, cache: models.cache)
        #expect(anonymous.environment.token == nil)
        #expect(!anonymous.environment.usesImplicitToken)
        #expect(anonymous.environment.variables.isEmpty, "nothing is read from the process environment")
        #expect(try anonymous.makePull().hub.authorization(for: URL(string: "https://hub.example/x")!).isEmpty)

        // An unusable endpoint: the manager that would download refuses, saying which setting to fix; the one
        // that only manages the cache works offline instead.
        let broken = HubEnvironment(variables: ["HF_ENDPOINT": "not a url", "HF_HUB_CACHE": folder.url.path])
        let error = #expect(throws: ModelDepotError.self) {
            try ModelManager(configuration: .init(environment: broken))
        }
        #expect(error?.code == .invalidURL && error?.remedy == .fixEndpoint && error?.category == .input)
        let offline = ModelManager(managingCache: .init(environment: broken))
        #expect(offline.pull.hub.isOffline && offline.cache.root.path == folder.url.path)
    }
}
