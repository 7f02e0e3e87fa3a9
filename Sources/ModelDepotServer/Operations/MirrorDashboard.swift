import Foundation
import ModelDepot
import ModelDepotCache
import ModelDepotCore
import ModelDepotMirrorContract
import Synchronization

/// The mirror's live state for its dashboard (`serve --ui`): the repositories in its caches, the pulls under
/// way, its counters and clients. Changes apply to the mirror's own pull-through cache only; caches it merely
/// serves (`serve --cache`) belong to someone else.
public final class MirrorDashboard: MirrorDashboardSource {
    let metrics: MirrorMetrics
    let clients: MirrorClients
    let pullThrough: PullThroughSource?
    /// Hub caches served as they are (read-only here).
    let servedCaches: [HubCache]
    /// The page polls once a second: repositories are read again only when they change.
    private let scanMemos: [String: CacheScanMemo]
    /// Polls that arrive while a walk of the same cache runs share it: every open tab polls each second, and a
    /// walk per poll would take a thread each (`BlockingWork` starts one per call, up to Dispatch's 255).
    private let walks = RequestCoalescer<[CachedRepositoryReport]?>()
    /// The last hour of the counters, in ten-second intervals: at most 362 intervals of 8 counters (an array of 64
    /// bytes and its 32-byte header each, plus 16 bytes in the list), under 42 KB whatever the uptime (``TrafficSampler`` records one each interval, and each look at the dashboard one more).
    private let traffic = Mutex(CounterHistory())
    private let time: EngineClock

    init(
        metrics: MirrorMetrics, clients: MirrorClients, pullThrough: PullThroughSource?, servedCaches: [HubCache],
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        time = EngineClock(clock)
        self.metrics = metrics
        self.clients = clients
        self.pullThrough = pullThrough
        self.servedCaches = servedCaches
        scanMemos = Dictionary(
            uniqueKeysWithValues: ((pullThrough.map { [$0.cache] } ?? []) + servedCaches).map {
                ($0.root.path, CacheScanMemo())
            })
    }

    /// Records the counters as they stand now in the traffic history.
    func recordTraffic() {
        // Counters and time are read under the history's lock: a sample and a poll at once must not write older
        // counters into a later interval (an increase would be counted twice).
        traffic.withLock { history in
            let counters = metrics.snapshot
            let values = MirrorDashboardState.TrafficCounter.allCases.map { counter -> Int64 in
                let value: Int =
                    switch counter {
                    case .servedBytes: counters.servedBytes
                    case .upstreamBytes: counters.upstreamBytes
                    case .cacheHits: counters.cacheHits
                    case .pullsStarted: counters.pullsStarted
                    case .requests: counters.requestsByStatus.values.reduce(0, +)
                    case .refused: (counters.requestsByStatus[429] ?? 0) + (counters.requestsByStatus[421] ?? 0)
                    case .pullsRunning: pullThrough?.pulls.queue.running ?? 0
                    case .pullsWaiting: pullThrough?.pulls.queue.waiting ?? 0
                    }
                return Int64(value)
            }
            history.record(values, at: time.elapsed())
        }
    }

    /// The traffic history's intervals, up to now.
    var trafficIntervals: (intervals: [CounterHistory.Interval?], length: Duration) {
        recordTraffic()
        let now = time.elapsed()
        return traffic.withLock { ($0.intervals(at: now), $0.interval) }
    }

    public func dashboardState() async -> MirrorDashboardState {
        let counters = metrics.snapshot
        var repositories: [MirrorDashboardState.Repository] = []
        let inUse = pullThrough?.inUse ?? []
        for cache in (pullThrough.map { [$0.cache] } ?? []) + servedCaches {
            // A walk of a large cache (a stat per file): off the cooperative pool, which the mirror's
            // connections share.
            let memo = scanMemos[cache.root.path]
            guard
                let reports = try? await walks.value(
                    for: cache.root.path,
                    {
                        try await BlockingWork.run {
                            FileManager.default.fileExists(atPath: cache.root.path)
                                ? try CacheScanner(cache: cache, memo: memo).scan().repositories : nil
                        }
                    }) ?? nil
            else { continue }
            let pins = PinStore(cache: cache)
            let own = cache.root == pullThrough?.cache.root
            for report in reports {
                let pinned = report.repoID.map { pins.isPinned($0, type: report.repoType ?? .model) } ?? false
                repositories.append(
                    MirrorDashboardState.Repository(
                        id: report.id, type: report.type, sizeOnDisk: report.sizeOnDisk, files: report.files,
                        lastUsed: report.lastAccessed, pinned: pinned,
                        evictable: own && !inUse.contains(report.folder.lastPathComponent)))
            }
        }
        let pulls = (pullThrough?.pulls.inFlight ?? []).map {
            MirrorDashboardState.Pull(
                repository: $0.repository, path: $0.path, receivedBytes: $0.received, totalBytes: $0.total)
        }
        var state = MirrorDashboardState(
            repositories: repositories, pulls: pulls,
            clients: clients.all.map {
                .init(address: $0.key, requests: $0.value.requests, lastSeen: $0.value.lastSeen)
            },
            servedBytes: Int64(counters.servedBytes), upstreamBytes: Int64(counters.upstreamBytes),
            cacheHits: counters.cacheHits, pullsStarted: counters.pullsStarted, pullsFailed: counters.pullsFailed,
            evictions: counters.evictions, requests: counters.requestsByStatus.values.reduce(0, +),
            upstream: pullThrough?.upstream.endpoint.absoluteString, maxCacheSize: pullThrough?.upstream.maxCacheSize)
        (state.traffic, state.trafficInterval) = trafficIntervals
        return state
    }

    public func evict(_ repo: RepoID, type: RepoType) async throws -> Int64 {
        let pullThrough = try ownCache(for: "evict")
        let repository = pullThrough.cache.repository(repo, type: type)
        guard !pullThrough.inUse.contains(repository.folder.lastPathComponent) else {
            throw ModelDepotError(
                .invalidArgument, "\(repo) is being served or pulled right now; evict it when that has finished.")
        }
        let cache = pullThrough.cache
        guard
            let report = try await BlockingWork.run({ try CacheScanner(cache: cache).scan().repositories }).first(
                where: { $0.folder.lastPathComponent == repository.folder.lastPathComponent })
        else {
            throw ModelDepotError(.invalidArgument, "\(repo) (\(type.rawValue)) is not in the mirror's cache.")
        }
        let plan = try DeletionPlan(deleting: nil, of: report)
        try await BlockingWork.run { try plan.execute() }
        metrics.count(.evictions)
        return plan.freedBytes
    }

    public func pin(_ repo: RepoID, type: RepoType) throws {
        try PinStore(cache: try ownCache(for: "pin").cache).pin(repo, type: type)
    }

    public func unpin(_ repo: RepoID, type: RepoType) throws {
        PinStore(cache: try ownCache(for: "unpin").cache).unpin(repo, type: type)
    }

    private func ownCache(for action: String) throws -> PullThroughSource {
        guard let pullThrough else {
            throw ModelDepotError(
                .invalidArgument,
                "This mirror serves folders and caches as they are; only a pull-through mirror (--upstream) can \(action) what it keeps."
            )
        }
        return pullThrough
    }
}
