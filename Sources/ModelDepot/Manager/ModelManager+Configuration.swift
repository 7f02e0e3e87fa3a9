import Foundation
import Logging
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer

extension ModelManager {
    /// Everything that decides where and how a manager downloads, in one value — and the one place ModelDepot's
    /// engine is assembled from it (`makePull()`, internal to the package). The command line, the web app, the mirror and apps all build
    /// through it.
    ///
    /// ```swift
    /// var configuration = ModelManager.Configuration()   // HF_ENDPOINT, HF_TOKEN, HF_HUB_CACHE… as Python reads them
    /// configuration.maxConnectionsPerPull = 8
    /// configuration.bandwidth.bytesPerSecond = 20_000_000
    /// let models = try ModelManager(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Endpoint, token, offline mode, mirrors and cache folder, as Python's `huggingface_hub` reads them.
        public var environment: HubEnvironment
        /// The cache to download into; nil: the environment's (`HF_HUB_CACHE`, else `HF_HOME/hub`, else
        /// `~/.cache/huggingface/hub`).
        public var cache: HubCache?
        /// The engine's tunables: connections, segment size, retries, timeouts, durable writes, network policy.
        /// A `bandwidthLimit` set here is the one the manager uses; otherwise ``bandwidth`` is.
        package var engine = DownloadConfiguration()
        /// The cap on bytes per second every download of the manager shares; change its `bytesPerSecond` while they
        /// run (`nil` is no cap).
        public var bandwidth = BandwidthLimit(bytesPerSecond: nil)
        /// The HTTP stack; nil: the platform's, for ``engine``'s network policy (URLSession in apps, with
        /// `allowsExpensiveNetworkAccess` and `allowsConstrainedNetworkAccess` from the policy; async-http-client on
        /// Linux and the macOS command line).
        package var transport: (any HTTPTransport)?

        /// The transport file downloads use: ``transport``, or the platform's for the policy, under the per-host
        /// limit.
        package var resolvedTransport: any HTTPTransport {
            HostLimitedTransport(transport ?? DefaultTransport.shared(for: engine.networkPolicy), limit: hostLimit)
        }

        /// The transport the Hub's API calls use: ``transport``, or the platform's for any network, under the same
        /// per-host limit. The policy is about files: planning a download on cellular must work, so the engine can
        /// say it waits for Wi-Fi.
        var apiTransport: any HTTPTransport {
            HostLimitedTransport(transport ?? DefaultTransport.shared, limit: hostLimit)
        }

        /// The process's limit for ``maxConnectionsPerHost``: every manager with the same value shares it.
        var hostLimit: HostConnectionLimit { HostConnectionLimit.shared(limit: maxConnectionsPerHost) }

        /// The most requests in flight to one host (scheme, host and port) across every pull, file and API call of
        /// the managers in this process that share this value: two pulls from one mirror together stay under it.
        /// 16 by default; ``maxConnectionsPerPull`` applies within it.
        public var maxConnectionsPerHost = 16
        /// The most connections one pull uses in all, across its files (a large file's ranges in parallel; a small
        /// file takes one), so one large file may use them all: 16 by default. Within ``maxConnectionsPerHost``.
        public var maxConnectionsPerPull: Int {
            get { engine.maxConnections }
            set { engine.maxConnections = newValue }
        }
        /// How failed requests of a file download are retried: attempts, backoff, the longest `Retry-After` waited.
        public var retryPolicy: RetryPolicy {
            get { engine.retryPolicy }
            set { engine.retryPolicy = newValue }
        }
        /// How long a file download's connection may go without a byte before it is dropped and retried: 20 s by
        /// default. Nil turns the watchdog off — which a test that sets ``clock`` to one that never waits
        /// (`ImmediateClock`) must do, or the watchdog's sleeps end at once and every connection looks stalled.
        public var stallTimeout: Duration? {
            get { engine.stallTimeout }
            set { engine.stallTimeout = newValue }
        }
        /// Which networks downloads may use (any, or unmetered only: no cellular, no Low Data Mode).
        public var networkPolicy: NetworkPolicy {
            get { engine.networkPolicy }
            set { engine.networkPolicy = newValue }
        }
        /// Flush each verified file to stable storage before it is renamed into place (slower; survives power loss).
        public var syncsFilesBeforePublishing: Bool {
            get { engine.syncBeforeRename }
            set { engine.syncBeforeRename = newValue }
        }
        /// Files of one pull in flight at once while any of them is large.
        public var maxConcurrentFiles = SnapshotDownloader.defaultMaxConcurrentFiles
        /// Files of one pull in flight at once while all of them are small (configs, tokenizers).
        public var maxConcurrentSmallFiles = SnapshotDownloader.defaultMaxConcurrentSmallFiles
        /// How the Hub's API calls (not file downloads) are retried; nil: six attempts with the engine's backoff.
        public var apiRetryPolicy: RetryPolicy?
        /// Models shipped inside the app, read in place: found before the cache once verified for this build.
        public var bundled: BundledModels?
        /// Mirrors found on the local network (``discoverMirrors(within:)``), asked after the named ones for file
        /// content only: each file is checked against the endpoint's listing (`HubMirror.Trust.contentOnly`).
        public var discoveredMirrors: [HubMirror] = []
        /// Every sleep and speed measurement of the engine (tests inject their own).
        public var clock: any Clock<Duration> = ContinuousClock()
        /// Told of every wait of the Hub's API calls — retries, and the Hub's rate limits (a 429's wait, calls spaced
        /// out as the limit runs low): a mirror counts its upstream's in `/metrics`.
        public var hubWaitListener: (@Sendable (TransferWait) -> Void)?
        /// Where the engine and the snapshot pull say what they do as it happens — a retry, a mirror that failed and
        /// the next that took over, a fresh signed URL, a pause for the network policy; silent by default. The
        /// command line wires it to `--verbose`, the mirror to its log.
        public var logger = Logger(label: "modeldepot", factory: { _ in SwiftLogNoOpLogHandler() })
        /// Compiles the Core ML models a pull brings (`CoreMLCompiler` on Apple platforms) as the snapshot is
        /// published, so a model is ready to load when its download completes; nil: none are compiled.
        public var modelCompiler: (any ModelCompiler)?

