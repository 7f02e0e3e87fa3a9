import Foundation
import ModelDepot

/// The Storage screen: every repository in the cache (Python's downloads too), what each takes and when it was
/// last used, whether it is pinned, and what each destructive action would free before it is taken: deleting a
/// repository, pruning to a size budget, pruning revisions no branch points to.
public struct StorageScreen: Sendable, Equatable, Encodable {
    /// One cached repository.
    public struct Row: Sendable, Equatable, Encodable {
        public var id: String
        /// `model` or `dataset`.
        public var type: String
        public var sizeOnDisk: Int64
        public var sizeText: String
        public var files: Int
        /// "model, 3 files".
        public var kindText: String
        /// "2 revisions, 1 without a branch".
        public var revisionsText: String
        public var lastUsed: Date
        /// "3 days ago".
        public var lastUsedText: String
        public var pinned: Bool
        /// What deleting it frees (every revision: its whole size).
        public var freedByDelete: Int64
        /// The question the person confirms before deleting, with what it frees.
        public var deleteConfirmation: String
        /// The buttons, in order.
        public var actions: [Button]
    }

    /// What the Storage screen's buttons do.
    public enum Action: String, Sendable, Equatable, Encodable, CaseIterable {
        case delete, pin, unpin, verify, repair
    }

    /// What an action did, in a sentence, and the action to offer next (Repair after a verify found damage).
    public struct Outcome: Sendable, Equatable, Encodable {
        public var message: String
        public var next: Button?
    }

    public struct Button: Sendable, Equatable, Encodable {
        public var action: Action
        public var label: String
    }

    /// What a prune would do, before it is done.
    public struct PrunePreview: Sendable, Equatable, Encodable {
        /// Repositories it removes (least recently used first), or revisions for a detached prune.
        public var removes: [String]
        public var freedBytes: Int64
        /// "Removes acme/a and acme/b: frees 2.0 GiB." or "Nothing to remove."
        public var summary: String
        /// Pinned repositories it leaves alone.
        public var pinnedKept: [String]
        /// For a prune to a budget: the storage chart with that budget drawn.
        public var chart: StorageChart?
    }

    public var rows: [Row]
    public var totalBytes: Int64
    /// "3 repositories, 4.5 GiB".
    public var totalText: String
    /// "120.3 GiB free on this disk", when the system says.
    public var freeSpaceText: String?
    /// Where the cache is (the person may want to look, or set HF_HUB_CACHE elsewhere).
    public var cacheFolder: String
    /// Revisions no branch points to, and old partial downloads: what "Prune old revisions" would free.
    public var detached: PrunePreview
    public var emptyMessage: String?
    /// What fills the cache, as bars (nil when it is empty).
    public var chart: StorageChart?

    /// The screen for `manager`'s cache; `now` is when "last used" is measured from.
    public static func load(
        _ manager: ModelManager, now: Date = Date(), strings: StorageScreenStrings = .english
    ) async -> StorageScreen {
        let reports = (try? await manager.cachedModels()) ?? []
        let pins = PinStore(cache: manager.cache)
        let rows = reports.sorted { $0.lastAccessed > $1.lastAccessed }.map { report -> Row in
            let pinned = report.repoID.map { pins.isPinned($0, type: report.repoType ?? .model) } ?? false
            let detached = report.revisions.filter(\.refs.isEmpty).count
            return Row(
                id: report.id, type: report.type, sizeOnDisk: report.sizeOnDisk,
                sizeText: ByteFormat.string(report.sizeOnDisk), files: report.files,
                kindText: strings.kind(report.type, report.files),
                revisionsText: strings.revisions(report.revisions.count, detached),
                lastUsed: report.lastAccessed, lastUsedText: strings.ago(now.timeIntervalSince(report.lastAccessed)),
                pinned: pinned, freedByDelete: report.sizeOnDisk,
                deleteConfirmation: strings.confirmDelete(report.id, report.sizeOnDisk),
                actions: [
                    Button(action: .delete, label: strings.label(.delete)),
                    pinned
                        ? Button(action: .unpin, label: strings.label(.unpin))
                        : Button(action: .pin, label: strings.label(.pin)),
                    Button(action: .verify, label: strings.label(.verify)),
                ])
        }
        let total = rows.reduce(Int64(0)) { $0 + $1.sizeOnDisk }
        let free = StorageBudget(cache: manager.cache).availableSpace()
        // One scan: the chart marks every partial download no process is working on; the prune offers only those
        // old enough.
        let pieces = try? await manager.pruneDetached(olderThan: .zero, dryRun: true, now: now)
        let detached = pieces.map {
            preview(of: $0.keepingPartials(newerThan: DetachedPrune.partialDownloadAge, now: now), strings: strings)
        }
        // Named beside the total, as the chart's "Whole cache" bar counts them: the two never seem to disagree.
        let partialBytes = (pieces?.partialDownloads ?? [])
            .filter { partial in reports.contains { $0.id == partial.repo && $0.type == partial.type } }
            .reduce(Int64(0)) { $0 + $1.sizeOnDisk }
        return StorageScreen(
            rows: rows, totalBytes: total,
            totalText: strings.total(rows.count, total) + (partialBytes > 0 ? strings.partials(partialBytes) : ""),
            freeSpaceText: free.map(strings.free), cacheFolder: manager.cache.root.path,
            detached: detached
                ?? PrunePreview(
                    removes: [], freedBytes: 0, summary: strings.nothingToRemove, pinnedKept: [], chart: nil),
            emptyMessage: rows.isEmpty ? strings.empty : nil,
            chart: reports.isEmpty ? nil : chart(reports, pieces, pins: pins, budget: nil, strings: strings))
    }

