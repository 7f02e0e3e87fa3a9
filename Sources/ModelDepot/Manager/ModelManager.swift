import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotPlatform
import ModelDepotTrust

/// The app-facing entry point: download models into the shared Hub cache, watch and control those downloads,
/// and manage what is on disk.
///
/// ```swift
/// let models = try ModelManager()
/// let task = await models.download(try RepoID("Qwen/Qwen2.5-0.5B-Instruct-GGUF"), matching: ["*q4_k_m.gguf"])
/// let snapshot = try await task.result()
/// if await models.isComplete(try RepoID("Qwen/Qwen2.5-0.5B-Instruct-GGUF"), matching: ["*q4_k_m.gguf"]) { … }
/// ```
/// Identical requests made while one is in flight share one task. Everything but ``download(_:type:revision:matching:excluding:)``
/// works without the network.
public actor ModelManager {
    /// The cache this manager downloads into and manages.
    public nonisolated let cache: HubCache
    /// The pull every download of this manager goes through (Hub client, cache, engine); the package's own
    /// front ends reach it, apps go through the manager's registry.
    package nonisolated let pull: SnapshotDownloader
    /// Models shipped inside the app, read in place: found before the cache once verified for this build.
    public nonisolated let bundled: BundledModels?
    /// Repository reports reused between listings while their folders are unchanged (screens ask often).
    nonisolated let scanMemo = CacheScanMemo()
    /// The one registry of this manager's downloads (ModelManager+Downloads.swift).
    var registry = DownloadRegistry()

    /// A manager around a pull assembled by hand (a test's Hub client on an injected clock, say); apps use
    /// ``init(configuration:)``.
    package init(pull: SnapshotDownloader, bundled: BundledModels? = nil) {
        self.pull = pull
        self.cache = pull.cache
        self.bundled = bundled
    }

    /// The cap on bytes per second every download of this manager shares (change its `bytesPerSecond` while they
    /// run); nil only for a manager around a pull built without one.
    public nonisolated var bandwidth: BandwidthLimit? { pull.downloadConfiguration.bandwidthLimit }

    /// Starts (or joins) downloading the files of `repo` at `revision` that match the patterns.
    public func download(
        _ repo: RepoID, type: RepoType = .model, revision: String = "main", matching patterns: [String] = [],
        excluding: [String] = []
    ) -> ModelDownloadTask {
        download(SnapshotRequest(repo: repo, type: type, revision: revision, include: patterns, exclude: excluding))
    }

    /// Starts (or joins) a pull as `request` describes it: exact files, a forced download, and so on.
    public func download(_ request: SnapshotRequest) -> ModelDownloadTask {
        if let running = registry.plainTask(for: request), !running.state.isFinal { return running }
        let task = ModelDownloadTask(request: request, pull: pull)
        registry.add(task)
        task.resume()
        return task
    }

    /// What downloading `request` would fetch, and the free space after; downloads and writes nothing.
    public nonisolated func plan(_ request: SnapshotRequest) async throws -> SnapshotPlan {
        try await pull.plan(request)
    }

    /// Starts (or joins) downloading exactly a catalog entry's variant, at its pinned revision.
    public func download(_ entry: CatalogEntry) -> ModelDownloadTask {
        download(entry.snapshotRequest)
    }

    /// Whether a catalog entry's files are all cached (per the recorded file list) and every path it requires
    /// for loading is present, or the app ships it verified. No network.
    public nonisolated func isComplete(_ entry: CatalogEntry) -> Bool {
        if bundledReadiness(of: entry)?.readiness == .ready { return true }
        let request = entry.snapshotRequest
        guard isComplete(request.repo, type: request.type, revision: request.revision, matching: entry.files),
            let folder = localPath(request.repo, type: request.type, revision: request.revision)
        else { return false }
        return entry.required.allSatisfy {
            FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path)
        }
    }

    /// The snapshot folder, or one file in it, when cached at `revision` (or shipped in the app and verified for
    /// this build); nil otherwise. No network.
    public nonisolated func localPath(
        _ repo: RepoID, type: RepoType = .model, revision: String = "main", file: String? = nil
    ) -> URL? {
        if let bundled, bundled.isVerified,
            let url = bundled.localPath(repo, type: type, revision: revision, file: file)
        {
            return url
        }
        let repository = cache.repository(repo, type: type)
        guard let commit = repository.commit(forRevision: revision) else { return nil }
        guard let file else {
            let folder = repository.snapshotFolder(commit)
            return FileManager.default.fileExists(atPath: folder.path) ? folder : nil
        }
        guard let path = try? RepoFilePath(file), repository.hasFile(path, commit: commit) else { return nil }
        return repository.snapshotFile(commit, path)
    }

    /// Whether every file of `revision` that matches the patterns is cached, per the file list recorded at
    /// pull time. False when no list was recorded (nothing proves completeness). No network.
    public nonisolated func isComplete(
        _ repo: RepoID, type: RepoType = .model, revision: String = "main", matching patterns: [String] = [],
        excluding: [String] = []
    ) -> Bool {
        let repository = cache.repository(repo, type: type)
        guard let commit = repository.commit(forRevision: revision), repository.recordedTree(commit) != nil else {
            return false
        }
        let request = SnapshotRequest(repo: repo, type: type, revision: revision, include: patterns, exclude: excluding)
        return (try? pull.cachedSnapshot(request)) != nil
    }

    /// Every cached repository, including those other tools (Python's `huggingface_hub`) downloaded.
    ///
    /// The walk (one `readdir` per folder, one `stat` per file of a large cache) runs off Swift's cooperative pool.
    public nonisolated func cachedModels() async throws -> [CachedRepositoryReport] {
        let cache = cache
        let scanMemo = scanMemo
        return try await BlockingWork.run {
            guard FileManager.default.fileExists(atPath: cache.root.path) else { return [] }
            return try CacheScanner(cache: cache, memo: scanMemo).scan().repositories
        }
    }

    /// One cached repository: its revisions, refs and size.
    ///
    /// - Throws: `notCached` when it is not in the cache.
    public nonisolated func cachedModel(_ repo: RepoID, type: RepoType = .model) throws -> CachedRepositoryReport {
        let repository = cache.repository(repo, type: type)
        guard FileStatus(path: repository.folder.path)?.kind == .folder else {
            throw ModelDepotError(
                .notCached, "\(repo) (\(type.rawValue)) is not in the cache \(cache.root.path).", remedy: .downloadFirst
            )
        }
        return try CacheScanner(cache: cache).scanRepository(
            name: repository.folder.lastPathComponent, folder: repository.folder.path)
    }

    /// Bytes the cache takes, each blob counted once.
    public nonisolated func cacheSize() async throws -> Int64 {
        let cache = cache
        return try await BlockingWork.run {
            guard FileManager.default.fileExists(atPath: cache.root.path) else { return 0 }
            return try CacheScanner(cache: cache).scan().sizeOnDisk
        }
    }

    /// Deletes a repository, or one revision of it (blobs other revisions use stay). Returns the bytes freed;
    /// 0 when it is not cached.
    @discardableResult
    public func delete(_ repo: RepoID, type: RepoType = .model, revision: String? = nil) async throws -> Int64 {
        let plan: DeletionPlan
        do {
            plan = try deletionPlan(repo, type: type, revisions: revision.map { [$0] } ?? [])
        } catch let error as ModelDepotError where error.code == .notCached {
            return 0
        }
        return try await delete(plan, of: repo, type: type)
    }

    /// What deleting `revisions` (branch or tag names, or commits) of `repo` would remove and free — every
    /// revision when empty — without deleting anything: Python's delete strategy (blobs another revision
    /// uses stay).
    ///
    /// - Throws: `notCached` when the repository, or one of the revisions, is not in the cache.
    public nonisolated func deletionPlan(_ repo: RepoID, type: RepoType = .model, revisions: [String] = []) throws
        -> DeletionPlan
    {
        let repository = cache.repository(repo, type: type)
        let report = try cachedModel(repo, type: type)
        var commits: Set<String>?
        if !revisions.isEmpty {
            commits = Set(
                try revisions.map { name in
                    guard let commit = repository.commit(forRevision: name) else {
                        throw ModelDepotError(
                            .notCached, "\(repo) has no cached revision '\(name)'.", remedy: .downloadFirst)
                    }
                    return commit
                })
        }
        return try DeletionPlan(deleting: commits, of: report)
    }

    /// Deletes what `plan` names, after stopping this manager's downloads of `repo`. Returns the bytes freed.
    @discardableResult
    public func delete(_ plan: DeletionPlan, of repo: RepoID, type: RepoType = .model) async throws -> Int64 {
        try await stopDownloads { $0.repo == repo && $0.type == type }
        // Unlinking gigabytes can take the file system a while: off the pool.
        try await BlockingWork.run { try plan.execute() }
        return plan.freedBytes
    }

    /// Deletes every cached repository (and stops downloads in flight). Returns the bytes freed.
    @discardableResult
    public func clearCache() async throws -> Int64 {
        try await stopDownloads { _ in true }
        var freed: Int64 = 0
        for repository in try await cachedModels() {
            let plan = try DeletionPlan(deleting: nil, of: repository)
            try await BlockingWork.run { try plan.execute() }
            freed += plan.freedBytes
        }
        return freed
    }

    /// Records that a model was just used: its blobs' access times become now, so `ls`, `scan_cache_dir`
    /// and least-recently-used cleanups see it as recent even on `noatime` file systems.
    public nonisolated func markAccessed(_ repo: RepoID, type: RepoType = .model, revision: String = "main") throws {
        let repository = cache.repository(repo, type: type)
        guard let commit = repository.commit(forRevision: revision) else {
            throw ModelDepotError(.notCached, "\(repo) at '\(revision)' is not cached.")
        }
        let folder = repository.snapshotFolder(commit).path
        for file in CacheScanner.walkFiles(folder) {
            FileAccessTime.touch(CacheScanner.blobPath(of: folder + "/" + file))
        }
        // Access times are not in a listing's fingerprint: the next listing reads this repository again.
        scanMemo.forget(repository.folder.path)
    }

    /// Re-hashes every blob of a cached repository against the digest its name promises, and checks each
    /// snapshot against its recorded file list. No network.
    ///
    /// Hashing reads every byte of the repository: it runs off Swift's cooperative pool, where it would take a
    /// thread from every server and download in the process for seconds per gigabyte.
    ///
    /// - Throws: `notCached` when the repository is not in the cache.
    public nonisolated func verify(_ repo: RepoID, type: RepoType = .model) async throws -> CacheVerifier.Outcome {
        _ = try cachedModel(repo, type: type)
        let cache = cache
        return try await BlockingWork.run { try CacheVerifier(cache: cache).verify(cache.repository(repo, type: type)) }
    }

    /// Repairs what ``verify(_:type:)`` found: removes corrupt blobs and unlisted snapshot entries, then
    /// downloads again exactly the files that were corrupt or missing. Returns the problems still there
    /// afterwards (none when the repair worked).
    public func repair(
        _ repo: RepoID, type: RepoType = .model, problems: [CacheVerifier.Problem],
        progress: @escaping @Sendable (SnapshotProgress) -> Void = { _ in }
    ) async throws -> [CacheVerifier.Problem] {
        let repository = cache.repository(repo, type: type)
        let verifier = CacheVerifier(cache: cache)
        _ = try await verifier.repair(repository, problems: problems, using: pull, progress: progress)
        return try await BlockingWork.run { try verifier.verify(repository).problems }
    }

    /// Protects a cached model from ``prune(maxSize:dryRun:)``.
    public nonisolated func pin(_ repo: RepoID, type: RepoType = .model) throws {
        try PinStore(cache: cache).pin(repo, type: type)
    }

    /// Lets ``prune(maxSize:dryRun:)`` evict the model again; nothing happens when it was not pinned.
    public nonisolated func unpin(_ repo: RepoID, type: RepoType = .model) {
        PinStore(cache: cache).unpin(repo, type: type)
    }

    /// Whether ``pin(_:type:)`` protects the model from ``prune(maxSize:dryRun:)``.
    public nonisolated func isPinned(_ repo: RepoID, type: RepoType = .model) -> Bool {
        PinStore(cache: cache).isPinned(repo, type: type)
    }

    /// What the endpoint says of one file at `revision`, without downloading it: the commit, the ETag, the size and
    /// where its bytes are. Asked with the manager's token, mirrors and retries.
    ///
    /// For an LFS file the Hub answers with its SHA-256 (`HubFileMetadata.sha256`) and, for a gated repository,
    /// a redirect to a signed link on its CDN that carries no token: what a background session can be handed
    /// (<doc:DownloadingWhileSuspended>). Any other file's `location` is the endpoint's (or a mirror's) own URL,
    /// which needs its token.
    ///
    /// - Throws: `invalidArgument` for a path that is empty, absolute or climbs out of the repository, or a revision
    ///   that is not a valid name; `entryNotFound`, `revisionNotFound`, `repositoryNotFound`, `gatedRepository` or
    ///   `unauthorized`, as the endpoint answers.
    public nonisolated func fileMetadata(
        _ repo: RepoID, type: RepoType = .model, revision: String = "main", path: String
    ) async throws -> HubFileMetadata {
        try SnapshotDownloader.checkRevisionName(revision)
        let file: RepoFilePath
        do {
            file = try RepoFilePath(path)
        } catch let error as ModelDepotError {
            throw ModelDepotError(.invalidArgument, error.message)
        }
        return try await pull.hub.fileMetadata(repo, type: type, revision: revision, path: file)
    }

    /// Evicts least recently used, unpinned models until the cache takes at most `maxSize` bytes.
    @discardableResult
    public func prune(maxSize: Int64, dryRun: Bool = false) async throws -> StorageBudget.Plan {
        let cache = cache
        let plan = try await BlockingWork.run { try StorageBudget(cache: cache).plan(maxSize: maxSize) }
        guard !dryRun else { return plan }
        for repository in plan.evicted {
            if let id = repository.repoID, let type = repository.repoType {
                try await stopDownloads { $0.repo == id && $0.type == type }
            }
        }
        try await BlockingWork.run { try plan.execute() }
        return plan
    }

    /// The readiness of a catalog entry; only ready models should be loaded. One the app ships is read from its
    /// bundle (``ReadinessReport/storage`` says so): ready once ``verifyBundledModels()`` has run for this build.
    public nonisolated func readiness(of entry: CatalogEntry, verifying: Bool = false) throws -> ReadinessReport {
        if let report = bundledReadiness(of: entry) {
            if verifying, !report.readiness.isReady, let bundled {
                try bundled.verify()
                return bundledReadiness(of: entry) ?? report
            }
            return report
        }
        return try ReadinessChecker(cache: cache).check(entry, verifying: verifying)
    }

    /// Hashes the app's bundled models against their lock unless done for this build; afterwards they are ready
    /// and ``localPath(_:type:revision:file:)`` finds them. Nothing to do without bundled models.
    ///
    /// - Throws: `checksumMismatch` naming a damaged file (the bundled models then stay unverified).
    @discardableResult
    public nonisolated func verifyBundledModels() async throws -> BundledModels.Verification? {
        guard let bundled else { return nil }
        // Hashes every bundled file (on Dispatch's workers, which the caller's thread waits for): off the pool.
        return try await BlockingWork.run { try bundled.verify() }
    }

    /// The entry's readiness from the app's bundle, when the bundle holds every file of it; nil otherwise.
    nonisolated func bundledReadiness(of entry: CatalogEntry) -> ReadinessReport? {
        let request = entry.snapshotRequest
        guard let bundled,
            let repository = bundled.repository(entry.repo, type: entry.repoType, revision: request.revision)
        else { return nil }
        let paths = repository.files.map(\.path)
        let selected = paths.filter { request.selection.selects($0) }
        let holdsRequired = entry.required.allSatisfy { required in
            paths.contains { $0 == required || $0.hasPrefix(required + "/") }
        }
        guard !selected.isEmpty, holdsRequired else { return nil }
        return ReadinessReport(
            name: entry.name, repo: entry.repo, revision: request.revision, commit: repository.commit,
            readiness: bundled.isVerified ? .ready : .unverified(selected), files: selected, details: [:],
            folder: bundled.localPath(entry.repo, type: entry.repoType, revision: request.revision),
            storage: .bundled)
    }

    /// The catalog entries that are ready to load right now, optionally with a capability — the selection an
    /// app offers its users (a model that is not ready cannot be picked).
    public nonisolated func readyModels(in catalog: ModelCatalog, capability: ModelCapability? = nil) -> [CatalogEntry]
    {
        let checker = ReadinessChecker(cache: cache)
        return catalog.entries(capability: capability).filter { entry in
            (bundledReadiness(of: entry)?.readiness ?? (try? checker.check(entry).readiness)) == .ready
        }
    }

    private func stopDownloads(where matches: (SnapshotRequest) -> Bool) async throws {
        for task in registry.tasks where matches(task.request) {
            await task.cancel()
            registry.remove(task)
        }
    }
}
