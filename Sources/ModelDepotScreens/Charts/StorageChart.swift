import Foundation
import ModelDepot

/// What fills the cache, as bars on one scale a page draws in SVG: the whole cache first, then each repository,
/// largest first. A bar is split by what its bytes are: kept by a branch or tag, kept only by a revision no
/// branch points to (each such revision its own piece), or a partial download nobody works on — told apart by pattern and
/// a legend, not by colour alone. The storage budget, when one is given, is a vertical line across all bars.
public struct StorageChart: Sendable, Equatable, Encodable {
    /// What a piece of a bar holds.
    public enum Kind: String, Sendable, Equatable, Encodable, CaseIterable {
        /// Files of a revision a branch or tag points to.
        case current
        /// Bytes only revisions without a branch use: what "Remove old revisions" frees.
        case detached
        /// A download that stopped part-way and that no process is working on now.
        case partial
    }

    public struct Piece: Sendable, Equatable, Encodable {
        public var kind: Kind
        public var x: Double
        public var width: Double
        public var bytes: Int64
        /// "acme/bert@1a2b3c4, without a branch: 1.2 GiB", the piece's tooltip.
        public var label: String
    }

    public struct Bar: Sendable, Equatable, Encodable {
        /// "Whole cache", "acme/bert", "4 others".
        public var label: String
        public var sizeText: String
        /// The top of the row: the label's line, then the bar below it.
        public var y: Double
        public var barY: Double
        public var pieces: [Piece]
    }

    public struct Budget: Sendable, Equatable, Encodable {
        public var x: Double
        public var bytes: Int64
        /// "budget 5.0 GiB".
        public var label: String
        /// Where its label goes: left of the line when the line is near the right edge.
        public var anchor: String
    }

    public struct LegendItem: Sendable, Equatable, Encodable {
        public var kind: Kind
        public var label: String
    }

    public var width: Double
    /// The view box's height: the bars, then a line kept for the budget's label whether or not there is a budget
    /// (a budget drawn later does not move what is below the chart).
    public var height: Double
    /// Where the bars end.
    public var barsHeight: Double
    public var barHeight: Double
    /// Bytes at the right edge: the larger of the whole cache and the budget.
    public var scaleBytes: Int64
    public var bars: [Bar]
    public var budget: Budget?
    public var legend: [LegendItem]
    /// The chart in sentences, for screen readers.
    public var summary: String

    /// Repositories shown one by one; the rest share a bar.
    public static let shownRepositories = 10

    static let viewWidth = 600.0
    static let rowHeight = 34.0
    static let barTop = 16.0
    static let bar = 12.0
    static let budgetLabelHeight = 16.0

    /// A repository's bytes by kind.
    public struct Repository: Sendable, Equatable {
        public var id: String
        /// Its finished files (the cache's report counts partial downloads apart).
        public var sizeOnDisk: Int64
        /// Revisions no branch points to: a short name and the bytes removing it frees (part of `sizeOnDisk`).
        public var detached: [(name: String, bytes: Int64)]
        public var partialBytes: Int64

        public init(id: String, sizeOnDisk: Int64, detached: [(name: String, bytes: Int64)], partialBytes: Int64) {
            self.id = id
            self.sizeOnDisk = sizeOnDisk
            self.detached = detached
            self.partialBytes = partialBytes
        }

        public static func == (one: Repository, other: Repository) -> Bool {
            one.id == other.id && one.sizeOnDisk == other.sizeOnDisk && one.partialBytes == other.partialBytes
                && one.detached.map(\.name) == other.detached.map(\.name)
                && one.detached.map(\.bytes) == other.detached.map(\.bytes)
        }

        /// What it takes on disk: its finished files and its partial downloads.
        var total: Int64 { max(sizeOnDisk, detachedBytes) + partialBytes }
        var detachedBytes: Int64 { detached.reduce(0) { $0 + $1.bytes } }
        var currentBytes: Int64 { max(0, sizeOnDisk - detachedBytes) }
    }

