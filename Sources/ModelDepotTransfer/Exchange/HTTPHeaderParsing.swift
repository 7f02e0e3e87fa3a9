import Foundation

/// The parsed `Content-Range` of a 206 or 416 answer: `bytes 0-99/1000` or `bytes */1000`.
struct ContentRange: Equatable, Sendable {
    /// The bytes the body carries; nil for `bytes */total`.
    var range: Range<Int64>?
    /// The full size of the resource; nil for `/*`.
    var total: Int64?

    init(range: Range<Int64>?, total: Int64?) {
        self.range = range
        self.total = total
    }

    init?(header: String) {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[1] == "*" {
            total = nil
        } else {
            guard let value = Int64(parts[1]), value >= 0 else { return nil }
            total = value
        }
        if parts[0] == "*" {
            range = nil
        } else {
            let bounds = parts[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]),
                first >= 0, last >= first
            else { return nil }
            if let total, last >= total { return nil }
            range = first..<(last + 1)
        }
        if range == nil && total == nil { return nil }
    }
}

enum RetryAfter {
    /// Parses a `Retry-After` value: delta-seconds or an HTTP-date (relative to `now`).
    static func parse(_ value: String, now: Date = Date()) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int64(trimmed) { return seconds >= 0 ? .seconds(seconds) : nil }
        if let seconds = Double(trimmed), seconds >= 0 { return .milliseconds(Int64(seconds * 1000)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        let delta = max(0, date.timeIntervalSince(now))
        return .milliseconds(Int64(delta * 1000))
    }
}

/// A single-range `Range` header as a server resolves it against a file's size: `bytes=a-b` (an end past the
/// file is clamped), `bytes=a-`, and the suffix form `bytes=-n` (the last n bytes).
package enum ByteRangeRequest: Equatable, Sendable {
    case satisfiable(Range<Int>)
    case unsatisfiable
    /// Malformed or multi-range: served as a plain 200.
    case ignored

    package static func parse(_ header: String, size: Int) -> ByteRangeRequest {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return .ignored }
        let spec = header.dropFirst(6)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .ignored }
        if parts[0].isEmpty {
            guard let suffix = Int(parts[1]), suffix > 0 else { return .ignored }
            if size == 0 { return .unsatisfiable }
            return .satisfiable(max(0, size - suffix)..<size)
        }
        guard let first = Int(parts[0]) else { return .ignored }
        let last = parts[1].isEmpty ? size - 1 : (Int(parts[1]) ?? -1)
        guard last >= first || parts[1].isEmpty else { return .ignored }
        if first >= size { return .unsatisfiable }
        return .satisfiable(first..<(min(last, size - 1) + 1))
    }
}
