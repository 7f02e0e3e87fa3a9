import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

#if canImport(SwiftUI)
    import SwiftUI
#endif

// The code samples of the DocC articles (Sources/ModelDepot/ModelDepot.docc), kept here so they compile: an
// article's sample that stops compiling fails the build. Samples that need the internet are compiled, not run.

/// "Downloading a model".
enum DownloadingAModelSamples {
    static func pullARepository() async throws {
        let models = try ModelManager()
        let repo = try RepoID("Qwen/Qwen2.5-0.5B-Instruct-GGUF")
        let task = await models.download(repo, matching: ["*q4_k_m.gguf"])
        let snapshot = try await task.result()
        print(snapshot.folder.path)
    }

    static func chooseTheHubAndTheCache() throws -> ModelManager {
        // Application Support in an app (excluded from backup); Python's cache on Linux and the macOS command line.
        let cache = HubCache(root: ModelStorage(placement: .applicationSupport).cacheDirectory)
        let models = try ModelManager(
            configuration: .init(endpoint: URL(string: "https://huggingface.co")!, token: nil, cache: cache))
        return models
    }

    static func pullACatalogModel(models: ModelManager) async throws {
        let catalog = try ModelCatalog.builtIn()
        if let entry = catalog.entry(named: "all-minilm-l6-v2") {
            let snapshot = try await models.download(entry).result()
            let report = try models.readiness(of: entry)
            if report.readiness.isReady { print("load", snapshot.folder.path) }
        }
    }

    static func pullSomeFilesIntoAFolderAtACappedRate(cache: HubCache) async throws {
        var configuration = ModelManager.Configuration(cache: cache)
        configuration.maxConnectionsPerPull = 8
        configuration.bandwidth.bytesPerSecond = 20_000_000
        let capped = try ModelManager(configuration: configuration)
        let request = SnapshotRequest(
            repo: try RepoID("acme/tiny"), files: ["config.json", "tokenizer"],
            localDirectory: LocalDirectory(URL(fileURLWithPath: "/tmp/tiny")))
        let plan = try await capped.plan(request)
        print(plan.downloadBytes, plan.freeBytesAfter ?? 0)
        let snapshot = try await capped.download(request).result()
        capped.bandwidth?.bytesPerSecond = 5_000_000  // every running download slows down
        _ = snapshot
    }

    static func downloadOneFile() async throws {
        let models = try ModelManager()
        let task = models.download(
            from: URL(string: "https://example.com/model.gguf")!, to: URL(fileURLWithPath: "/tmp/model.gguf"),
            sha256: nil)
        for await progress in task.progress {
            print(progress.bytesCompleted, progress.totalBytes ?? -1)
        }
        let result = try await task.result()
        print(result.file.path, result.sha256 ?? "")
    }

    static func matchAnErrorCode(task: ModelDownloadTask) async throws {
        do {
            _ = try await task.result()
        } catch let error as ModelDepotError where error.code == .insufficientDiskSpace {
            // Free space and pull again: the bytes already on disk are kept.
        }
    }
}

/// "Watching and controlling downloads in SwiftUI".
enum WatchingDownloadsSamples {
    #if canImport(SwiftUI)
        // Never compiled here (no SwiftUI on Linux); kept identical to the article so a Mac build checks it.
        struct ModelDownloadRow: View {
            let models: ModelManager
            let entry: CatalogEntry
            @State private var download: ObservedModelDownload?

            var body: some View {
                Group {
                    if let download {
                        ModelDownloadProgress(download: download)
                    } else {
                        ProgressView()
                    }
                }
                .task { download = ObservedModelDownload(await models.download(entry)) }
            }
        }

        struct ModelDownloadProgress: View {
            let download: ObservedModelDownload

