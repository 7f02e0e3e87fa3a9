import Foundation
import ModelDepot
import ModelDepotMirrorContract

/// The Mirror screen: what a mirror holds, what it is pulling now, what it has served and to whom. Read-only
/// unless the viewer is an administrator; then each cached repository offers pin/unpin and evict.
public struct MirrorScreen: Sendable, Equatable, Encodable {
    public struct Row: Sendable, Equatable, Encodable {
        public var id: String
        public var type: String
        public var sizeText: String
        /// "3 files".
        public var filesText: String
        public var lastUsedText: String
        public var pinned: Bool
        /// Empty when read-only.
        public var actions: [Button]
    }

    public enum Action: String, Sendable, Equatable, Encodable, CaseIterable {
        case pin, unpin, evict
    }

    public struct Button: Sendable, Equatable, Encodable {
        public var action: Action
        public var label: String
        /// What the person confirms first (evict), nil when nothing is asked.
        public var confirmation: String?
    }

    public struct PullRow: Sendable, Equatable, Encodable {
        public var repository: String
        public var path: String
        public var fraction: Double
        /// "12.0 MiB of 48.0 MiB".
        public var bytesText: String
    }

    /// A label and its value ("Bytes served", "1.2 GiB").
    public struct Counter: Sendable, Equatable, Encodable {
        public var key: String
        public var label: String
        public var value: String
    }

    public struct ClientRow: Sendable, Equatable, Encodable {
        public var address: String
        public var requestsText: String
        public var lastSeenText: String
    }

    public var readOnly: Bool
    /// Why changes are off, or how to turn them on; nil for an administrator.
    public var readOnlyText: String?
    public var upstreamText: String
    public var counters: [Counter]
    public var rows: [Row]
    public var totalText: String
    public var pulls: [PullRow]
    /// "Nothing is being pulled."
    public var pullsText: String
    public var clients: [ClientRow]
    /// The last hour as charts: bytes served and pulled, requests and refusals, the cache hit ratio, pulls running.
    public var charts: [Chart] = []

    /// One of the dashboard's charts and its title.
    public struct Chart: Sendable, Equatable, Encodable {
        public var key: String
        public var title: String
        public var chart: TimeSeriesChart
    }

    /// The dashboard's charts of `traffic`, one interval each `interval`.
    package static func charts(
        _ traffic: [CounterHistory.Interval?], interval: Duration, strings: MirrorScreenStrings
    ) -> [Chart] {
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        guard !traffic.isEmpty, seconds > 0 else { return [] }
        let window = interval * traffic.count
        typealias Counter = MirrorDashboardState.TrafficCounter
        func rate(_ counter: Counter) -> [Double?] {
            traffic.map { $0?.increases.map { Double($0[counter.rawValue]) / seconds } }
        }
        let hitRatio = traffic.map { interval -> Double? in
            guard let increases = interval?.increases else { return nil }
            let hits = increases[Counter.cacheHits.rawValue]
            let asked = hits + increases[Counter.pullsStarted.rawValue]
            return asked > 0 ? Double(hits) / Double(asked) : nil
        }
        func gauge(_ counter: Counter) -> [Double?] {
            traffic.map { $0.map { Double($0.values[counter.rawValue]) } }
        }
        let chart = { (lines: [TimeSeriesChart.Values], unit: TimeSeriesChart.Unit) in
            TimeSeriesChart(lines, unit: unit, window: window, strings: strings.chart)
        }
        return [
            Chart(
                key: "bytes", title: strings.bytesChart,
                chart: chart(
                    [
                        .init(key: "served", label: strings.servedLine, values: rate(.servedBytes)),
                        .init(key: "upstream", label: strings.upstreamLine, dash: "6 4", values: rate(.upstreamBytes)),
                    ], .bytesPerSecond)),
            Chart(
                key: "requests", title: strings.requestsChart,
                chart: chart(
                    [
                        .init(key: "requests", label: strings.requestsLine, values: rate(.requests)),
                        .init(key: "refused", label: strings.refusedLine, dash: "2 3", values: rate(.refused)),
                    ], .perSecond)),
            Chart(
                key: "hits", title: strings.hitRatioChart,
                chart: chart([.init(key: "hits", label: strings.hitRatioLine, values: hitRatio)], .fraction)),
            Chart(
                key: "pulls", title: strings.pullsChart,
                chart: chart(
                    [
                        .init(key: "running", label: strings.pullsLine, values: gauge(.pullsRunning)),
                        .init(key: "waiting", label: strings.waitingLine, dash: "6 4", values: gauge(.pullsWaiting)),
                    ], .count)),
        ]
    }

