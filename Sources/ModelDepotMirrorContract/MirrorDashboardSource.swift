import Foundation
import ModelDepotCore

/// What a mirror's dashboard reads, and the few changes an administrator may make. The presentation layer
/// defines it and stays portable; the server target implements it over its live state (`serve --ui`).
public protocol MirrorDashboardSource: Sendable {
    /// The mirror as it is now.
    func dashboardState() async -> MirrorDashboardState
    /// Removes a repository from the mirror's own cache; returns the bytes freed.
    ///
    /// - Throws: `invalidArgument` when it is not in that cache, or is being served or pulled right now.
    func evict(_ repo: RepoID, type: RepoType) async throws -> Int64
    /// Keeps a repository when the mirror prunes its cache to its size budget.
    func pin(_ repo: RepoID, type: RepoType) throws
    /// Lets the budget evict a repository again.
    func unpin(_ repo: RepoID, type: RepoType) throws
}

/// A mirror's live state, as numbers; ``MirrorScreen`` words it.
public struct MirrorDashboardState: Sendable, Equatable {
    /// A repository in the mirror's cache.
    public struct Repository: Sendable, Equatable {
        public var id: String
        public var type: String
        public var sizeOnDisk: Int64
        public var files: Int
        public var lastUsed: Date
        public var pinned: Bool
        /// Whether the dashboard may evict it: in the mirror's own pull-through cache, and not in use now.
        public var evictable: Bool

        public init(
            id: String, type: String, sizeOnDisk: Int64, files: Int, lastUsed: Date, pinned: Bool, evictable: Bool
        ) {
            self.id = id
            self.type = type
            self.sizeOnDisk = sizeOnDisk
            self.files = files
            self.lastUsed = lastUsed
            self.pinned = pinned
            self.evictable = evictable
        }
    }

    /// A file being pulled from the upstream now.
    public struct Pull: Sendable, Equatable {
        /// `owner/name`.
        public var repository: String
        /// The file's name in the repository.
        public var path: String
        public var receivedBytes: Int64
        public var totalBytes: Int64

        public init(repository: String, path: String, receivedBytes: Int64, totalBytes: Int64) {
            self.repository = repository
            self.path = path
            self.receivedBytes = receivedBytes
            self.totalBytes = totalBytes
        }
    }

    /// A client address the mirror has answered.
    public struct Client: Sendable, Equatable {
        public var address: String
        public var requests: Int
        public var lastSeen: Date

        public init(address: String, requests: Int, lastSeen: Date) {
            self.address = address
            self.requests = requests
            self.lastSeen = lastSeen
        }
    }

    public var repositories: [Repository]
    public var pulls: [Pull]
    public var clients: [Client]
    public var servedBytes: Int64
    public var upstreamBytes: Int64
    public var cacheHits: Int
    public var pullsStarted: Int
    public var pullsFailed: Int
    public var evictions: Int
    public var requests: Int
    /// The upstream a pull-through mirror fetches from; nil for a mirror of folders.
    public var upstream: String?
    /// The cache budget (`--max-size`), when there is one.
    public var maxCacheSize: Int64?
    /// The last hour of the counters, interval by interval (the dashboard's charts); empty when not kept.
    public var traffic: [CounterHistory.Interval?] = []
    /// The length of one interval of ``traffic``.
    public var trafficInterval: Duration = .seconds(10)

    /// Where each counter is in a ``traffic`` interval's values.
    public enum TrafficCounter: Int, CaseIterable, Sendable {
        /// Bytes sent to clients.
        case servedBytes
        /// Bytes pulled from the upstream.
        case upstreamBytes
        /// Files served from the mirror's cache without asking the upstream.
        case cacheHits
        /// Pulls from the upstream started.
        case pullsStarted
        /// Requests answered.
        case requests
        /// Requests refused as too many (429) or for another host (421).
        case refused
        /// Pulls from the upstream running at the interval's end (a gauge, not a counter).
        case pullsRunning
        /// Pulls waiting for a turn to the upstream at the interval's end (a gauge).
        case pullsWaiting
    }

    public init(
        repositories: [Repository] = [], pulls: [Pull] = [], clients: [Client] = [], servedBytes: Int64 = 0,
        upstreamBytes: Int64 = 0, cacheHits: Int = 0, pullsStarted: Int = 0, pullsFailed: Int = 0,
        evictions: Int = 0, requests: Int = 0, upstream: String? = nil, maxCacheSize: Int64? = nil
    ) {
        self.repositories = repositories
        self.pulls = pulls
        self.clients = clients
        self.servedBytes = servedBytes
        self.upstreamBytes = upstreamBytes
        self.cacheHits = cacheHits
        self.pullsStarted = pullsStarted
        self.pullsFailed = pullsFailed
        self.evictions = evictions
        self.requests = requests
        self.upstream = upstream
        self.maxCacheSize = maxCacheSize
    }
}
