import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import ModelDepot
import ModelDepotCore
import ModelDepotHTTP
import ModelDepotHub
import ModelDepotTransfer
import NIOCore
import ServiceLifecycle

/// A Hub-compatible mirror: any Hub client (ours, Python's `huggingface_hub` with `HF_ENDPOINT`) can list and
/// pull the repositories it serves.
///
/// ```swift
/// let server = MirrorServer(root: URL(fileURLWithPath: "/srv/models"))
/// try await server.run(host: "127.0.0.1", port: 8080) { url in print("listening on \(url)") }
/// ```
public struct MirrorServer: Sendable {
    let source: any RepositorySource
    let logger: Logger
    let token: String?
    let treePageSize: Int
    /// When set, LFS files are not streamed by the mirror: `resolve` answers `302` to `<base>/<sha256>` with the
    /// commit, `X-Linked-Etag` and `X-Linked-Size`, as the Hub redirects to its CDN. Point it at any server
    /// that serves blobs by SHA-256 (an nginx over a blob folder, a CDN). Clients must not send it the token.
    public var lfsRedirectBase: URL?
    /// A connection is closed when it has been this long without a complete request head or between requests:
    /// idle keep-alive sockets, clients that send half a header and stop, or trickle one byte at a time.
    public var idleTimeout: Duration = .seconds(30)
    /// The most connections served at once; past it the server stops accepting (clients wait in the kernel's
    /// queue) and logs it. Always kept under the process's descriptor limit, so `accept` never fails with
    /// EMFILE.
    public var maxConnections: Int = 1024
    /// Whether complete files go out by `sendfile` (NIO's `FileRegion`) rather than through the server's memory.
    /// On by default; off only to compare the two.
    public var sendsFilesWithSendfile = true
    /// How long a drain (SIGTERM, SIGINT, or the running task's cancellation) may wait for responses in flight
    /// before it closes their connections (a client sees its body cut short) and cancels what is left. 20 s, so the
    /// whole stop (at most this plus 2 s) ends inside the 30 s that systemd, Docker and Kubernetes grant before
    /// they kill the process.
    public var drainTimeout: Duration = .seconds(20)
    /// Called when a stop has not ended 1.5 s after ``drainTimeout`` even with every connection closed and every
    /// task cancelled (something ignores cancellation); the command line exits there. Nil: keep waiting.
    public var onStuckStop: (@Sendable () -> Void)?
    /// Faults to inject into file bodies on purpose (off by default): see ``ServedFaults``.
    public var faults: ServedFaults?
    /// How long HTTP caches in front of the mirror may keep an answer about a branch (`Cache-Control: max-age`);
    /// answers at a commit id are immutable. The upstream's branch TTL when pulling through, else 60 s.
    public var branchMaxAge: Duration = .seconds(60)
    let metrics: MirrorMetrics
    let clients: MirrorClients
    /// Small files of folder repositories, answered from memory while unchanged (``SmallFileCache``).
    var smallFiles = SmallFileCache()
    /// What the dashboard (`serve --ui`) reads: repositories, pulls in flight, counters, clients.
    public let dashboard: MirrorDashboard
    /// Route groups other modules answer on the mirror's port (``mount(_:onDrain:routes:)``).
    var mounts: [Mount] = []
    /// Xet's side, when ``enableXet(folder:)`` turned it on.
    var xet: XetStore?
    /// How often the Xet indexer walks the served files for ones to index (new, or changed since): a change is
    /// indexed within about this much plus the time to read the file.
    public var xetIndexInterval: Duration = .seconds(2)
    /// The ModelPack artifact of each commit registry clients asked for (`/v2/`).
    let registryArtifacts = ModelPackManifests()
    /// When set, the mirror speaks HTTPS with this certificate (read again on SIGHUP); files then go through memory,
    /// not `sendfile` (TLS encrypts every byte in the process).
    public var tls: ServerTLS?
    /// With ``tls``: how long a client has to finish the TLS handshake before it is disconnected.
    public var tlsHandshakeTimeout: Duration = .seconds(10)
    /// Names besides localhost, IP addresses and this machine's own names that a mirror without a token answers
    /// to (`serve --allowed-host`): a reverse proxy's public name, a LAN alias. Any other `Host` gets 421, so a
    /// web page cannot reach the mirror through DNS rebinding.
    public var allowedHosts: [String] = []

