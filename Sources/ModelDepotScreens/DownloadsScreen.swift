import Foundation
import ModelDepot

/// The Downloads screen: every download started here, live and byte-weighted, with what can be done to each,
/// an overall bar across the running ones, and the bandwidth limit they share.
public struct DownloadsScreen: Sendable, Equatable, Encodable {
    /// One download.
    public struct Row: Sendable, Equatable, Encodable {
        public var name: String
        /// `downloading`, `paused`, `completed`, `failed`, `cancelled` or `pending`.
        public var state: String
        public var stateText: String
        public var bytes: Int64
        public var total: Int64?
        /// 0...1 by bytes, never lower than an earlier value of the same download.
        public var fraction: Double?
        /// "120.0 MiB / 1.2 GiB".
        public var bytesText: String
        public var speedText: String?
        /// "ETA 0:42".
        public var etaText: String?
        /// "3 of 7 files".
        public var filesText: String?
        public var currentFile: String?
        /// "4 connections" while bytes flow.
        public var connectionsText: String?
        /// Why it stands still ("waiting for host:port", "retrying in 2.0 s …").
        public var waiting: String?
        /// A failure's message, which says what to do.
        public var message: String?
        /// The buttons, in order.
        public var actions: [Button]
        /// Its speed over the last two minutes, second by second (what a Swift Charts view draws); nil once it
        /// moved nothing for that long.
        public var throughputSamples: [ThroughputHistory.Sample]?
        /// The same as a chart to draw, with the bandwidth limit as a line.
        public var throughput: TimeSeriesChart?

        /// The samples stay out of the JSON the web page reads (it draws `throughput`); a Swift view reads them.
        enum CodingKeys: String, CodingKey {
            case name, state, stateText, bytes, total, fraction, bytesText, speedText, etaText, filesText, currentFile,
                connectionsText, waiting, message, actions, throughput
        }
    }

    /// A button: what it does and what it says.
    public struct Button: Sendable, Equatable, Encodable {
        public var action: ModelAction
        public var label: String
    }

    public var rows: [Row]
    /// Across the downloads still running or paused: bytes done of bytes in all.
    public var overallFraction: Double?
    public var overallText: String?
    /// The shared cap, e.g. "20.0 MiB/s", or the strings' "no limit".
    public var bandwidthText: String
    public var bandwidthBytesPerSecond: Int64?
    public var emptyMessage: String?
    /// All downloads added up, second by second, over the last two minutes.
    public var throughputSamples: [ThroughputHistory.Sample]
    /// The same as a chart, with the bandwidth limit as a line.
    public var throughput: TimeSeriesChart

    /// The samples stay out of the JSON the web page reads (it draws `throughput`); a Swift view reads them.
    enum CodingKeys: String, CodingKey {
        case rows, overallFraction, overallText, bandwidthText, bandwidthBytesPerSecond, emptyMessage, throughput
    }

    public static func load(_ downloads: ModelDownloads, strings: DownloadsScreenStrings = .english) async
        -> DownloadsScreen
    {
        let limit = downloads.bandwidth.bytesPerSecond
        var rows: [Row] = []
        for entry in await downloads.all {
            var row = row(for: entry, strings: strings)
            if let samples = await downloads.throughput(of: entry.name) {
                row.throughputSamples = samples
                row.throughput = chart(samples, label: entry.name, limit: limit, strings: strings)
            }
            rows.append(row)
        }
        // The library adds the downloads up (ModelManager.overallProgress); the screen only words it.
        let overall = await downloads.manager.overallProgress
        let samples = await downloads.throughput()
        return DownloadsScreen(
            rows: rows, overallFraction: overall.fractionCompleted,
            overallText: overall.totalBytes > 0
                ? "\(ByteFormat.string(overall.bytesCompleted)) / \(ByteFormat.string(overall.totalBytes))" : nil,
            bandwidthText: limit.map { ByteFormat.rate(Double($0)) } ?? strings.noLimit,
            bandwidthBytesPerSecond: limit, emptyMessage: rows.isEmpty ? strings.nothingYet : nil,
            throughputSamples: samples,
            throughput: chart(samples, label: strings.allDownloads, limit: limit, strings: strings))
    }

