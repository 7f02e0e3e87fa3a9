import Synchronization

/// The mirror's counters, served at `GET /metrics` in Prometheus' text format (version 0.0.4).
final class MirrorMetrics: Sendable {
    enum Counter: String, CaseIterable, Sendable {
        case servedBytes = "modeldepot_served_bytes_total"
        case upstreamBytes = "modeldepot_upstream_bytes_total"
        case cacheHits = "modeldepot_cache_hits_total"
        case pullsStarted = "modeldepot_upstream_pulls_total"
        case pullsJoined = "modeldepot_upstream_pulls_joined_total"
        case pullsFailed = "modeldepot_upstream_pulls_failed_total"
        case evictions = "modeldepot_evictions_total"

        var help: String {
            switch self {
            case .servedBytes: "File bytes sent to clients."
            case .upstreamBytes: "Bytes received from the upstream by finished pulls."
            case .cacheHits: "File downloads answered from the mirror's disk."
            case .pullsStarted: "Files the mirror began pulling from its upstream."
            case .pullsJoined: "File downloads that followed a pull already under way instead of starting one."
            case .pullsFailed: "Pulls from the upstream that failed (clients were cut short)."
            case .evictions: "Repositories removed to keep the cache under --max-size."
            }
        }
    }

    private struct State {
        var counters: [Counter: Int] = [:]
        var requests: [Int: Int] = [:]
        var pullsInFlight = 0
    }
    private let state = Mutex(State())

    func count(_ counter: Counter, by amount: Int = 1) {
        state.withLock { $0.counters[counter, default: 0] += amount }
    }

    func countRequest(status: Int) {
        state.withLock { $0.requests[status, default: 0] += 1 }
    }

    func adjustPullsInFlight(by change: Int) {
        state.withLock { $0.pullsInFlight += change }
    }

    func value(_ counter: Counter) -> Int { state.withLock { $0.counters[counter, default: 0] } }

    /// The exposition text.
    func render() -> String {
        let state = self.state.withLock { $0 }
        var lines = [
            "# HELP modeldepot_requests_total HTTP requests answered, by status code.",
            "# TYPE modeldepot_requests_total counter",
        ]
        for (status, count) in state.requests.sorted(by: { $0.key < $1.key }) {
            lines.append("modeldepot_requests_total{code=\"\(status)\"} \(count)")
        }
        for counter in Counter.allCases {
            lines.append("# HELP \(counter.rawValue) \(counter.help)")
            lines.append("# TYPE \(counter.rawValue) counter")
            lines.append("\(counter.rawValue) \(state.counters[counter, default: 0])")
        }
        lines.append("# HELP modeldepot_upstream_pulls_in_flight Files being pulled from the upstream now.")
        lines.append("# TYPE modeldepot_upstream_pulls_in_flight gauge")
        lines.append("modeldepot_upstream_pulls_in_flight \(state.pullsInFlight)")
        return lines.joined(separator: "\n") + "\n"
    }
}
