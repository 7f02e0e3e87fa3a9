import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

/// Our client pulling from our mirror into a Hub cache: the layout, patterns, offline rules, errors.
@Suite struct SnapshotDownloadTests {
    static let weights = SampleData.bytes(count: 5 << 20, seed: 7)
    static let config = Array(#"{"model_type": "demo"}"#.utf8)
    static let vocab = Array("a b c\n".utf8)
    static let layout: [String: [UInt8]] = [
        "acme/tiny/model.gguf": weights, "acme/tiny/config.json": config, "acme/tiny/tokenizer/vocab.txt": vocab,
    ]

    @Test func pullWritesThePythonCacheLayout() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let snapshot = try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/tiny")))
            let repo = try hub.repository("acme/tiny")
            let commit = snapshot.commit
            #expect(HubEncoding.isGitID(commit))
            #expect(snapshot.folder == repo.snapshotFolder(commit))
            #expect(snapshot.files.map(\.value) == ["config.json", "model.gguf", "tokenizer/vocab.txt"])
            #expect(snapshot.filesDownloaded == 3)

            // Blobs named by ETag: SHA-256 for the LFS file, git blob id for the others.
            let weightsBlob = repo.blob(SampleData.sha256(Self.weights))
            #expect(try Data(contentsOf: weightsBlob) == Data(Self.weights))
            #expect(try Data(contentsOf: repo.blob(GitBlob.id(of: Self.config))) == Data(Self.config))
            // Relative links, one `..` per level.
            let folder = repo.snapshotFolder(commit)
            #expect(
                try HubFixture.linkTarget(folder.appendingPathComponent("model.gguf"))
                    == "../../blobs/\(SampleData.sha256(Self.weights))")
            #expect(
                try HubFixture.linkTarget(folder.appendingPathComponent("tokenizer/vocab.txt"))
                    == "../../../blobs/\(GitBlob.id(of: Self.vocab))")
            #expect(try Data(contentsOf: folder.appendingPathComponent("tokenizer/vocab.txt")) == Data(Self.vocab))
            // The ref: exactly the 40 characters, no newline.
            #expect(try Data(contentsOf: repo.refsFolder.appendingPathComponent("main")) == Data(commit.utf8))
            #expect(FileManager.default.fileExists(atPath: hub.cache.root.appendingPathComponent("CACHEDIR.TAG").path))
            let tree = try #require(repo.recordedTree(commit))
            #expect(tree.files.count == 3)
            #expect(tree.files[try RepoFilePath("model.gguf")]?.lfsSHA256 == SampleData.sha256(Self.weights))
            // Python's lock files, left in place as Python leaves them; no work files left in blobs/.
            #expect(FileManager.default.fileExists(atPath: repo.lockFile(SampleData.sha256(Self.weights)).path))
            let blobs = try FileManager.default.contentsOfDirectory(atPath: repo.blobsFolder.path)
            #expect(blobs.count == 3)

            // Pulling again needs no download; a pinned commit needs no revision lookup either.
            let again = try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/tiny")))
            #expect(again.filesDownloaded == 0 && again.bytesDownloaded == 0 && again.commit == commit)
            let pinned = try await hub.downloader().download(
                SnapshotRequest(repo: try RepoID("acme/tiny"), revision: commit))
            #expect(pinned.folder == snapshot.folder)
        }
    }

    /// The commit's listing names each file's blob (SHA-256 or git blob id) and size, so a pull asks no HEAD:
    /// one GET per file, against the commit.
    @Test func filesTheListingSettlesAreFetchedWithoutAHEAD() async throws {
        let log = RecordedLog()
        try await HubFixture.with(Self.layout, logger: log.logger) { hub in
            let snapshot = try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/tiny")))
            #expect(snapshot.filesDownloaded == 3)
            let fileRequests = log.messages.filter { $0.contains("/resolve/") }
            #expect(fileRequests.filter { $0.hasPrefix("HEAD ") }.isEmpty, "\(fileRequests)")
            #expect(fileRequests.filter { $0.hasPrefix("GET ") && $0.contains(snapshot.commit) }.count == 3)
        }
    }

    @Test func patternsSelectFilesAsPythonDoes() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let request = SnapshotRequest(repo: try RepoID("acme/tiny"), include: ["*.json", "tokenizer/"])
            let snapshot = try await hub.downloader().download(request)
            #expect(snapshot.files.map(\.value) == ["config.json", "tokenizer/vocab.txt"])
            let repo = try hub.repository("acme/tiny")
            #expect(!repo.hasFile(try RepoFilePath("model.gguf"), commit: snapshot.commit))

            let excluding = SnapshotRequest(repo: try RepoID("acme/tiny"), exclude: ["*.gguf"])
            #expect(try await hub.downloader().download(excluding).filesDownloaded == 0)

            let nothing = SnapshotRequest(repo: try RepoID("acme/tiny"), include: ["*.safetensors"])
            let error = await #expect(throws: ModelDepotError.self) { try await hub.downloader().download(nothing) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("model.gguf") == true)
        }
    }

    @Test func offlineAnswersFromTheCacheAndNamesMissingFiles() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let id = try RepoID("acme/tiny")
            let notYet = await #expect(throws: ModelDepotError.self) {
                try await hub.downloader(offline: true).download(SnapshotRequest(repo: id))
            }
            #expect(notYet?.code == .notCached)

            let partial = try await hub.downloader().download(SnapshotRequest(repo: id, include: ["*.json"]))
            // Offline, the recorded tree shows the snapshot lacks two files: an error naming them…
            let incomplete = await #expect(throws: ModelDepotError.self) {
                try await hub.downloader(offline: true).download(SnapshotRequest(repo: id))
            }
            #expect(incomplete?.code == .incompleteSnapshot)
            #expect(incomplete?.message.contains("model.gguf") == true)
            #expect(incomplete?.message.contains("tokenizer/vocab.txt") == true)
            // …while the files that are there are served.
            let cached = try await hub.downloader(offline: true).download(
                SnapshotRequest(repo: id, include: ["*.json"]))
            #expect(cached.folder == partial.folder && cached.answeredFromCacheBecause != nil)
        }
    }

    @Test func unreachableHubFallsBackToACompleteCache() async throws {
        let cacheRoot: URL
        let commit: String
        let keep = try TemporaryDirectory(prefix: "modeldepot-keep")
        defer { keep.remove() }
        (cacheRoot, commit) = try await HubFixture.with(Self.layout) { hub in
            let snapshot = try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/tiny")))
            try FileManager.default.copyItem(at: hub.cache.root, to: keep.path("cache"))
            return (keep.path("cache"), snapshot.commit)
        }
        // The mirror is gone: its port refuses connections.
        let hub = HubClient(
            endpoint: URL(string: "http://127.0.0.1:9")!, transport: DefaultTransport.shared, clock: ImmediateClock())
        let pull = SnapshotDownloader(
            hub: hub, cache: HubCache(root: cacheRoot),
            downloader: Downloader(clock: ImmediateClock(), configuration: HubFixture.immediateConfiguration),
            clock: ImmediateClock())
        let retries = Mutex(0)
        let counting: @Sendable (SnapshotProgress) -> Void = { progress in
            if case .retry? = progress.waiting { retries.withLock { $0 += 1 } }
        }
        // With a complete snapshot at hand, a refused local connection is not worth six attempts (hf: 0.8 s,
        // ModelDepot once ~5.7 s of retries): the first refusal answers from the cache.
        let snapshot = try await pull.download(SnapshotRequest(repo: try RepoID("acme/tiny")), progress: counting)
        #expect(snapshot.commit == commit)
        #expect(snapshot.answeredFromCacheBecause?.contains("connection refused") == true)
        #expect(retries.withLock { $0 } == 0)
        // Without one, the pull retries as always, then fails.
        let other = await #expect(throws: ModelDepotError.self) {
            try await pull.download(SnapshotRequest(repo: try RepoID("acme/other")), progress: counting)
        }
        #expect(other?.code == .network)
        #expect(retries.withLock { $0 } == 5)
    }

    @Test func hubErrorsHaveCodesUsersCanActOn() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let missingRepo = await #expect(throws: ModelDepotError.self) {
                try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/missing")))
            }
            #expect(missingRepo?.code == .repositoryNotFound)
            let missingRevision = await #expect(throws: ModelDepotError.self) {
                try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/tiny"), revision: "v9"))
            }
            #expect(missingRevision?.code == .revisionNotFound)
            #expect(missingRevision?.message.contains("'v9'") == true)
            let missingFile = await #expect(throws: ModelDepotError.self) {
                try await hub.hub.fileMetadata(
                    try RepoID("acme/tiny"), revision: "main", path: RepoFilePath("nope.bin"))
            }
            #expect(missingFile?.code == .entryNotFound)
        }
    }

    @Test func privateMirrorNeedsTheToken() async throws {
        try await HubFixture.with(Self.layout, token: "secret") { hub in
            let anonymous = HubClient(
                endpoint: hub.mirror.baseURL, transport: DefaultTransport.shared, clock: ImmediateClock())
            let refused = await #expect(throws: ModelDepotError.self) {
                try await hub.downloader(hub: anonymous).download(SnapshotRequest(repo: try RepoID("acme/tiny")))
            }
            #expect(refused?.code == .repositoryNotFound || refused?.code == .unauthorized)
            let snapshot = try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/tiny")))
            #expect(snapshot.filesDownloaded == 3)
        }
    }
}