    /// A throughput chart of `samples`, the bandwidth limit drawn when one is set.
    static func chart(
        _ samples: [ThroughputHistory.Sample], label: String, limit: Int64?, strings: DownloadsScreenStrings
    ) -> TimeSeriesChart {
        TimeSeriesChart(
            [.init(key: "rate", label: label, values: samples.map(\.bytesPerSecond))], unit: .bytesPerSecond,
            window: .seconds(ThroughputHistory.window),
            limit: limit.map { (Double($0), strings.limitLine(ByteFormat.rate(Double($0)))) }, strings: strings.chart)
    }

    static func row(for entry: ModelDownloads.Entry, strings: DownloadsScreenStrings) -> Row {
        let progress = entry.progress
        var row = Row(
            name: entry.name, state: "pending", stateText: strings.pending, bytes: progress?.bytesCompleted ?? 0,
            total: progress?.totalBytes, fraction: progress?.fractionCompleted,
            bytesText: progress.map(bytesText) ?? "", speedText: nil, etaText: nil,
            filesText: progress.flatMap {
                $0.totalFiles > 0 ? strings.files($0.filesCompleted, of: $0.totalFiles) : nil
            },
            currentFile: progress?.currentFile, connectionsText: nil, waiting: progress?.waiting?.description,
            message: nil, actions: [], throughputSamples: nil, throughput: nil)
        switch entry.state {
        case .pending:
            row.actions = strings.buttons([.pause, .cancel])
        case .downloading(let progress):
            row.state = "downloading"
            switch progress.phase {
            case .resolving: row.stateText = strings.resolving
            case .compiling: row.stateText = strings.compiling(progress.modelsCompiled, of: progress.modelsToCompile)
            default: row.stateText = strings.downloading
            }
            if progress.bytesPerSecond > 0 { row.speedText = ByteFormat.rate(progress.bytesPerSecond) }
            if progress.activeConnections > 0 { row.connectionsText = strings.connections(progress.activeConnections) }
            if let eta = progress.estimatedSecondsRemaining, eta.isFinite, progress.phase == .downloading {
                row.etaText = String(format: "ETA %d:%02d", Int(eta) / 60, Int(eta) % 60)
            }
            row.actions = strings.buttons([.pause, .cancel])
        case .paused:
            row.state = "paused"
            row.stateText = strings.paused
            row.waiting = nil
            row.currentFile = nil
            row.actions = strings.buttons([.resume, .cancel])
        case .completed:
            row.state = "completed"
            row.stateText = progress?.alreadyCached == true ? strings.alreadyHere : strings.completed
            row.waiting = nil
            row.currentFile = nil
            row.actions = strings.buttons([.use])
        case .failed(let error):
            row.state = "failed"
            row.stateText = strings.failed
            row.waiting = nil
            row.message = error.message
            row.actions = strings.buttons([.retry])
        case .cancelled:
            row.state = "cancelled"
            row.stateText = strings.cancelled
            row.waiting = nil
            row.actions = strings.buttons([.retry])
        }
        return row
    }

    static func bytesText(_ progress: SnapshotProgress) -> String {
        ByteFormat.string(progress.bytesCompleted) + (progress.totalBytes.map { " / " + ByteFormat.string($0) } ?? "")
    }
}

/// The Downloads screen's words.
public struct DownloadsScreenStrings: Sendable {
    public var title = "Downloads"
    public var pending = "Starting"
    public var resolving = "Asking the Hub"
    public var downloading = "Downloading"
    public var paused = "Paused"
    public var completed = "Done"
    public var alreadyHere = "Already here"
    public var failed = "Failed"
    public var cancelled = "Cancelled"
    public var noLimit = "no limit"
    public var nothingYet = "Nothing downloaded yet. Start a download from the Models page."
    public var allDownloads = "All downloads"
    /// The bandwidth limit's line: "limit 2.0 MiB/s".
    public var limitLine: @Sendable (String) -> String = { "limit \($0)" }
    public var chart = ChartStrings.english

    public static let english = DownloadsScreenStrings()

    public var status = ModelStatusStrings.english

    func buttons(_ actions: [ModelAction]) -> [DownloadsScreen.Button] {
        actions.map { DownloadsScreen.Button(action: $0, label: status.label($0)) }
    }

    public func compiling(_ done: Int, of total: Int) -> String { "Compiling for this device (\(done) of \(total))" }

    public func connections(_ count: Int) -> String { count == 1 ? "1 connection" : "\(count) connections" }

    public func files(_ done: Int, of total: Int) -> String { "\(done) of \(total) file\(total == 1 ? "" : "s")" }
}
