import Foundation

/// A snapshot of a download, emitted as it goes.
public struct DownloadProgress: Sendable, Equatable {
    /// Where a download is: probing the server, transferring, verifying the hash, or done.
    public enum Phase: String, Sendable, Equatable, Codable {
        case resolving, downloading, verifying, finalizing, completed
    }

    /// The download's current phase.
    public var phase: Phase
    /// Bytes on disk, including those resumed from an earlier run.
    public var bytesCompleted: Int64
    /// The file's size, once the server has said it.
    public var totalBytes: Int64?
    /// Bytes per second over the last few seconds.
    public var bytesPerSecond: Double
    /// Seconds left at the current speed, when it can be estimated.
    public var estimatedSecondsRemaining: Double?
    /// Connections transferring right now.
    public var activeConnections: Int
    /// Set while the download waits for a server's answer or for its next attempt; nil while bytes flow.
    public var waiting: TransferWait?
    /// Of `bytesCompleted`, those already on disk when this run began (a resumed partial file, or the whole file
    /// when it was there): not part of what came over the network.
    package var bytesResumed: Int64 = 0

    /// A progress value; the engine makes these, tests and previews may too.
    public init(
        phase: Phase, bytesCompleted: Int64 = 0, totalBytes: Int64? = nil, bytesPerSecond: Double = 0,
        estimatedSecondsRemaining: Double? = nil, activeConnections: Int = 0, waiting: TransferWait? = nil
    ) {
        self.waiting = waiting
        self.phase = phase
        self.bytesCompleted = bytesCompleted
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
        self.estimatedSecondsRemaining = estimatedSecondsRemaining
        self.activeConnections = activeConnections
    }

    /// The one event of a file that was already complete on disk: nothing came over the network.
    package static func alreadyThere(size: Int64) -> DownloadProgress {
        var progress = DownloadProgress(phase: .completed, bytesCompleted: size, totalBytes: size)
        progress.bytesResumed = size
        return progress
    }

    /// 0...1, when the total is known.
    public var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return totalBytes == 0 ? 1 : nil }
        return min(1, Double(bytesCompleted) / Double(totalBytes))
    }
}

/// Speed over a rolling window of samples taken on the engine's clock.
package struct SpeedMeter: Sendable {
    private var samples: [(time: Duration, bytes: Int64)] = []
    let window: Duration

    package init(window: Duration = .seconds(5)) { self.window = window }

    /// Adds a sample (elapsed time since the start, cumulative bytes) and returns bytes per second.
    package mutating func record(elapsed: Duration, bytes: Int64) -> Double {
        samples.append((elapsed, bytes))
        while let first = samples.first, elapsed - first.time > window, samples.count > 2 { samples.removeFirst() }
        guard let first = samples.first, elapsed > first.time else { return 0 }
        return Double(bytes - first.bytes) / (elapsed - first.time).timeInterval
    }
}