        /// The settings `environment` names; the process environment by default.
        public init(environment: HubEnvironment = HubEnvironment()) {
            self.environment = environment
        }

        /// The settings `environment` names, downloading into `cache` instead of the environment's.
        public init(cache: HubCache, environment: HubEnvironment = HubEnvironment()) {
            self.init(environment: environment)
            self.cache = cache
        }

        /// A hub at `endpoint` (sent `token`, and no other; `offline` answers from the cache alone), caching in
        /// `cache`, and nothing read from the process environment: an app with its own hub or mirror, a
        /// mirror's upstream, a test's server.
        public init(endpoint: URL, token: String? = nil, offline: Bool = false, cache: HubCache) {
            // No implicit token either: without this, a nil `token` would fall back to the token file of whoever
            // runs the process (~/.cache/huggingface/token), and a mirror would pull gated models with it.
            self.init(environment: HubEnvironment(endpoint: endpoint, token: token, offline: offline))
            self.cache = cache
        }

        /// The cache this configuration downloads into.
        public var resolvedCache: HubCache { cache ?? HubCache(environment: environment) }

        /// The engine these settings describe: the Hub client (endpoint, token, mirrors, offline mode), the
        /// transfer engine with its shared bandwidth cap, and the pull over both. The one place it is built.
        ///
        /// - Throws: `invalidURL` when the environment's endpoint is unusable, `invalidArgument` for a malformed
        ///   `MODELDEPOT_MIRRORS`.
        package func makePull() throws -> SnapshotDownloader {
            var hub = try HubClient(
                environment: environment, transport: apiTransport, clock: clock, retryPolicy: apiRetries)
            hub.waitListener = hubWaitListener
            hub.mirrors += discoveredMirrors.map { HubMirror(endpoint: $0.endpoint, trust: .contentOnly) }
            return pull(over: hub)
        }

        /// `makePull()`, or the same pull with an offline Hub client when the environment's hub settings are
        /// unusable (a malformed `HF_ENDPOINT` or `MODELDEPOT_MIRRORS`): for work that never needs the network.
        func makeCachePull() -> SnapshotDownloader {
            (try? makePull())
                ?? pull(
                    over: HubClient(
                        endpoint: URL(string: "https://huggingface.co")!, offline: true, transport: apiTransport,
                        clock: clock, retryPolicy: apiRetries))
        }

        private var apiRetries: RetryPolicy { apiRetryPolicy ?? HubClient.defaultRetryPolicy }

        private func pull(over hub: HubClient) -> SnapshotDownloader {
            var engine = self.engine
            engine.bandwidthLimit = engine.bandwidthLimit ?? bandwidth
            var pull = SnapshotDownloader(
                hub: hub, cache: resolvedCache,
                downloader: Downloader(
                    transport: resolvedTransport, clock: clock, configuration: engine, logger: logger),
                maxConcurrentFiles: maxConcurrentFiles, maxConcurrentSmallFiles: maxConcurrentSmallFiles, clock: clock,
                logger: logger)
            pull.modelCompiler = modelCompiler
            return pull
        }
    }

    /// A manager built from `configuration`: the initializer to use.
    ///
    /// - Throws: `invalidURL` when the environment's endpoint is unusable, `invalidArgument` for a malformed
    ///   `MODELDEPOT_MIRRORS`.
    public init(configuration: Configuration = Configuration()) throws {
        self.init(pull: try configuration.makePull(), bundled: configuration.bundled)
    }

    /// A manager for work on the cache that never needs the network (listing, verifying, removing, exporting):
    /// built from `configuration` like ``init(configuration:)``, but offline instead of failing when the
    /// environment's hub settings are unusable, so a bad `HF_ENDPOINT` never stops it.
    public init(managingCache configuration: Configuration) {
        self.init(pull: configuration.makeCachePull(), bundled: configuration.bundled)
    }
}