    /// The storage chart of `reports` by revision, with the partial downloads `prune` (a dry run) found, and
    /// `budget` as a line.
    static func chart(
        _ reports: [CachedRepositoryReport], _ prune: DetachedPrune?, pins: PinStore, budget: Int64?,
        strings: StorageScreenStrings
    ) -> StorageChart {
        let repositories = reports.map { report in
            StorageChart.Repository(
                report, pinned: report.repoID.map { pins.isPinned($0, type: report.repoType ?? .model) } ?? false,
                partialBytes: (prune?.partialDownloads ?? []).filter { $0.repo == report.id && $0.type == report.type }
                    .reduce(0) { $0 + $1.sizeOnDisk })
        }
        return StorageChart(repositories, budget: budget, strings: strings.chart)
    }

    /// What pruning to `maxSize` bytes would remove and free; nothing is removed.
    public static func prunePreview(
        _ manager: ModelManager, maxSize: Int64, strings: StorageScreenStrings = .english
    ) async throws -> PrunePreview {
        let plan = try await manager.prune(maxSize: maxSize, dryRun: true)
        let pins = PinStore(cache: manager.cache)
        let pinned = ((try? await manager.cachedModels()) ?? []).filter { report in
            report.repoID.map { pins.isPinned($0, type: report.repoType ?? .model) } ?? false
        }
        var summary = strings.removes(plan.evicted.map(\.id), plan.freedBytes)
        if plan.stillOver { summary += " " + strings.stillOver(plan.sizeAfter) }
        let reports = (try? await manager.cachedModels()) ?? []
        let detached = try? await manager.pruneDetached(olderThan: .zero, dryRun: true)
        return PrunePreview(
            removes: plan.evicted.map(\.id), freedBytes: plan.freedBytes, summary: summary,
            pinnedKept: pinned.map(\.id), chart: chart(reports, detached, pins: pins, budget: maxSize, strings: strings)
        )
    }

    static func preview(of prune: DetachedPrune, strings: StorageScreenStrings) -> PrunePreview {
        let removed =
            prune.revisions.map { "\($0.repo)@\($0.commit.prefix(7))" }
            + prune.partialDownloads.map { "\($0.repo): \($0.path)" }
        return PrunePreview(
            removes: removed, freedBytes: prune.freedBytes, summary: strings.removes(removed, prune.freedBytes),
            pinnedKept: prune.pinnedSkipped, chart: nil)
    }

    /// Does what a row's button says and tells the result in a sentence for the screen.
    public static func perform(
        _ action: Action, on id: String, type: String = "model", _ manager: ModelManager,
        strings: StorageScreenStrings = .english
    ) async throws -> Outcome {
        let repo = try RepoID(id)
        guard let repoType = RepoType(rawValue: type) else {
            throw ModelDepotError(.invalidArgument, "Unknown repository type \(type): use model or dataset.")
        }
        switch action {
        case .delete:
            return Outcome(message: strings.deleted(id, try await manager.delete(repo, type: repoType)))
        case .pin:
            try manager.pin(repo, type: repoType)
            return Outcome(message: strings.pinnedNow(id))
        case .unpin:
            manager.unpin(repo, type: repoType)
            return Outcome(message: strings.unpinnedNow(id))
        case .verify:
            let problems = try await manager.verify(repo, type: repoType).problems
            if problems.isEmpty { return Outcome(message: strings.verified(id)) }
            return Outcome(
                message: strings.damaged(id, problems.count),
                next: Button(action: .repair, label: strings.label(.repair)))
        case .repair:
            let problems = try await manager.verify(repo, type: repoType).problems
            guard !problems.isEmpty else { return Outcome(message: strings.verified(id)) }
            let left = try await manager.repair(repo, type: repoType, problems: problems)
            return Outcome(
                message: left.isEmpty ? strings.repaired(id, problems.count) : strings.damaged(id, left.count))
        }
    }

