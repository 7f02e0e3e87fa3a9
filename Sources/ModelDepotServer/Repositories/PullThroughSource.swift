import Foundation
import Hummingbird
import Logging
import ModelDepot
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotPlatform
import ModelDepotTransfer
import Synchronization

/// Serves an upstream Hub through the mirror's own Hub cache: what the cache lacks is asked of the upstream and
/// kept, in the layout `ls`, `verify`, `prune` and Python read.
///
/// - Revisions: a commit id is immutable, and its listing (`trees/<commit>.json`) is asked once. A branch or tag
///   is resolved upstream at most once per ``Upstream/branchTTL``; while the upstream cannot be reached the last
///   commit it named (in memory, else the cache's `refs/`) is served with a staleness warning.
/// - Files: a file whose blob is in the cache is served from disk. Any other is pulled by the transfer engine,
///   once however many clients ask (``BlobPulls``), and clients follow the pull as it arrives.
/// - Credentials: the upstream sees the operator's token only, never a client's.
final class PullThroughSource: RepositorySource {
    let upstream: Upstream
    let cache: HubCache
    func servedCache(type: RepoType, id: RepoID) -> (cache: HubCache, origin: URL)? { (cache, upstream.endpoint) }
    let puller: SnapshotDownloader
    let pulls: BlobPulls
    private let logger: Logger
    /// Each branch's commit and when it was asked (time since this source was made, on the upstream's clock).
    private let resolved = Mutex<[String: (commit: String, at: Duration)]>([:])
    let time: EngineClock
    /// The upstream's recent search answers, by query: kept for the branch TTL (``PullThroughSource+Search``).
    let searches = Mutex<[String: (answer: [UInt8], at: Duration)]>([:])
    /// One upstream search per query at a time, however many clients type it.
    let searching = RequestCoalescer<[UInt8]?>()
    /// Branch resolutions and listings under way: concurrent requests share one upstream call.
    private let resolutions = RequestCoalescer<(String, String?)>()
    private let listings = RequestCoalescer<RecordedTree>()
    /// The last snapshot served of each repository, with when its listing was recorded: a listing at a commit never
    /// changes, so while its record is on disk (eviction removes it) the snapshot is reused instead of reading and
    /// parsing the record again, and so are the answers rendered from it. One a repository, so it stays bounded.
    private let servedSnapshots = Mutex<[String: (recordedAt: Date, snapshot: RepoSnapshot)]>([:])
    private let local: HubCacheRepositorySource
    private let metrics: MirrorMetrics
    /// Responses reading each repository's files now, by cache folder name: the budget spares them.
    private let readers = Mutex<[String: Int]>([:])
    /// Whether a budget pass runs, and whether another was asked for meanwhile.
    private let budgetPass = Mutex((running: false, again: false))

    /// - Throws: `invalidURL` for an upstream that is not a Hub URL.
    init(upstream: Upstream, cache: URL, index: HashIndex, metrics: MirrorMetrics, logger: Logger) throws {
        self.upstream = upstream
        self.time = EngineClock(upstream.clock)
        self.cache = HubCache(root: cache)
        self.logger = logger
        // The engine is built where every other one is (ModelManager.Configuration): the upstream and the
        // operator's token, nothing of the process environment.
        var configuration = ModelManager.Configuration(
            endpoint: upstream.endpoint, token: upstream.token, cache: self.cache)
        configuration.apiRetryPolicy = upstream.retryPolicy
        // A file that changes upstream mid-pull fails the pull instead of starting over: clients following it
        // have bytes of the old version, which must not be completed with the new one.
        configuration.engine.maxSourceChanges = 0
        // Every client behind the mirror shares its upstream's rate limit: its waits are the fleet's, and counted.
        configuration.hubWaitListener = { wait in
            if case .rateLimit = wait { metrics.count(.upstreamRateLimitWaits) }
        }
        // The engine's retries and fresh URLs go to the mirror's log.
        configuration.logger = logger
        // Each of the concurrent upstream pulls may use its full budget, as before the per-host limit: the
        // mirror's own cap on the upstream is `--max-upstream-pulls` (a limit of its own is not built yet).
        configuration.maxConnectionsPerHost = max(
            configuration.maxConnectionsPerHost, upstream.pullLimits.concurrent * configuration.maxConnectionsPerPull)
        puller = try configuration.makePull()
        pulls = BlobPulls(limits: upstream.pullLimits, metrics: metrics, logger: logger)
        local = HubCacheRepositorySource(cache: cache, index: index, logger: logger)
        self.metrics = metrics
    }