            var body: some View {
                VStack(alignment: .leading) {
                    ProgressView(value: download.progress?.fractionCompleted ?? 0)
                    Text("\(download.progress?.filesCompleted ?? 0) of \(download.progress?.totalFiles ?? 0) files")
                    if let waiting = download.progress?.waiting {
                        Text(waiting.description).foregroundStyle(.secondary)
                    }
                    switch download.state {
                    case .downloading: Button("Pause") { Task { await download.pause() } }
                    case .paused: Button("Resume") { download.resume() }
                    case .failed(let error): Text(error.message)
                    default: EmptyView()
                    }
                }
            }
        }
    #endif

    static func fromAnywhereInTheApp(models: ModelManager, entry: CatalogEntry) async throws {
        // Cancel a model's download by its identifier; what arrived is kept.
        await models.cancelDownload(try RepoID("Qwen/Qwen2.5-0.5B-Instruct-GGUF"))
        // One value for an overall bar across every download still running or paused.
        let overall = await models.overallProgress
        print(overall.downloads, overall.fractionCompleted ?? 0, overall.bytesPerSecond)
        // The task of a catalog model, if one was started.
        if let task = await models.task(for: entry) { print(task.state) }
    }

    static func explain(_ error: ModelDepotError) -> (title: String, advice: String?, canRetry: Bool) {
        let title: String
        switch error.category {
        case .network: title = "The connection failed"
        case .authorization: title = "This model needs an account with access"
        case .notFound: title = "Not found"
        case .storage: title = "Not enough room, or the disk refused"
        case .integrity: title = "The download did not check out"
        case .cancelled: title = "Cancelled"
        case .input, .other: title = "That did not work"
        }
        return (title, error.recoverySuggestion, error.isRetryable)
    }

    static func withoutSwiftUI(task: ModelDownloadTask) async throws {
        for await progress in task.progress {
            print(progress.bytesCompleted, "/", progress.totalBytes ?? 0)
        }
        let snapshot = try await task.result()
        print(snapshot.folder.path)
    }
}

/// "Managing the cache".
enum ManagingTheCacheSamples {
    static func whereTheCacheIs() -> ModelManager {
        let storage = ModelStorage(placement: .caches)
        return ModelManager(managingCache: .init(cache: HubCache(root: storage.cacheDirectory)))
    }

    static func whatIsCached(models: ModelManager) async throws {
        for model in try await models.cachedModels() {
            print(model.id, model.sizeOnDisk, model.revisions.count)
        }
        print("total", try await models.cacheSize())
    }

    static func isItIntact(models: ModelManager, repo: RepoID) async throws {
        let outcome = try await models.verify(repo)
        if !outcome.problems.isEmpty {
            let left = try await models.repair(repo, problems: outcome.problems)
            print(left.isEmpty ? "repaired" : "still broken: \(left)")
        }
    }

    static func keepingItSmall(models: ModelManager, repo: RepoID, otherRepo: RepoID) async throws {
        try models.pin(repo)
        let plan = try await models.prune(maxSize: 20_000_000_000, dryRun: true)
        print("would free", plan.freedBytes, "by removing", plan.evicted.map(\.id))
        _ = try await models.prune(maxSize: 20_000_000_000)
        _ = try await models.delete(otherRepo)
    }
}

/// "Downloading while the app is suspended" (the background session is Apple's; what it is handed is portable).
enum DownloadingWhileSuspendedSamples {
    static func whatABackgroundSessionIsHanded(_ models: ModelManager, _ repo: RepoID) async throws
        -> (url: URL, size: Int64, sha256: String)?
    {
        let file = try await models.fileMetadata(repo, path: "model.gguf")
        guard let size = file.size, let sha256 = file.sha256 else { return nil }
        return (file.location, size, sha256)
    }

    static func keepsAPinnedModel(_ models: ModelManager, _ repo: RepoID) throws {
        if !models.isPinned(repo) { try models.pin(repo) }
    }
}