    public static func make(
        _ state: MirrorDashboardState, admin: Bool, adminPossible: Bool, now: Date = Date(),
        strings: MirrorScreenStrings = .english
    ) -> MirrorScreen {
        let total = state.repositories.reduce(Int64(0)) { $0 + $1.sizeOnDisk }
        let rows = state.repositories.sorted { $0.lastUsed > $1.lastUsed }.map { repository -> Row in
            var actions: [Button] = []
            if admin {
                actions.append(
                    repository.pinned
                        ? Button(action: .unpin, label: strings.unpin, confirmation: nil)
                        : Button(action: .pin, label: strings.pin, confirmation: nil))
                if repository.evictable {
                    actions.append(
                        Button(
                            action: .evict, label: strings.evict,
                            confirmation: strings.confirmEvict(repository.id, repository.sizeOnDisk)))
                }
            }
            return Row(
                id: repository.id, type: repository.type, sizeText: ByteFormat.string(repository.sizeOnDisk),
                filesText: strings.files(repository.files),
                lastUsedText: StorageScreenStrings.english.ago(now.timeIntervalSince(repository.lastUsed)),
                pinned: repository.pinned, actions: actions)
        }
        let budget = state.maxCacheSize.map { " " + strings.budget(ByteFormat.string($0)) } ?? ""
        var screen = MirrorScreen(
            readOnly: !admin, readOnlyText: admin ? nil : adminPossible ? strings.signInToChange : strings.noAdmin,
            upstreamText: state.upstream.map(strings.pullsFrom) ?? strings.noUpstream,
            counters: [
                Counter(key: "servedBytes", label: strings.servedBytes, value: ByteFormat.string(state.servedBytes)),
                Counter(key: "cacheHits", label: strings.cacheHits, value: "\(state.cacheHits)"),
                Counter(
                    key: "upstreamBytes", label: strings.upstreamBytes, value: ByteFormat.string(state.upstreamBytes)),
                Counter(key: "pullsStarted", label: strings.pullsStarted, value: "\(state.pullsStarted)"),
                Counter(key: "pullsFailed", label: strings.pullsFailed, value: "\(state.pullsFailed)"),
                Counter(key: "evictions", label: strings.evictions, value: "\(state.evictions)"),
                Counter(key: "requests", label: strings.requests, value: "\(state.requests)"),
            ],
            rows: rows, totalText: StorageScreenStrings.english.total(rows.count, total) + budget,
            pulls: state.pulls.map { pull in
                PullRow(
                    repository: pull.repository, path: pull.path,
                    fraction: pull.totalBytes > 0 ? min(1, Double(pull.receivedBytes) / Double(pull.totalBytes)) : 0,
                    bytesText: "\(ByteFormat.string(pull.receivedBytes)) of \(ByteFormat.string(pull.totalBytes))")
            },
            pullsText: state.pulls.isEmpty ? strings.noPulls : strings.pulling(state.pulls.count),
            clients: state.clients.sorted { $0.lastSeen > $1.lastSeen }.map { client in
                ClientRow(
                    address: client.address, requestsText: strings.requestsCount(client.requests),
                    lastSeenText: StorageScreenStrings.english.ago(now.timeIntervalSince(client.lastSeen)))
            })
        screen.charts = charts(state.traffic, interval: state.trafficInterval, strings: strings)
        return screen
    }

    /// Does what a row's button says (the caller has checked the viewer is an administrator).
    public static func perform(
        _ action: Action, on id: String, type: String, _ source: any MirrorDashboardSource,
        strings: MirrorScreenStrings = .english
    ) async throws -> String {
        let repo = try RepoID(id)
        guard let repoType = RepoType(rawValue: type) else {
            throw ModelDepotError(.invalidArgument, "Unknown repository type \(type): use model or dataset.")
        }
        switch action {
        case .pin:
            try source.pin(repo, type: repoType)
            return strings.pinnedNow(id)
        case .unpin:
            try source.unpin(repo, type: repoType)
            return strings.unpinnedNow(id)
        case .evict:
            return strings.evicted(id, try await source.evict(repo, type: repoType))
        }
    }
}

/// The Mirror screen's words; replace them to translate the screen.
public struct MirrorScreenStrings: Sendable {
    public var pin = "Pin"
    public var unpin = "Unpin"
    public var evict = "Evict"
    public var confirmEvict: @Sendable (String, Int64) -> String = { id, bytes in
        "Evict \(id) from the mirror? This frees \(ByteFormat.string(bytes)); the next client to ask pulls it again."
    }
    public var files: @Sendable (Int) -> String = { $0 == 1 ? "1 file" : "\($0) files" }
    public var budget: @Sendable (String) -> String = { "(budget \($0))" }
    public var signInToChange = "Read-only: sign in with the admin token to pin or evict."
    public var noAdmin = "Read-only: start serve with --admin-token-file to allow changes."
    public var pullsFrom: @Sendable (String) -> String = { "Pulls what it lacks from \($0)." }
    public var noUpstream = "Serves its folders; pulls from nowhere."
    public var servedBytes = "Bytes served"
    public var cacheHits = "Cache hits"
    public var upstreamBytes = "Pulled from upstream"
    public var pullsStarted = "Pulls started"
    public var pullsFailed = "Pulls failed"
    public var evictions = "Evictions"
    public var requests = "Requests"
    public var noPulls = "Nothing is being pulled."
    public var pulling: @Sendable (Int) -> String = {
        $0 == 1 ? "1 file is being pulled." : "\($0) files are being pulled."
    }
    public var requestsCount: @Sendable (Int) -> String = { $0 == 1 ? "1 request" : "\($0) requests" }
    public var pinnedNow: @Sendable (String) -> String = { "\($0) is pinned: the budget leaves it alone." }
    public var unpinnedNow: @Sendable (String) -> String = { "\($0) is no longer pinned." }
    public var evicted: @Sendable (String, Int64) -> String = { id, bytes in
        "Evicted \(id): \(ByteFormat.string(bytes)) freed."
    }

    public var bytesChart = "Bytes per second"
    public var servedLine = "Served to clients"
    public var upstreamLine = "Pulled from upstream"
    public var requestsChart = "Requests per second"
    public var requestsLine = "Answered"
    public var refusedLine = "Refused (429, 421)"
    public var hitRatioChart = "Cache hit ratio"
    public var hitRatioLine = "Files served without asking upstream"
    public var pullsChart = "Upstream pulls"
    public var pullsLine = "Running"
    public var waitingLine = "Waiting for a turn"
    public var chart = ChartStrings.english

    public static let english = MirrorScreenStrings()
}
