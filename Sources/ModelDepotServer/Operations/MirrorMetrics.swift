import Prometheus
import Synchronization

/// The mirror's counters: written through swift-prometheus (whose metric types are swift-metrics handlers) into a
/// registry of this mirror's own, served at `GET /metrics`, and kept in a store that can be read back
/// (``MirrorCounters``), since a metrics backend is write-only and the dashboard needs the numbers.
///
/// Each mirror has its own registry rather than the process-wide `MetricsSystem`: several mirrors in one process
/// (tests, an app with a mirror inside) keep separate counts.
final class MirrorMetrics: Sendable {
    enum Counter: String, CaseIterable, Sendable {
        case servedBytes = "modeldepot_served_bytes_total"
        case upstreamBytes = "modeldepot_upstream_bytes_total"
        case cacheHits = "modeldepot_cache_hits_total"
        case pullsStarted = "modeldepot_upstream_pulls_total"
        case pullsJoined = "modeldepot_upstream_pulls_joined_total"
        case pullsFailed = "modeldepot_upstream_pulls_failed_total"
        case pullsAbandoned = "modeldepot_upstream_pulls_abandoned_total"
        case evictions = "modeldepot_evictions_total"
        case sendfileResponses = "modeldepot_sendfile_responses_total"
        case upstreamRateLimitWaits = "modeldepot_upstream_rate_limit_waits_total"

        var help: String {
            switch self {
            case .servedBytes: "File bytes sent to clients."
            case .upstreamBytes: "Bytes received from the upstream, counted as they land on disk."
            case .cacheHits: "File downloads answered from the mirror's disk."
            case .pullsStarted: "Files the mirror began pulling from its upstream."
            case .pullsJoined: "File downloads that followed a pull already under way instead of starting one."
            case .pullsFailed: "Pulls from the upstream that failed (clients were cut short)."
            case .pullsAbandoned: "Pulls cancelled because no client followed them any more (their bytes are kept)."
            case .evictions: "Repositories removed to keep the cache under --max-size."
            case .sendfileResponses: "File responses whose body went out by sendfile, not through the server's memory."
            case .upstreamRateLimitWaits:
                "Waits for the upstream's rate limit: a 429's wait, or calls spaced out as the limit ran low."
            }
        }
    }

    /// What the request-duration histogram groups requests by.
    enum RouteClass: String, CaseIterable, Sendable {
        /// Repository metadata: info, tree, paths-info, refs, commits, whoami.
        case api
        /// File content: resolve and the blob route.
        case file
        case metrics
        case health
        /// Anything refused before routing (no token, not a Hub path, wrong method).
        case other
    }