    /// Serves every `root/<org>/<name>/` folder as a model repository.
    ///
    /// - Parameters:
    ///   - stateFolder: where the hash index is kept (default `root/.modeldepot`, which is never served).
    ///   - token: when set, requests without `Authorization: Bearer <token>` get 401.
    ///   - treePageSize: tree entries per page (the Hub pages at 1000).
    public init(
        root: URL, stateFolder: URL? = nil, token: String? = nil, treePageSize: Int = 1000,
        logger: Logger = Logger(label: "modeldepot.server")
    ) {
        self.init(
            roots: [root], caches: [], stateFolder: stateFolder, token: token, treePageSize: treePageSize,
            logger: logger)
    }

    /// Serves folders of repositories and Hub caches together; when several have a repository, the first
    /// model root that has it wins, then dataset roots, then caches.
    ///
    /// - Parameters:
    ///   - roots: folders whose `<org>/<name>/` sub-folders are model repositories.
    ///   - datasetRoots: the same for dataset repositories (`/api/datasets/…`, `/datasets/…/resolve/…`).
    ///   - caches: Hub caches (ours or Python's), served with their commits and refs.
    ///   - stateFolder: where the hash index is kept; default `.modeldepot` in the first folder given.
    public init(
        roots: [URL], datasetRoots: [URL] = [], caches: [URL], stateFolder: URL? = nil, token: String? = nil,
        treePageSize: Int = 1000, logger: Logger = Logger(label: "modeldepot.server")
    ) {
        let firstFolder = roots.first ?? datasetRoots.first ?? caches.first ?? URL(fileURLWithPath: ".")
        let state = stateFolder ?? firstFolder.appendingPathComponent(".modeldepot")
        let index = HashIndex(storePath: state.appendingPathComponent("hash-index.json").path)
        let sources =
            Self.folderSources(roots: roots, datasetRoots: datasetRoots, index: index, logger: logger)
            + caches.map { HubCacheRepositorySource(cache: $0, index: index, logger: logger) }
        self.init(
            sources: sources, metrics: MirrorMetrics(), token: token, treePageSize: treePageSize, logger: logger,
            servedCaches: caches)
    }

    /// A pull-through mirror: what it does not hold it fetches from `upstream` into its own Hub `cache` (the
    /// layout Python reads), once however many clients ask, and clients get the bytes as they arrive. Folders of
    /// repositories in `roots` and `datasetRoots`, when given, are served too and win over the upstream.
    ///
    /// - Throws: `invalidArgument` when `upstream` has a token and `token` is nil: a mirror that fetches gated
    ///   or private repositories with the operator's token must not hand them to anyone who asks.
    public init(
        upstream: Upstream, cache: URL, roots: [URL] = [], datasetRoots: [URL] = [], stateFolder: URL? = nil,
        token: String? = nil, treePageSize: Int = 1000, logger: Logger = Logger(label: "modeldepot.server")
    ) throws {
        if upstream.token != nil, token == nil {
            throw ModelDepotError(
                .invalidArgument,
                "A mirror that uses a token for its upstream must require one from its clients too: give it a client token (serve --token-file), or no upstream token."
            )
        }
        let state = stateFolder ?? cache.appendingPathComponent(".modeldepot")
        let index = HashIndex(storePath: state.appendingPathComponent("hash-index.json").path)
        let metrics = MirrorMetrics()
        let pullThrough = try PullThroughSource(
            upstream: upstream, cache: cache, index: index, metrics: metrics, logger: logger)
        self.init(
            sources: Self.folderSources(roots: roots, datasetRoots: datasetRoots, index: index, logger: logger)
                + [pullThrough],
            metrics: metrics, token: token, treePageSize: treePageSize, logger: logger, pullThrough: pullThrough)
        branchMaxAge = upstream.branchTTL
    }