    /// Every repository the mirror has resolved a revision of, files pulled or not: the blob route finds a
    /// SHA-256 in their listings and pulls it like a resolve.
    func repositories() throws -> [(RepoType, RepoID)] { local.repositories(holding: "refs") }

    func snapshot(type: RepoType, id: RepoID, revision: String?) async throws -> RepoSnapshot? {
        let repository = cache.repository(id, type: type)
        let (commit, staleBecause) = try await resolve(type: type, id: id, revision: revision ?? "main")
        if var known = servedSnapshot(of: repository, commit: commit) {
            known.staleBecause = staleBecause
            return known
        }
        let tree: RecordedTree
        if let recorded = repository.recordedTree(commit) {
            tree = recorded
        } else {
            tree = try await listings.value(for: "\(type.rawValue)/\(id)@\(commit)") { [puller, cache, upstream] in
                let tree: RecordedTree
                do {
                    // The same deadline as the branch's resolution: an upstream that names the commit and then
                    // never finishes the listing (silence, or a body that drips) must not hold the client longer.
                    guard
                        let entries = try await Self.answer(
                            within: upstream.answerWithin,
                            { try await puller.hub.listFiles(id, type: type, revision: commit) })
                    else {
                        throw HubServerError(
                            status: 504, code: nil,
                            message:
                                "The upstream \(upstream.endpoint.absoluteString) did not answer with the file list of \(id) within \(upstream.answerWithin); try again later.",
                            commit: nil)
                    }
                    tree = try RecordedTree(entries: entries)
                } catch let error as ModelDepotError {
                    throw HubServerError.upstream(error)
                }
                try cache.writeCacheDirectoryTag()
                try repository.recordTree(tree, commit: commit)
                return tree
            }
        }
        var snapshot = served(tree, of: repository, commit: commit)
        snapshot.staleBecause = staleBecause
        return snapshot
    }

    /// The repository's default branch as this mirror last recorded it, without asking the upstream: what the
    /// blob route and search look through (one request must not cost an upstream call per repository).
    func recordedSnapshot(type: RepoType, id: RepoID) async throws -> RepoSnapshot? {
        let repository = cache.repository(id, type: type)
        let key = "\(type.rawValue)/\(id)@main"
        guard let commit = resolved.withLock({ $0[key]?.commit }) ?? repository.commit(forRevision: "main"),
            let tree = repository.recordedTree(commit)
        else { return nil }
        return served(tree, of: repository, commit: commit)
    }

    /// The snapshot last served at `commit`, while its listing's record is the one it was made from and the same
    /// branches point at the commit.
    private func servedSnapshot(of repository: CachedRepository, commit: String) -> RepoSnapshot? {
        guard let known = servedSnapshots.withLock({ $0["\(repository.type.rawValue)/\(repository.id)"] }),
            known.snapshot.commit == commit, repository.treeRecordedDate(commit) == known.recordedAt,
            repository.refs().filter({ $0.value == commit }).map(\.key).sorted() == known.snapshot.branches
        else { return nil }
        var snapshot = known.snapshot
        snapshot.pullThrough = self
        return snapshot
    }

    /// `tree` at `commit` as the mirror serves it: each file at its blob, fetched when missing.
    private func served(_ tree: RecordedTree, of repository: CachedRepository, commit: String) -> RepoSnapshot {
        let recorded = repository.treeRecordedDate(commit)
        let recordedAt = recorded ?? Date()
        let files = tree.files.map { path, file in
            ServedFile(
                path: path, diskPath: repository.blob(file.etag).path, size: file.size, modified: recordedAt,
                gitOID: file.blobID, sha256: file.lfsSHA256)
        }.sorted { $0.path < $1.path }
        let branches = repository.refs().filter { $0.value == commit }.map(\.key).sorted()
        var snapshot = RepoSnapshot(
            type: repository.type, id: repository.id, commit: commit, files: files, branches: branches)
        if let recorded {
            // Kept without the source itself, which would keep itself alive through it.
            servedSnapshots.withLock { $0["\(repository.type.rawValue)/\(repository.id)"] = (recorded, snapshot) }
        }
        snapshot.pullThrough = self
        return snapshot
    }

