import Foundation
import ModelDepot

/// What fills the cache, as bars on one scale a page draws in SVG: the whole cache first, then each repository,
/// largest first. A bar is split by revision: what each revision a branch or tag points to uses alone, what
/// several share, what each revision no branch points to uses alone (hatched), and partial downloads nobody works on
/// (dotted) — told apart by pattern and
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

    /// A repository's bytes: by revision, and its partial downloads.
    public struct Repository: Sendable, Equatable {
        /// A cached revision and the bytes only it uses (what removing it alone frees).
        public struct Revision: Sendable, Equatable {
            /// Its short commit id.
            public var name: String
            /// The branches and tags pointing at it; none for an old revision (or one a pin keeps).
            public var refs: [String]
            /// Whether something keeps it: a branch or tag, or the repository's pin (a model pulled by commit id
            /// has no ref; a prune leaves a pinned repository alone). A revision nothing keeps is old.
            public var isKept: Bool
            public var exclusiveBytes: Int64

            public init(name: String, refs: [String], isKept: Bool? = nil, exclusiveBytes: Int64) {
                self.name = name
                self.refs = refs
                self.isKept = isKept ?? !refs.isEmpty
                self.exclusiveBytes = exclusiveBytes
            }
        }

        public var id: String
        /// Its finished files (the cache's report counts partial downloads apart).
        public var sizeOnDisk: Int64
        public var revisions: [Revision]
        /// Blobs several revisions share, none of them kept: old too, freed with them.
        public var sharedByOldRevisions: Int64
        public var partialBytes: Int64

        public init(
            id: String, sizeOnDisk: Int64, revisions: [Revision], sharedByOldRevisions: Int64 = 0, partialBytes: Int64
        ) {
            self.id = id
            self.sizeOnDisk = sizeOnDisk
            self.revisions = revisions
            self.sharedByOldRevisions = sharedByOldRevisions
            self.partialBytes = partialBytes
        }

        /// `report`'s revisions with the bytes each uses alone (a blob two revisions share is in neither), and
        /// `partialBytes` of partial downloads. With `pinned`, every revision is kept.
        public init(_ report: CachedRepositoryReport, pinned: Bool = false, partialBytes: Int64) {
            var users: [String: Int] = [:]
            var kept: Set<String> = []
            var sizes: [String: Int64] = [:]
            for revision in report.revisions {
                for entry in revision.entries { sizes[entry.blob] = entry.size }
                let blobs = Set(revision.entries.map(\.blob))
                for blob in blobs { users[blob, default: 0] += 1 }
                if pinned || !revision.refs.isEmpty { kept.formUnion(blobs) }
            }
            let sharedByOld = users.filter { $0.value > 1 && !kept.contains($0.key) }.keys
                .reduce(Int64(0)) { $0 + (sizes[$1] ?? 0) }
            let revisions = report.revisions.sorted {
                ($0.refs.isEmpty ? 1 : 0, $0.commit) < ($1.refs.isEmpty ? 1 : 0, $1.commit)
            }
            .map { revision in
                var sizes: [String: Int64] = [:]
                for entry in revision.entries where users[entry.blob] == 1 { sizes[entry.blob] = entry.size }
                return Revision(
                    name: String(revision.commit.prefix(7)), refs: revision.refs.sorted(),
                    isKept: pinned || !revision.refs.isEmpty, exclusiveBytes: sizes.values.reduce(0, +))
            }
            self.init(
                id: report.id, sizeOnDisk: report.sizeOnDisk, revisions: revisions, sharedByOldRevisions: sharedByOld,
                partialBytes: partialBytes)
        }

        /// What it takes on disk: its finished files and its partial downloads.
        var total: Int64 { max(sizeOnDisk, exclusiveBytes + sharedByOldRevisions) + partialBytes }
        var exclusiveBytes: Int64 { revisions.reduce(0) { $0 + $1.exclusiveBytes } }
        /// What removing the old revisions frees: what each uses alone, and what only they share.
        var detachedBytes: Int64 {
            revisions.filter { !$0.isKept }.reduce(0) { $0 + $1.exclusiveBytes } + sharedByOldRevisions
        }
        /// Blobs several revisions use, at least one of them kept.
        var sharedBytes: Int64 { max(0, sizeOnDisk - exclusiveBytes - sharedByOldRevisions) }
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
            let id = repository.id
            let kept = repository.revisions.filter(\.isKept).map { revision in
                (
                    Kind.current, revision.exclusiveBytes,
                    strings.revision("\(id)@\(revision.name)", revision.refs, revision.exclusiveBytes)
                )
            }
            let shared = (Kind.current, repository.sharedBytes, strings.shared(id, repository.sharedBytes))
            let old = repository.revisions.filter { !$0.isKept }.map { revision in
                (
                    Kind.detached, revision.exclusiveBytes,
                    strings.detached("\(id)@\(revision.name)", revision.exclusiveBytes)
                )
            }
            let sharedByOld = (
                Kind.detached, repository.sharedByOldRevisions, strings.sharedByOld(id, repository.sharedByOldRevisions)
            )
            return kept + [shared] + old + [sharedByOld]
                + [(.partial, repository.partialBytes, strings.partial(id, repository.partialBytes))]
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
    /// A kept revision: "acme/bert@1a2b3c4 (main): 1.2 GiB", or "(pinned)" when only the pin keeps it.
    public var revision: @Sendable (String, _ refs: [String], Int64) -> String = { name, refs, bytes in
        "\(name) (\(refs.isEmpty ? "pinned" : refs.joined(separator: ", "))): \(ByteFormat.string(bytes))"
    }
    /// What several revisions share, one of them kept at least.
    public var shared: @Sendable (String, Int64) -> String = { id, bytes in
        "\(id), shared by revisions: \(ByteFormat.string(bytes))"
    }
    /// What only old revisions share.
    public var sharedByOld: @Sendable (String, Int64) -> String = { id, bytes in
        "\(id), shared by old revisions only: \(ByteFormat.string(bytes))"
    }
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