    /// Upper bounds of the request-duration buckets: sub-millisecond answers from memory up to pulls that wait
    /// on the upstream for the response head.
    static let durationBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
    ]

    private let registry = PrometheusCollectorRegistry()
    private static let xetFilesHelp =
        "Served files by the state of their Xet index (serve --xet): indexed, or pending (being built or waiting)."
    private let counters: [Counter: Prometheus.Counter]
    private let pullsInFlightGauge: Gauge
    private let xetIndexedGauge: Gauge
    private let xetPendingGauge: Gauge
    private let durations: [RouteClass: DurationHistogram]
    private let store = Mutex(MirrorCounters())
    /// The request counter of each status code, made on first use: asking the registry for it by name and label on
    /// every request allocated the labels and took the registry's lock each time.
    private let requestCounters = Mutex<[Int: Prometheus.Counter]>([:])

    init() {
        var counters: [Counter: Prometheus.Counter] = [:]
        for counter in Counter.allCases {
            counters[counter] = registry.makeCounter(name: counter.rawValue, help: counter.help)
        }
        self.counters = counters
        pullsInFlightGauge = registry.makeGauge(
            name: "modeldepot_upstream_pulls_in_flight", help: "Files being pulled from the upstream now.")
        xetIndexedGauge = registry.makeGauge(
            name: "modeldepot_xet_files", labels: [("state", "indexed")],
            help: Self.xetFilesHelp)
        xetPendingGauge = registry.makeGauge(
            name: "modeldepot_xet_files", labels: [("state", "pending")],
            help: Self.xetFilesHelp)
        var durations: [RouteClass: DurationHistogram] = [:]
        for route in RouteClass.allCases {
            durations[route] = registry.makeDurationHistogram(
                name: "modeldepot_request_duration_seconds", labels: [("route", route.rawValue)],
                buckets: Self.durationBuckets,
                help: "Time from a request's head to its response's head, by route class.")
        }
        self.durations = durations
    }

    func count(_ counter: Counter, by amount: Int = 1) {
        guard amount != 0 else { return }
        store.withLock { $0.add(amount, to: counter) }
        counters[counter]!.increment(by: Int64(amount))
    }

    func countRequest(status: Int, route: RouteClass, duration: Duration) {
        store.withLock { $0.requestsByStatus[status, default: 0] += 1 }
        let counter = requestCounters.withLock { counters in
            if let made = counters[status] { return made }
            let made = registry.makeCounter(
                name: "modeldepot_requests_total", labels: [("code", "\(status)")],
                help: "HTTP requests answered, by status code.")
            counters[status] = made
            return made
        }
        counter.increment()
        durations[route]!.record(duration)
    }

    func adjustPullsInFlight(by change: Int) {
        let now = store.withLock { store in
            store.pullsInFlight += change
            return store.pullsInFlight
        }
        pullsInFlightGauge.set(Int64(now))
    }

    /// The Xet indexer's last round: files whose index is current, and files still waiting for one.
    func recordXetFiles(indexed: Int, pending: Int) {
        store.withLock {
            $0.xetFilesIndexed = indexed
            $0.xetFilesPending = pending
        }
        xetIndexedGauge.set(Int64(indexed))
        xetPendingGauge.set(Int64(pending))
    }

    func value(_ counter: Counter) -> Int { store.withLock { $0.value(counter) } }

    /// Every counter as it stands.
    var snapshot: MirrorCounters { store.withLock { $0 } }

    /// The exposition text (Prometheus text format 0.0.4).
    func render() -> String { registry.emitToString() }
}

/// What a mirror has done since it started, read back from its metrics (for a dashboard or a test).
public struct MirrorCounters: Sendable, Equatable {
    public internal(set) var servedBytes = 0
    public internal(set) var upstreamBytes = 0
    public internal(set) var cacheHits = 0
    public internal(set) var pullsStarted = 0
    public internal(set) var pullsJoined = 0
    public internal(set) var pullsFailed = 0
    public internal(set) var pullsAbandoned = 0
    public internal(set) var evictions = 0
    public internal(set) var sendfileResponses = 0
    public internal(set) var upstreamRateLimitWaits = 0
    public internal(set) var pullsInFlight = 0
    /// Served files whose Xet index is current, and files still waiting for one (`serve --xet`).
    public internal(set) var xetFilesIndexed = 0
    public internal(set) var xetFilesPending = 0
    /// Requests answered, by HTTP status code.
    public internal(set) var requestsByStatus: [Int: Int] = [:]

    fileprivate func value(_ counter: MirrorMetrics.Counter) -> Int {
        switch counter {
        case .servedBytes: servedBytes
        case .upstreamBytes: upstreamBytes
        case .cacheHits: cacheHits
        case .pullsStarted: pullsStarted
        case .pullsJoined: pullsJoined
        case .pullsFailed: pullsFailed
        case .pullsAbandoned: pullsAbandoned
        case .evictions: evictions
        case .sendfileResponses: sendfileResponses
        case .upstreamRateLimitWaits: upstreamRateLimitWaits
        }
    }

    fileprivate mutating func add(_ amount: Int, to counter: MirrorMetrics.Counter) {
        switch counter {
        case .servedBytes: servedBytes += amount
        case .upstreamBytes: upstreamBytes += amount
        case .cacheHits: cacheHits += amount
        case .pullsStarted: pullsStarted += amount
        case .pullsJoined: pullsJoined += amount
        case .pullsFailed: pullsFailed += amount
        case .pullsAbandoned: pullsAbandoned += amount
        case .evictions: evictions += amount
        case .sendfileResponses: sendfileResponses += amount
        case .upstreamRateLimitWaits: upstreamRateLimitWaits += amount
        }
    }
}