    /// The commit `revision` names, and why it may be out of date (the upstream could not be asked).
    private func resolve(type: RepoType, id: RepoID, revision: String) async throws -> (String, String?) {
        if HubEncoding.isGitID(revision) { return (revision.lowercased(), nil) }
        let key = "\(type.rawValue)/\(id)@\(revision)"
        let now = time.elapsed()
        if let known = resolved.withLock({ $0[key] }), now - known.at < upstream.branchTTL {
            return (known.commit, nil)
        }
        return try await resolutions.value(for: key) {
            try await self.askUpstream(type: type, id: id, revision: revision, key: key, now: now)
        }
    }

    /// The upstream's history up to `snapshot`'s commit; while the upstream cannot be reached, the one commit known.
    func commits(of snapshot: RepoSnapshot) async throws -> [RepoCommit] {
        do {
            let listed = try await Self.answer(within: upstream.staleAfter, clock: upstream.clock) {
                try await self.puller.hub.listCommits(snapshot.id, type: snapshot.type, revision: snapshot.commit)
            }
            return listed ?? [snapshot.knownCommit]
        } catch let error as ModelDepotError where ModelDepotError.Code.transient.contains(error.code) {
            return [snapshot.knownCommit]
        } catch let error as ModelDepotError {
            throw HubServerError.upstream(error)
        }
    }

    /// The commit the upstream says `revision` is now, or (unreachable) the last one known, marked stale.
    private func askUpstream(type: RepoType, id: RepoID, revision: String, key: String, now: Duration)
        async throws -> (String, String?)
    {
        let repository = cache.repository(id, type: type)
        let known = { self.resolved.withLock { $0[key]?.commit } ?? repository.commit(forRevision: revision) }
        do {
            // A stuck upstream (a connection that takes the request and never replies) costs a client at most
            // `staleAfter` with an answer at hand, and `answerWithin` without one: not the transport's read
            // timeouts times the retries, which outlast every client's patience.
            let earlier = known()
            let deadline = earlier == nil ? upstream.answerWithin : upstream.staleAfter
            let asked = try await Self.answer(within: deadline, clock: upstream.clock) {
                try await self.puller.hub.repoInfo(id, type: type, revision: revision)
            }
            guard let info = asked else {
                guard let earlier else {
                    throw HubServerError(
                        status: 504, code: nil,
                        message:
                            "The upstream \(upstream.endpoint.absoluteString) did not answer about \(id) within \(deadline); try again later.",
                        commit: nil)
                }
                logger.warning(
                    "serving a stale answer: the upstream did not answer in time",
                    metadata: ["revision": "\(id)@\(revision)", "waited": "\(upstream.staleAfter)"])
                return (earlier, "the upstream did not answer within \(upstream.staleAfter.components.seconds) s")
            }
            guard let sha = info.sha?.lowercased(), HubEncoding.isGitID(sha) else {
                throw HubServerError(
                    status: 502, code: nil,
                    message:
                        "The upstream \(upstream.endpoint.absoluteString) did not say which commit '\(revision)' of \(id) is.",
                    commit: nil)
            }
            resolved.withLock { $0[key] = (sha, now) }
            try? cache.writeCacheDirectoryTag()
            try? repository.setRef(revision, to: sha)
            return (sha, nil)
        } catch let error as ModelDepotError where ModelDepotError.Code.transient.contains(error.code) {
            guard let known = known() else { throw HubServerError.upstream(error) }
            logger.warning(
                "serving a stale answer: the upstream cannot be reached",
                metadata: ["revision": "\(id)@\(revision)", "error": "\(error.message)"])
            return (known, "the upstream cannot be reached (\(error.message))")
        } catch let error as ModelDepotError {
            throw HubServerError.upstream(error)
        }
    }

