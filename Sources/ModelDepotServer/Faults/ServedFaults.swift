import Foundation
import ModelDepotCore
import Synchronization

/// Faults the mirror injects into file downloads on purpose (`serve --faults`), so that an app's download UI
/// can be watched surviving a bad network. API calls are never touched: only the bodies of files.
///
/// A spec is a comma-separated list of `name=value`:
/// - `status503=P` answers 503 (with `Retry-After: 0`) instead of the file;
/// - `reset=P` sends part of the body and then drops the connection;
/// - `stall=P` sends part of the body and then nothing, for a minute, before dropping it;
/// - `rate=4MB` sends every file body at most that fast (`K`, `M`, `G`, with or without `B`; per response).
///
/// `P` is a probability (`0.05`) or `Nx` for exactly the first N eligible requests (`1x`). Requests for a
/// file's first byte (a client's probe) are never faulted, so every fault hits a transfer under way.
public final class ServedFaults: Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable { case status503, reset, stall }

    public enum Frequency: Sendable, Equatable {
        case probability(Double)
        case firstRequests(Int)
    }

    public let frequencies: [Kind: Frequency]
    /// Bytes per second per response; nil: as fast as the server can.
    public let bytesPerSecond: Int?
    private let state: Mutex<(used: [Kind: Int], random: SplitMix64)>

    /// Parses a spec such as `reset=0.05,status503=1x,rate=4MB`; throws a message naming what is wrong.
    public init(_ spec: String, seed: UInt64 = 2026) throws {
        state = Mutex(([:], SplitMix64(seed: seed)))
        var frequencies: [Kind: Frequency] = [:]
        var bytesPerSecond: Int?
        for item in spec.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw Self.invalid(item, "expected name=value") }
            let (name, value) = (parts[0], parts[1])
            if name == "rate" {
                guard let rate = Self.parseRate(value), rate > 0 else {
                    throw Self.invalid(item, "the rate is bytes per second, like 4MB or 512K")
                }
                bytesPerSecond = rate
                continue
            }
            guard let kind = Kind(rawValue: name) else {
                throw Self.invalid(
                    item, "the faults are \(Kind.allCases.map(\.rawValue).joined(separator: ", ")) and rate")
            }
            if value.hasSuffix("x"), let count = Int(value.dropLast()), count > 0 {
                frequencies[kind] = .firstRequests(count)
            } else if let probability = Double(value), (0...1).contains(probability) {
                frequencies[kind] = .probability(probability)
            } else {
                throw Self.invalid(item, "give a probability between 0 and 1, or Nx for the first N requests")
            }
        }
        self.frequencies = frequencies
        self.bytesPerSecond = bytesPerSecond
    }

    public var isEmpty: Bool { frequencies.isEmpty && bytesPerSecond == nil }

    public var description: String {
        let faults = Kind.allCases.compactMap { kind -> String? in
            switch frequencies[kind] {
            case .probability(let p): "\(kind.rawValue)=\(p)"
            case .firstRequests(let n): "\(kind.rawValue)=\(n)x"
            case nil: nil
            }
        }
        return (faults + (bytesPerSecond.map { ["rate=\($0)B/s"] } ?? [])).joined(separator: ",")
    }

    /// The fault for one file request, if any; `startsAtZero` requests (probes) are never faulted.
    func draw(startsAtZero: Bool) -> Kind? {
        guard !startsAtZero else { return nil }
        return state.withLock { state in
            for kind in Kind.allCases {
                switch frequencies[kind] {
                case .firstRequests(let count):
                    if state.used[kind, default: 0] < count {
                        state.used[kind, default: 0] += 1
                        return kind
                    }
                case .probability(let probability):
                    if state.random.nextUnit() < probability {
                        state.used[kind, default: 0] += 1
                        return kind
                    }
                case nil: continue
                }
            }
            return nil
        }
    }

    /// The injected faults as Prometheus lines, for `/metrics`: whoever watches a demo or a test can tell a
    /// recovered fault happened.
    var metricLines: String {
        let used = injected
        var lines = [
            "# HELP modeldepot_faults_injected_total Faults injected on purpose (serve --faults), by kind.",
            "# TYPE modeldepot_faults_injected_total counter",
        ]
        for kind in Kind.allCases {
            lines.append("modeldepot_faults_injected_total{kind=\"\(kind.rawValue)\"} \(used[kind, default: 0])")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// How many of each fault were injected so far.
    public var injected: [Kind: Int] { state.withLock { $0.used } }

    private static func parseRate(_ text: String) -> Int? {
        var digits = text.uppercased()
        if digits.hasSuffix("B") { digits.removeLast() }
        let multipliers: [Character: Double] = ["K": 1024, "M": 1024 * 1024, "G": 1024 * 1024 * 1024]
        var multiplier = 1.0
        if let last = digits.last, let value = multipliers[last] {
            multiplier = value
            digits.removeLast()
        }
        return Double(digits).map { Int($0 * multiplier) }
    }

    private static func invalid(_ item: String, _ reason: String) -> ServedFaultsError {
        ServedFaultsError(message: "Invalid fault '\(item)': \(reason) (example: reset=0.05,status503=1x,rate=4MB).")
    }
}

public struct ServedFaultsError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