    /// Prunes to `maxSize` bytes (least recently used, unpinned repositories first) and says what it freed.
    public static func prune(
        _ manager: ModelManager, maxSize: Int64, strings: StorageScreenStrings = .english
    ) async throws -> Outcome {
        let plan = try await manager.prune(maxSize: maxSize)
        return Outcome(message: strings.pruned(plan.evicted.map(\.id), plan.freedBytes))
    }

    /// Removes the revisions no branch points to and old partial downloads, and says what it freed.
    public static func pruneDetached(
        _ manager: ModelManager, now: Date = Date(), strings: StorageScreenStrings = .english
    ) async throws -> Outcome {
        let pruned = try await manager.pruneDetached(dryRun: false, now: now)
        let removed =
            pruned.revisions.map { "\($0.repo)@\($0.commit.prefix(7))" }
            + pruned.partialDownloads.map { "\($0.repo): \($0.path)" }
        return Outcome(message: strings.pruned(removed, pruned.freedBytes))
    }
}

/// The Storage screen's words; replace them to translate the screen.
public struct StorageScreenStrings: Sendable {
    public var labels: [StorageScreen.Action: String] = [
        .delete: "Delete", .pin: "Pin", .unpin: "Unpin", .verify: "Verify", .repair: "Repair",
    ]
    public var empty = "Nothing is downloaded yet."
    public var kind: @Sendable (_ type: String, _ files: Int) -> String = { type, files in
        "\(type), \(files == 1 ? "1 file" : "\(files) files")"
    }
    public var nothingToRemove = "Nothing to remove."
    public var revisions: @Sendable (Int, _ detached: Int) -> String = { count, detached in
        let base = count == 1 ? "1 revision" : "\(count) revisions"
        return detached == 0 ? base : "\(base), \(detached) without a branch"
    }
    public var ago: @Sendable (TimeInterval) -> String = { seconds in
        switch seconds {
        case ..<90: "just now"
        case ..<5400: "\(Int((seconds / 60).rounded())) minutes ago"
        case ..<129_600: "\(Int((seconds / 3600).rounded())) hours ago"
        default: "\(Int((seconds / 86_400).rounded())) days ago"
        }
    }
    public var confirmDelete: @Sendable (String, _ frees: Int64) -> String = { id, bytes in
        "Delete \(id)? This frees \(ByteFormat.string(bytes)). It can be downloaded again."
    }
    public var total: @Sendable (Int, _ bytes: Int64) -> String = { count, bytes in
        "\(count == 1 ? "1 repository" : "\(count) repositories"), \(ByteFormat.string(bytes))"
    }
    /// Follows ``total`` when partial downloads no process works on hold bytes (the chart counts them).
    public var partials: @Sendable (_ bytes: Int64) -> String = {
        ", and \(ByteFormat.string($0)) of partial downloads"
    }
    public var free: @Sendable (Int64) -> String = { "\(ByteFormat.string($0)) free on this disk" }
    public var removes: @Sendable ([String], _ frees: Int64) -> String = { names, bytes in
        guard !names.isEmpty else { return "Nothing to remove." }
        let list =
            names.count <= 3
            ? names.joined(separator: ", ")
            : names.prefix(3).joined(separator: ", ")
                + " and \(names.count - 3) more"
        return "Removes \(list): frees \(ByteFormat.string(bytes))."
    }
    public var stillOver: @Sendable (Int64) -> String = {
        "Pinned models keep the cache at \(ByteFormat.string($0)), still over the limit."
    }
    public var deleted: @Sendable (String, _ freed: Int64) -> String = { id, bytes in
        "Deleted \(id): \(ByteFormat.string(bytes)) freed."
    }
    public var pruned: @Sendable ([String], _ freed: Int64) -> String = { names, bytes in
        names.isEmpty
            ? "Nothing to remove."
            : "Removed \(names.count == 1 ? names[0] : "\(names.count) items"): \(ByteFormat.string(bytes)) freed."
    }
    public var repaired: @Sendable (String, _ files: Int) -> String = { id, count in
        "\(id) is repaired: \(count == 1 ? "1 file" : "\(count) files") downloaded again."
    }
    public var pinnedNow: @Sendable (String) -> String = { "\($0) is pinned: pruning leaves it alone." }
    public var unpinnedNow: @Sendable (String) -> String = { "\($0) is no longer pinned." }
    public var verified: @Sendable (String) -> String = { "\($0): every file matches its digest." }
    public var damaged: @Sendable (String, _ problems: Int) -> String = { id, count in
        "\(id): \(count == 1 ? "1 file is" : "\(count) files are") damaged or missing. Repair downloads them again."
    }

    public var chart = StorageChartStrings.english

    public static let english = StorageScreenStrings()

    func label(_ action: StorageScreen.Action) -> String { labels[action] ?? action.rawValue.capitalized }
}
