import Foundation
import Logging
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust
import Synchronization

/// Pulls a repository revision into a `HubCache`, as Python's `snapshot_download` does, but resumable
/// across restarts, with parallel ranges for large files and every file verified.
///
/// ```swift
/// let pull = SnapshotDownloader(hub: try HubClient(environment: HubEnvironment()), cache: HubCache())
/// let snapshot = try await pull.download(SnapshotRequest(repo: try RepoID("acme/tiny"), include: ["*.gguf"]))
/// print(snapshot.folder.path)
/// ```
///
/// The flow: resolve the revision to a commit (no call when it is one), list the commit's files (all pages,
/// recorded in `trees/<commit>.json` so the next pull and offline checks need no listing), select with the
/// patterns, then for each missing file: its blob name from the listing (a `HEAD` for the ETag only when the
/// listing does not give a SHA-256 or git blob id), download into `blobs/<etag>.incomplete` under
/// Python's `.locks/…/<etag>.lock`, verify (SHA-256 for LFS files, git blob id for the others), rename to
/// `blobs/<etag>` and link `snapshots/<commit>/<path>` to it. A file that fails verification is never linked.
package struct SnapshotDownloader: Sendable {
    /// The Hub the pull resolves revisions and lists files with.
    package var hub: HubClient
    /// The cache the pull writes into.
    package let cache: HubCache
    let downloader: Downloader
    /// The engine's settings: connections, segment size, retries, the network policy.
    package var downloadConfiguration: DownloadConfiguration { downloader.configuration }
    /// Large files transferred at once; each also uses parallel ranges inside the engine.
    package var maxConcurrentFiles: Int
    /// Files transferred at once while the rest of the queue is small files (under ``smallFileSize``), whose time
    /// is mostly round trips, so more of them in flight keeps the connections busy. Never more than the
    /// engine's connection budget.
    package var maxConcurrentSmallFiles: Int
    /// The default of ``maxConcurrentFiles`` (`--max-workers` for large files).
    package static let defaultMaxConcurrentFiles = 8
    /// The default of ``maxConcurrentSmallFiles``.
    package static let defaultMaxConcurrentSmallFiles = 16
    /// Below this size a file counts as small for ``maxConcurrentSmallFiles``.
    package static let smallFileSize: Int64 = 1 << 20
    let clock: any Clock<Duration>
    let logger: Logger
    /// Compiles downloaded Core ML models (`.mlmodel`, `.mlpackage`) once per model and OS version, as a
    /// `compiling` phase; nil (the default, and all Linux has) skips that.
    package var modelCompiler: (any ModelCompiler)?

    /// A pull from `hub` into `cache`, moving bytes with `downloader`, at most `maxConcurrentFiles` large files
    /// and `maxConcurrentSmallFiles` files in all at once.
    package init(
        hub: HubClient, cache: HubCache, downloader: Downloader = Downloader(),
        maxConcurrentFiles: Int = SnapshotDownloader.defaultMaxConcurrentFiles,
        maxConcurrentSmallFiles: Int = SnapshotDownloader.defaultMaxConcurrentSmallFiles,
        clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger = Logger(label: "modeldepot.snapshot", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.hub = hub
        self.cache = cache
        self.downloader = downloader
        self.maxConcurrentFiles = max(1, maxConcurrentFiles)
        self.maxConcurrentSmallFiles = max(1, maxConcurrentSmallFiles)
        self.clock = clock
        self.logger = logger
    }

    /// Downloads what is missing of `request` and returns the snapshot.
    ///
    /// Offline (`HubClient.isOffline`), or when the Hub cannot be reached, the cached snapshot is returned if
    /// it is complete; a snapshot whose recorded tree lists missing files is an `incompleteSnapshot` error.
    package func download(
        _ request: SnapshotRequest, progress: @escaping @Sendable (SnapshotProgress) -> Void = { _ in }
    ) async throws -> Snapshot {
        try Self.checkRevisionName(request.revision)
        if let directory = request.localDirectory {
            return try await download(request, into: directory, progress: progress)
        }
        let pulled = try await pull(request, publishing: true, progress: progress)
        var snapshot = Snapshot(
            repo: request.repo, type: request.type, commit: pulled.commit,
            folder: cache.repository(request.repo, type: request.type).snapshotFolder(pulled.commit),
            files: pulled.files, filesDownloaded: pulled.filesDownloaded, bytesDownloaded: pulled.bytesDownloaded)
        snapshot.answeredFromCacheBecause = pulled.answeredFromCacheBecause
        snapshot.compiledModels = pulled.compiledModels
        return snapshot
    }

    /// What one pull into the cache did: the staged view of its files, and what a published pull compiled.
    struct Pulled {
        var staged: StagedSnapshot
        var compiledModels: [String: URL] = [:]
        var commit: String { staged.commit }
        var files: [RepoFilePath] { staged.files }
        var filesDownloaded: Int { staged.filesDownloaded }
        var bytesDownloaded: Int64 { staged.bytesDownloaded }
        var answeredFromCacheBecause: String? { staged.answeredFromCacheBecause }
    }

    /// The cache's answer when the Hub is not asked, as a pull's result.
    func answeredFromCache(_ request: SnapshotRequest, because reason: String) throws -> Pulled {
        let snapshot = try cachedSnapshot(request)
        let locations = Dictionary(
            uniqueKeysWithValues: snapshot.files.map { ($0, snapshot.url(of: $0).resolvingSymlinksInPath()) })
        return Pulled(
            staged: StagedSnapshot(
                request: request, commit: snapshot.commit,
                tree: cache.repository(request.repo, type: request.type).recordedTree(snapshot.commit),
                locations: locations, blobs: [:], filesDownloaded: 0, bytesDownloaded: 0,
                answeredFromCacheBecause: reason))
    }

    /// The pull into the cache: resolve, list, select, transfer what is missing. Publishing, each file is linked
    /// as it is verified and the ref set first (as Python does, so an interrupted pull shows what arrived);
    /// otherwise nothing but blobs is written.
    func pull(
        _ request: SnapshotRequest, publishing: Bool, progress: @escaping @Sendable (SnapshotProgress) -> Void
    ) async throws -> Pulled {
        let repository = cache.repository(request.repo, type: request.type)
        if hub.isOffline {
            return try answeredFromCache(request, because: "offline mode is on")
        }
        let tracker = SnapshotProgressTracker(
            clock: EngineClock(clock), interval: downloader.configuration.progressInterval, report: progress)
        tracker.start(endpoint: TransportFailure.serverName(hub.endpoint))

        let commit: String
        let tree: RecordedTree
        do {
            // Retries of these API calls show in the progress ("retrying in 2.0 s …"), as the files' do.
            var observed = hub.observingWaits { tracker.apiWaiting($0) }
            // With a complete snapshot at hand, a local server that is not running is not worth six attempts.
            if (try? cachedSnapshot(request)) != nil { observed = observed.givingUpWhenRefused() }
            commit = try await resolveCommit(request, hub: observed)
            tree = try await fileTree(request, commit: commit, repository: repository, hub: observed)
        } catch let error as ModelDepotError where Self.fallsBackToCache(error) {
            logger.notice("the Hub is unreachable; answering from the cache", metadata: ["error": "\(error.message)"])
            do {
                return try answeredFromCache(request, because: error.message)
            } catch let cacheError as ModelDepotError where cacheError.code == .notCached {
                throw error
            }
        }
        let selected = try PullPlanner.select(request, from: tree)

        // Only a pull that got this far leaves anything in the cache: a refused one writes no tree, snapshot or ref.
        if publishing {
            try cache.writeCacheDirectoryTag()
            if repository.recordedTree(commit) == nil { try repository.recordTree(tree, commit: commit) }
            try HubCache.createFolder(repository.snapshotFolder(commit))
            try repository.setRef(request.revision, to: commit)
            let debris = repository.removeLinkDebris(commit: commit, keeping: tree)
            if !debris.isEmpty {
                logger.notice(
                    "removed temporary links an interrupted pull left in the snapshot",
                    metadata: ["paths": "\(debris.joined(separator: ", "))"])
            }
        }

        let present = request.forceDownload ? [] : Set(selected.filter { repository.hasFile($0, commit: commit) })
        let work = PullPlanner.work(
            for: request, tree: tree, selected: selected, present: present,
            resumable: Set(
                selected.filter {
                    !present.contains($0)
                        && FileManager.default.fileExists(atPath: partialPath(of: $0, in: tree, repository))
                }))
        tracker.planned(
            totalBytes: work.totalBytes, totalFiles: selected.count, cachedBytes: work.heldBytes,
            cachedFiles: work.heldFiles)
        try checkDiskSpace(needed: work.diskNeeded, for: request)

        // Blobs verified by hash on the way in are remembered once at the end (also when a file fails), so
        // readiness checks need not hash them again.
        defer {
            var memory = VerificationMemory(repository: repository)
            for blob in tracker.verifiedBlobs { memory.remember(blob: blob, ok: true) }
            if !tracker.verifiedBlobs.isEmpty { memory.save() }
        }
        let staged = Mutex<[RepoFilePath: String]>([:])
        let received = try await transfer(work) { path, engine in
            let (bytes, etag) = try await fetch(
                ListedFile(path, of: request, commit: commit, listing: tree.files[path]!), into: repository,
                linking: publishing, engine: engine, tracker: tracker)
            staged.withLock { $0[path] = etag }
            return bytes
        }
        var locations: [RepoFilePath: URL] = [:]
        let blobs = staged.withLock { $0 }
        for path in selected {
            locations[path] =
                blobs[path].map(repository.blob) ?? repository.snapshotFile(commit, path).resolvingSymlinksInPath()
        }
        var pulled = Pulled(
            staged: StagedSnapshot(
                request: request, commit: commit, tree: tree, locations: locations, blobs: blobs,
                filesDownloaded: work.toFetch.count, bytesDownloaded: received))
        if publishing, let modelCompiler {
            let models = CompiledModels.sources(in: selected)
            if !models.isEmpty {
                pulled.compiledModels = try await CompiledModels.compile(
                    models, snapshot: repository.snapshotFolder(commit), repository: repository, commit: commit,
                    compiler: modelCompiler
                ) { done, total, current in tracker.compiling(done: done, total: total, current: current) }
            }
        }
        tracker.completed()
        return pulled
    }

    /// Runs `fetch` for each file `work` fetches, in its order: up to ``maxConcurrentFiles`` large files and
    /// ``maxConcurrentSmallFiles`` in all at once (``TransferQueue``), under one connection budget; returns the
    /// bytes received.
    func transfer(
        _ work: PullWork, fetch: @escaping @Sendable (RepoFilePath, Downloader) async throws -> Int64
    ) async throws -> Int64 {
        // One budget for the whole pull: each file in flight holds a permit for its first connection, and
        // extra ranges of large files borrow the rest segment by segment.
        let budget = ConnectionBudget(limit: downloader.configuration.maxConnections)
        let engine = downloader.with { $0.connectionBudget = budget }
        let largeFilesAtOnce = min(maxConcurrentFiles, budget.limit)
        var queue = TransferQueue(
            work.toFetch, sizes: work.size, smallFileSize: Self.smallFileSize, largeAtOnce: largeFilesAtOnce,
            filesAtOnce: min(max(maxConcurrentSmallFiles, largeFilesAtOnce), budget.limit))
        let job: @Sendable (RepoFilePath) async throws -> Int64 = { path in
            do {
                try await budget.acquire()
            } catch {
                throw ModelDepotError.cancelled()
            }
            defer { budget.release() }
            return try await fetch(path, engine)
        }
        var received: Int64 = 0
        try await withThrowingTaskGroup(of: (bytes: Int64, large: Bool).self) { group in
            repeat {
                while let next = queue.next() { group.addTask { (try await job(next.path), next.large) } }
                guard let finished = try await group.next() else { break }
                received += finished.bytes
                queue.finished(large: finished.large)
            } while true
        }
        // The queue's limits are at least one, so every file has started when the group is empty.
        assert(queue.isEmpty, "files left unscheduled")
        return received
    }

    // MARK: - Steps

    /// Refuses a revision that cannot name a ref file (`refs/<revision>`) before anything is written or asked.
    static func checkRevisionName(_ revision: String) throws {
        guard !HubEncoding.isGitID(revision) else { return }
        do {
            _ = try RepoFilePath(revision)
        } catch {
            throw ModelDepotError(
                .invalidArgument,
                "'\(revision)' is not a revision name: give a branch, a tag or a 40-character commit id (names cannot be empty or contain '..', '.', control characters or a leading '/')."
            )
        }
    }

    /// The commit `request.revision` names: itself when it is one, else the Hub's answer, which must be a
    /// 40-hex commit id (it names folders of the cache).
    package func resolveCommit(_ request: SnapshotRequest, hub: HubClient? = nil) async throws -> String {
        let hub = hub ?? self.hub
        if HubEncoding.isGitID(request.revision) { return request.revision }
        let info = try await hub.repoInfo(request.repo, type: request.type, revision: request.revision)
        guard let sha = info.sha?.lowercased(), HubEncoding.isGitID(sha) else {
            throw ModelDepotError(
                .protocolViolation,
                "\(hub.endpoint.absoluteString) did not say which commit '\(request.revision)' of \(request.repo) is (no 'sha' in its info). Check that the endpoint is a Hub."
            )
        }
        return sha
    }

    /// The commit's files: from `trees/<commit>.json` when recorded, else listed (and recorded by the caller
    /// once the request is known to be good).
    package func fileTree(
        _ request: SnapshotRequest, commit: String, repository: CachedRepository, hub: HubClient? = nil
    ) async throws -> RecordedTree {
        let hub = hub ?? self.hub
        if let recorded = repository.recordedTree(commit) { return recorded }
        let entries = try await hub.listFiles(request.repo, type: request.type, revision: commit)
        return try RecordedTree(entries: entries)
    }

    /// Fails before any transfer when the whole pull cannot fit, naming what could be evicted to make room.
    func checkDiskSpace(needed: Int64, for request: SnapshotRequest) throws {
        guard needed > 0, let available = StorageBudget(cache: cache).availableSpace(using: downloader.fileSystem),
            available < needed
        else { return }
        let short = needed - available
        let candidates = (try? StorageBudget(cache: cache).evictionCandidates()) ?? []
        let others = candidates.filter { $0.id != request.repo.description }
        var message =
            "Not enough disk space for \(request.repo) in \(cache.root.path): it needs \(needed) more bytes, \(available) are free."
        if others.isEmpty {
            message += " Free \(short) bytes, or choose another cache (HF_HUB_CACHE)."
        } else {
            let list = others.prefix(8).map { "\($0.id) (\($0.sizeOnDisk) bytes)" }.joined(separator: ", ")
            let freeable = others.reduce(Int64(0)) { $0 + $1.sizeOnDisk }
            message +=
                " Unpinned models that could be evicted, least recently used first: \(list)\(freeable >= short ? "" : " — not enough even all together"). Evict some (`StorageBudget.plan(maxSize:)`, `ModelManager.delete`)."
        }
        throw ModelDepotError(.insufficientDiskSpace, message, remedy: .freeSpace)
    }

    /// Errors the cache can answer instead: the Hub is unreachable or failing, not refusing.
    static func fallsBackToCache(_ error: ModelDepotError) -> Bool {
        ModelDepotError.Code.transient.contains(error.code)
    }

    /// Prefixes the file's path to a download error, with what to do for the common cases.
    static func naming(_ path: RepoFilePath, in error: ModelDepotError) -> ModelDepotError {
        let advice: String
        switch error.code {
        case .checksumMismatch, .sizeMismatch:
            advice =
                " It was not linked into the snapshot. Run the pull again to fetch it anew; if it keeps failing, the server is sending bad data."
        case .network, .serverError, .rateLimited, .stalled, .cancelled, .insufficientDiskSpace:
            advice = " Bytes already received are kept: run the same pull again to resume."
        default: advice = ""
        }
        return error.withMessage("\(path): \(error.message)\(advice)")
    }
}