    /// A mirror over these sources, for tests that give a source of their own (one with a test clock).
    init(
        sources: [any RepositorySource], metrics: MirrorMetrics, token: String?, treePageSize: Int, logger: Logger,
        pullThrough: PullThroughSource? = nil, servedCaches: [URL] = []
    ) {
        source = sources.count == 1 ? sources[0] : CombinedRepositorySource(sources: sources)
        self.metrics = metrics
        clients = MirrorClients()
        dashboard = MirrorDashboard(
            metrics: metrics, clients: clients, pullThrough: pullThrough,
            servedCaches: servedCaches.map { HubCache(root: $0) })
        self.token = token
        self.treePageSize = max(1, treePageSize)
        self.logger = logger
    }

    private static func folderSources(roots: [URL], datasetRoots: [URL], index: HashIndex, logger: Logger)
        -> [any RepositorySource]
    {
        roots.map { FolderRepositorySource(root: $0, index: index, logger: logger) }
            + datasetRoots.map { FolderRepositorySource(root: $0, index: index, type: .dataset, logger: logger) }
    }

    /// Runs until the task is cancelled or the process gets SIGINT/SIGTERM; either way it drains: the listening
    /// socket closes at once (new connections are refused), idle keep-alive connections close, responses in
    /// flight are written to their end, and then it returns. At ``drainTimeout`` the connections still open are
    /// closed and what is left is cancelled.
    ///
    /// Cancellation drains too, rather than tearing connections down (``DrainingServer``).
    ///
    /// - Parameter onListening: called once with the base URL (the real port when `port` is 0).
    public func run(
        host: String = "127.0.0.1", port: Int = 8080, onListening: @escaping @Sendable (URL) async -> Void = { _ in }
    )
        async throws
    {
        let responder = makeResponder()
        let connections = ConnectionDrain()
        let cap = ConnectionCap(limit: ConnectionCap.limit(requested: maxConnections), logger: logger)
        let http1 = HTTP1Channel.Configuration(idleTimeout: .nanoseconds(idleTimeout.wholeNanoseconds))
        let app = Application(
            responder: responder,
            server: tls.map {
                .tls($0, idleTimeout: idleTimeout, handshakeTimeout: tlsHandshakeTimeout, drain: connections)
            } ?? .fileServingHTTP1(configuration: http1, drain: connections),
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: "modeldepot", availableConnectionsDelegate: cap),
            onServerRunning: { channel in
                let boundPort = channel.localAddress?.port ?? port
                await onListening(URL(string: "\(tls == nil ? "http" : "https")://\(host):\(boundPort)")!)
            },
            logger: logger
        )
        var reloads: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(
                service: TrafficSampler(dashboard: dashboard, interval: .seconds(10)),
                successTerminationBehavior: .ignore)
        ]
        if let tls { reloads.append(.init(service: CertificateReloader(tls: tls, logger: logger))) }
        if let xet {
            reloads.append(
                .init(
                    service: XetIndexer(
                        store: xet, source: source, metrics: metrics, interval: xetIndexInterval, logger: logger),
                    successTerminationBehavior: .ignore))
        }
        try await DrainingServer.run(
            reloads + [
                .init(service: app),
                .init(
                    service: DrainAnnouncer(logger: logger, onDrain: { [mounts] in mounts.forEach { $0.onDrain() } })),
            ], drainTimeout: drainTimeout, connections: connections, logger: logger, onStuck: onStuckStop)
    }

    /// What this mirror has done since it was made (bytes served and pulled, hits, pulls, requests by status).
    public var counters: MirrorCounters { metrics.snapshot }
}