    /// `operation`'s result, or nil when `deadline` passes first (the operation is then cancelled); no deadline
    /// waits for it.
    static func answer<T: Sendable, C: Clock<Duration>>(
        within deadline: Duration?, clock: C = ContinuousClock(), _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T? {
        guard let deadline else { return try await operation() }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await clock.sleep(for: deadline)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// The pull `file` is arriving through, starting one when none runs; nil when its blob is already here (its
    /// access time is then set, for the budget's least-recently-used order).
    ///
    /// - Throws: ``HubServerError`` 429 when the limits on pulls are reached.
    func pull(_ file: ServedFile, of snapshot: RepoSnapshot, for client: String = "") throws -> BlobPull? {
        if CacheScanner.regularFileSize(file.diskPath) == file.size {
            FileAccessTime.touch(file.diskPath)
            return nil
        }
        let repository = cache.repository(snapshot.id, type: snapshot.type)
        let listed = RecordedTree.File(
            size: file.size, blobID: file.gitOID, lfsSHA256: file.sha256, lfsSize: file.sha256 == nil ? nil : file.size)
        return try pulls.follow(
            etag: file.etag, repository: repository.folder.lastPathComponent, client: client,
            shown: (id: snapshot.id.description, path: file.path.value), size: file.size,
            partialPath: repository.partialBlob(file.etag).path, blobPath: file.diskPath
        ) { pull in
            do {
                let pulled = try await self.pullFile(file, listed, of: snapshot, pull: pull)
                await self.keepWithinBudget()
                return pulled
            } catch {
                await self.keepWithinBudget()
                throw error
            }
        }
    }

    private func pullFile(
        _ file: ServedFile, _ listed: RecordedTree.File, of snapshot: RepoSnapshot, pull: BlobPull
    ) async throws -> Int64 {
        // Counted as bytes land, so the counter moves during a long pull (a pull resumed after a restart
        // counts the bytes the earlier process received, which that process never counted).
        let landed = Mutex<Int64>(0)
        let request = SnapshotRequest(repo: snapshot.id, type: snapshot.type, revision: snapshot.commit)
        return try await puller.pullBlob(
            ListedFile(file.path, of: request, commit: snapshot.commit, listing: listed),
            onDisk: { ranges in
                pull.wrote(ranges)
                let arrived = landed.withLock { landed in
                    defer { landed = max(landed, ranges.count) }
                    return max(0, ranges.count - landed)
                }
                if arrived > 0 { self.metrics.count(.upstreamBytes, by: Int(arrived)) }
            })
    }

    /// `body`, counted as reading `snapshot`'s repository until it has been written: the budget spares it.
    func reading(_ snapshot: RepoSnapshot, _ body: ResponseBody) -> ResponseBody {
        let name = cache.repository(snapshot.id, type: snapshot.type).folder.lastPathComponent
        readers.withLock { $0[name, default: 0] += 1 }
        let done: @Sendable () -> Void = {
            self.readers.withLock { readers in
                readers[name, default: 1] -= 1
                if readers[name] == 0 { readers[name] = nil }
            }
        }
        return ResponseBody(contentLength: body.contentLength) { writer in
            defer { done() }
            try await body.write(writer)
        }
    }

    /// Repositories (cache folder names) being read or pulled now: neither the budget nor the dashboard evicts them.
    var inUse: Set<String> { readers.withLock { Set($0.keys) }.union(pulls.repositories) }

    /// Evicts least recently used repositories until the cache is under ``Upstream/maxCacheSize``, sparing pinned
    /// ones and those being read or pulled. One pass at a time; a pass asked for meanwhile runs after it.
    func keepWithinBudget() async {
        guard upstream.maxCacheSize != nil else { return }
        // A pass scans the cache (a stat per file) and unlinks gigabytes: off the cooperative pool.
        _ = try? await BlockingWork.run { self.keepWithinBudgetNow() }
    }

    private func keepWithinBudgetNow() {
        guard let maxSize = upstream.maxCacheSize else { return }
        let start = budgetPass.withLock { pass -> Bool in
            if pass.running {
                pass.again = true
                return false
            }
            pass.running = true
            return true
        }
        guard start else { return }
        repeat {
            let inUse = self.inUse
            do {
                let plan = try StorageBudget(cache: cache).plan(maxSize: maxSize, sparing: inUse)
                try plan.execute()
                if !plan.evicted.isEmpty {
                    metrics.count(.evictions, by: plan.evicted.count)
                    logger.notice(
                        "evicted to stay under --max-size",
                        metadata: [
                            "repositories": "\(plan.evicted.map(\.id).joined(separator: ", "))",
                            "freed": "\(plan.freedBytes)", "size": "\(plan.sizeAfter)",
                        ])
                }
                if plan.stillOver {
                    logger.warning(
                        "the cache is over --max-size: what is left is pinned or in use",
                        metadata: ["size": "\(plan.sizeAfter)", "max": "\(maxSize)"])
                }
            } catch {
                logger.error("cannot keep the cache under --max-size", metadata: ["error": "\(error)"])
            }
        } while budgetPass.withLock { pass -> Bool in
            if pass.again {
                pass.again = false
                return true
            }
            pass.running = false
            return false
        }
    }
}