/// "Running a mirror".
enum RunningAMirrorSamples {
    static func pointTheHubClientAtTheMirror() throws -> ModelManager {
        let mirror = URL(string: "http://mirror.local:8080")!
        return try ModelManager(
            configuration: .init(endpoint: mirror, cache: HubCache(root: ModelStorage().cacheDirectory)))
    }

    static func askMirrorsBeforeTheHub() throws -> ModelManager {
        var configuration = ModelManager.Configuration()
        configuration.environment.mirrorURLs = ["http://mirror.local:8080"]
        let models = try ModelManager(configuration: configuration)
        return models
    }

    static func lookForAMirrorOnTheLAN() async throws -> ModelManager {
        var configuration = ModelManager.Configuration()
        let found = try await configuration.discoverMirrors()  // waits 2 s at most
        print(found.map(\.name))
        let models = try ModelManager(configuration: configuration)
        return models
    }
}

/// "Shipping models you can reproduce and trust" (compiled; each call is exercised by LockCommandTests,
/// SignatureCommandTests and PickleCommandTests).
enum ShippingAndTrustingModelsSamples {
    static func pinTheBytes() async throws {
        let models = try ModelManager()
        let lock = try await models.lock([
            ModelLock.Target(repo: try RepoID("sentence-transformers/all-MiniLM-L6-v2"), revision: "main")
        ])
        try lock.encoded().write(to: URL(fileURLWithPath: "modeldepot.lock"))
        let task = await models.download(lock: lock)
        for await progress in task.progress { print(progress.repositoriesCompleted, progress.totalRepositories) }
        _ = try await task.result()
    }

    static func shipInsideTheApp() async throws {
        let bundled = try BundledModels(storage: ModelStorage())
        var configuration = ModelManager.Configuration(cache: HubCache(root: ModelStorage().cacheDirectory))
        configuration.bundled = bundled
        let models = try ModelManager(configuration: configuration)
        try await models.verifyBundledModels()
        _ = models.localPath(try RepoID("sentence-transformers/all-MiniLM-L6-v2"))
    }

    static func requireTheSignature(_ models: ModelManager) async throws {
        let key = try TrustedKey(contentsOf: URL(fileURLWithPath: "publisher.pub.pem"))
        let check = try await models.verifySignature(of: try RepoID("acme/model"), trust: .key(key))
        print(check.signed.files.count, "files are the publisher's")
        let task = await models.download(
            SnapshotRequest(repo: try RepoID("acme/model")),
            policy: DownloadPolicy(signature: SignatureRequirement(trust: .key(key))))
        let snapshot = try await task.result()  // throws `signatureInvalid` naming what differs
        print(snapshot.signatureCheck?.reusedDigests ?? 0, "digests came from the download")
    }

    static func keepOutPickles(_ models: ModelManager) async throws {
        let task = await models.download(
            SnapshotRequest(repo: try RepoID("acme/model")), policy: DownloadPolicy(refusePickle: true))
        _ = try await task.result()  // throws `unsafeFormat` naming each pickle, before a byte of one is fetched
    }
}

/// "Testing your app's downloads": this one runs.
@Suite struct DocumentationSampleTests {
    @Test func aResetMidBodyIsRetriedAndTheFileIsExact() async throws {
        let bytes = SampleData.bytes(count: 1 << 20, seed: 7)
        let server = try await FaultServer.start(files: ["/model.bin": bytes])
        defer { Task { try? await server.shutdown() } }
        server.inject(.reset(afterBytes: 100_000))

        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        var configuration = ModelManager.Configuration(endpoint: server.baseURL, cache: HubCache(root: folder.url))
        configuration.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))  // retry at once
        let models = try ModelManager(configuration: configuration)
        let result = try await models.download(
            from: server.url("/model.bin"), to: folder.path("model.bin"), sha256: SampleData.sha256(bytes)
        ).result()
        #expect(result.sha256 == SampleData.sha256(bytes))
        #expect(server.pendingFaults == 0, "the reset happened")
    }
}