    public init(_ repositories: [Repository], budget: Int64? = nil, strings: StorageChartStrings = .english) {
        let sorted = repositories.sorted { ($0.total, $1.id) > ($1.total, $0.id) }
        let total = sorted.reduce(Int64(0)) { $0 + $1.total }
        let scale = max(total, budget ?? 0, 1)
        scaleBytes = scale
        width = Self.viewWidth
        barHeight = Self.bar
        func pieces(_ parts: [(Kind, Int64, String)]) -> [Piece] {
            var x = 0.0
            return parts.filter { $0.1 > 0 }.map { kind, bytes, label in
                let width = Double(bytes) / Double(scale) * Self.viewWidth
                defer { x += width }
                return Piece(
                    kind: kind, x: (x * 10).rounded() / 10, width: max(0.5, (width * 10).rounded() / 10),
                    bytes: bytes, label: label)
            }
        }
        func parts(of repository: Repository) -> [(Kind, Int64, String)] {
            [(.current, repository.currentBytes, strings.current(repository.id, repository.currentBytes))]
                + repository.detached.map {
                    (.detached, $0.bytes, strings.detached("\(repository.id)@\($0.name)", $0.bytes))
                }
                + [(.partial, repository.partialBytes, strings.partial(repository.id, repository.partialBytes))]
        }
        var rows: [(String, Int64, [(Kind, Int64, String)])] = []
        let byKind = Kind.allCases.map { kind -> (Kind, Int64, String) in
            let bytes = sorted.reduce(Int64(0)) { sum, repository in
                sum
                    + (kind == .current
                        ? repository.currentBytes
                        : kind == .detached ? repository.detachedBytes : repository.partialBytes)
            }
            return (kind, bytes, strings.kindTotal(kind, bytes))
        }
        rows.append((strings.wholeCache, total, byKind))
        for repository in sorted.prefix(Self.shownRepositories) {
            rows.append((repository.id, repository.total, parts(of: repository)))
        }
        let rest = sorted.dropFirst(Self.shownRepositories)
        if !rest.isEmpty {
            let bytes = rest.reduce(Int64(0)) { $0 + $1.total }
            rows.append((strings.others(rest.count), bytes, [(.current, bytes, strings.others(rest.count))]))
        }
        bars = rows.enumerated().map { index, row in
            let y = Double(index) * Self.rowHeight
            return Bar(
                label: row.0, sizeText: ByteFormat.string(row.1), y: y, barY: y + Self.barTop, pieces: pieces(row.2))
        }
        barsHeight = Double(rows.count) * Self.rowHeight
        height = barsHeight + Self.budgetLabelHeight
        self.budget = budget.map { bytes in
            let x = (Double(bytes) / Double(scale) * Self.viewWidth * 10).rounded() / 10
            return Budget(
                x: x, bytes: bytes, label: strings.budget(bytes), anchor: x > Self.viewWidth * 0.7 ? "end" : "start")
        }
        legend = Kind.allCases.filter { kind in byKind.contains { $0.0 == kind && $0.1 > 0 } }
            .map { LegendItem(kind: $0, label: strings.kind($0)) }
        var summary = strings.summary(total, sorted.prefix(3).map { ($0.id, $0.total) })
        for (kind, bytes, text) in byKind where kind != .current && bytes > 0 { summary += " " + text + "." }
        if let budget { summary += " " + strings.budgetSentence(budget, total) }
        self.summary = summary
    }
}

/// The storage chart's words; replace them to translate.
public struct StorageChartStrings: Sendable {
    public var wholeCache = "Whole cache"
    public var kind: @Sendable (StorageChart.Kind) -> String = { kind in
        switch kind {
        case .current: "On a branch or tag"
        case .detached: "Old revisions (no branch)"
        case .partial: "Partial downloads"
        }
    }
    public var kindTotal: @Sendable (StorageChart.Kind, Int64) -> String = { kind, bytes in
        switch kind {
        case .current: "On a branch or tag: \(ByteFormat.string(bytes))"
        case .detached: "Old revisions without a branch: \(ByteFormat.string(bytes))"
        case .partial: "Partial downloads no process is working on: \(ByteFormat.string(bytes))"
        }
    }
    public var current: @Sendable (String, Int64) -> String = { "\($0): \(ByteFormat.string($1))" }
    public var detached: @Sendable (String, Int64) -> String = {
        "\($0), without a branch: \(ByteFormat.string($1))"
    }
    public var partial: @Sendable (String, Int64) -> String = {
        "\($0), partial downloads: \(ByteFormat.string($1))"
    }
    public var others: @Sendable (Int) -> String = { $0 == 1 ? "1 other" : "\($0) others" }
    public var budget: @Sendable (Int64) -> String = { "budget \(ByteFormat.string($0))" }
    public var summary: @Sendable (Int64, [(String, Int64)]) -> String = { total, largest in
        let names = largest.map { "\($0.0) \(ByteFormat.string($0.1))" }.joined(separator: ", ")
        return "The cache takes \(ByteFormat.string(total))" + (names.isEmpty ? "." : "; the largest: \(names).")
    }
    public var budgetSentence: @Sendable (Int64, Int64) -> String = { budget, total in
        total > budget
            ? "It is \(ByteFormat.string(total - budget)) over the budget of \(ByteFormat.string(budget))."
            : "It fits the budget of \(ByteFormat.string(budget)), with \(ByteFormat.string(budget - total)) to spare."
    }

    public static let english = StorageChartStrings()
}
