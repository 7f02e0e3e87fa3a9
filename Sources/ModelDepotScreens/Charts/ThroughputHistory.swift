import Foundation

/// How fast one download (or several, added up) moved over the last ``window`` seconds, in one-second buckets: the
/// values a throughput chart draws, the same for the web app's SVG and a SwiftUI view's Swift Charts.
///
/// It is fed a running count of the bytes that came over the network as progress arrives
/// (``record(receivedBytes:flowing:at:)``: `SnapshotProgress`'s, which leaves out the cache and the partial files a
/// resume continues); a bucket's rate is what the count rose by within it. A count that starts again lower (a new
/// run of the download) rose by nothing. A bucket in which nothing flowed — paused, waiting for a
/// retry or a host, not started, finished — has no rate (a gap in the line), and one in which the download was
/// running but no byte came has rate 0 (a stall, drawn as such). Memory is bounded: ``window`` + 1 buckets,
/// whatever the uptime.
public struct ThroughputHistory: Sendable, Equatable {
    /// One second of the window.
    public struct Sample: Sendable, Equatable, Encodable {
        /// When the second ended, in seconds before now (0 is the last whole second).
        public var secondsAgo: Int
        /// Bytes per second in that second; nil when nothing was flowing (paused, waiting, not running).
        public var bytesPerSecond: Double?

        public init(secondsAgo: Int, bytesPerSecond: Double?) {
            self.secondsAgo = secondsAgo
            self.bytesPerSecond = bytesPerSecond
        }
    }

    /// Seconds a history covers: two minutes.
    public static let window = 120

    private struct Bucket: Equatable {
        /// Whole seconds since the owner's clock started.
        var second: Int64
        /// The bytes counted as moved, at the last progress seen up to the end of this second.
        var endBytes: Int64
        /// Whether the download was running at some point of this second.
        var flowed: Bool
    }

    /// Consecutive seconds, oldest first; the first is only the baseline of the second.
    private var buckets: [Bucket] = []
    private var flowing = false
    /// The byte count of the last report, and the bytes counted as moved so far.
    private var lastBytes: Int64 = 0
    private var counted: Int64 = 0

    public init() {}

    /// Takes a progress report: `receivedBytes` so far, and whether bytes are meant to be flowing now (false
    /// while paused, waiting, or once it ended), at `time` on the owner's clock (a monotonic one).
    public mutating func record(receivedBytes: Int64, flowing nowFlowing: Bool, at time: Duration) {
        let second = time.components.seconds
        if !buckets.isEmpty { counted += max(0, receivedBytes - lastBytes) }
        lastBytes = receivedBytes
        let completedBytes = counted
        guard let last = buckets.last else {
            // The first report is the baseline: bytes already on disk when a download resumes are not a burst.
            buckets = [
                Bucket(second: second - 1, endBytes: completedBytes, flowed: false),
                Bucket(second: second, endBytes: completedBytes, flowed: nowFlowing),
            ]
            flowing = nowFlowing
            return
        }
        if second <= last.second {
            buckets[buckets.count - 1].endBytes = completedBytes
            buckets[buckets.count - 1].flowed = last.flowed || nowFlowing
        } else {
            // The seconds with no report carry the state they began with; after a long silence only the window's
            // worth is kept.
            let firstMissing = max(last.second + 1, second - Int64(Self.window) - 1)
            for missing in firstMissing..<second {
                buckets.append(Bucket(second: missing, endBytes: last.endBytes, flowed: flowing))
            }
            buckets.append(Bucket(second: second, endBytes: completedBytes, flowed: flowing || nowFlowing))
        }
        flowing = nowFlowing
        if buckets.count > Self.window + 2 { buckets.removeFirst(buckets.count - Self.window - 2) }
    }

    /// The window's ``window`` whole seconds before `now`, oldest first. A second still under way is not shown:
    /// half a second's bytes would read as a drop at the end of the line.
    public func samples(at now: Duration) -> [Sample] {
        let current = now.components.seconds
        return (1...Self.window).reversed().map { ago in
            Sample(secondsAgo: ago - 1, bytesPerSecond: rate(inSecond: current - Int64(ago)))
        }
    }

    /// Seconds held in memory: never more than ``window`` + 2.
    package var storedSeconds: Int { buckets.count }

    /// Whether any second of the window ending at `now` had bytes flowing.
    public func isEmpty(at now: Duration) -> Bool { samples(at: now).allSatisfy { $0.bytesPerSecond == nil } }

    /// Several downloads added up, second by second; a second is a gap only when it is one in all of them.
    public static func sum(_ histories: [ThroughputHistory], at now: Duration) -> [Sample] {
        let each = histories.map { $0.samples(at: now) }
        return (0..<window).map { index in
            let rates = each.compactMap { $0[index].bytesPerSecond }
            return Sample(
                secondsAgo: window - 1 - index, bytesPerSecond: rates.isEmpty ? nil : rates.reduce(0, +))
        }
    }

    /// `samples` cut at their gaps: each run of seconds that had a rate, oldest first (what a chart draws as one
    /// line each, e.g. Swift Charts' `LineMark(series:)`).
    public static func stretches(_ samples: [Sample]) -> [[Sample]] {
        var result: [[Sample]] = []
        var current: [Sample] = []
        for sample in samples {
            if sample.bytesPerSecond == nil {
                if !current.isEmpty { result.append(current) }
                current = []
            } else {
                current.append(sample)
            }
        }
        if !current.isEmpty { result.append(current) }
        return result
    }

    private func rate(inSecond second: Int64) -> Double? {
        guard let first = buckets.first, let last = buckets.last, second > first.second else { return nil }
        // After the last report: the state it left carries on, and no byte came.
        guard second <= last.second else { return flowing ? 0 : nil }
        let index = Int(second - first.second)
        let bucket = buckets[index]
        let moved = bucket.endBytes - buckets[index - 1].endBytes
        // A second that moved bytes shows them, whatever the state said (the last bytes come with "paused").
        guard bucket.flowed || moved > 0 else { return nil }
        return Double(moved)
    }
}
