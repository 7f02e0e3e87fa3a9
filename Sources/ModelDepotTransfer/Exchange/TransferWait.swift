import Foundation
import ModelDepotCore

/// Why a transfer is not moving right now: so a progress bar says "waiting for the server" or "retrying in
/// 4 s" instead of sitting still with no explanation.
public enum TransferWait: Sendable, Equatable, CustomStringConvertible {
    /// A request is out and the server (`host:port`) has not answered yet.
    case server(String)
    /// A request failed; attempt `attempt + 1` of at most `maxAttempts` starts after `delay`.
    case retry(attempt: Int, maxAttempts: Int, delay: Duration, reason: String)
    /// The network the device is on is not one the ``NetworkPolicy`` allows (cellular, Low Data Mode, none).
    case network(String)
    /// A server's rate limit: it answered 429 and said how long to wait, or so few requests are left that calls
    /// are spaced out (the `RateLimit` header).
    case rateLimit(delay: Duration, reason: String)

    /// Whether this is a wait for a server's answer rather than a retry's pause.
    public var isServerWait: Bool {
        if case .server = self { return true }
        return false
    }

    /// `waiting for host:port`, `retrying in 4 s (attempt 2 of 8): <reason>`, or `waiting 55 s: <reason>`.
    public var description: String {
        switch self {
        case .server(let server): return "waiting for \(server)"
        case .retry(let attempt, let maxAttempts, let delay, let reason):
            return "retrying in \(Self.shown(delay)) (attempt \(attempt + 1) of \(maxAttempts)): \(reason)"
        case .network(let reason):
            return "waiting for a network: \(reason)"
        case .rateLimit(let delay, let reason):
            return "waiting \(Self.shown(delay)): \(reason)"
        }
    }

    /// `4.0 s`, `55 s`.
    static func shown(_ delay: Duration) -> String {
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        return seconds < 10 ? String(format: "%.1f s", seconds) : "\(Int(seconds.rounded())) s"
    }
}
