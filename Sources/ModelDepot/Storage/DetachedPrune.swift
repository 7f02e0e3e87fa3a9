import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust

/// What `hf cache prune` removes: revisions no ref points to, and partial downloads nobody is working on.
package struct DetachedPrune: Sendable, Encodable {
    /// A revision no branch or tag points to.
    package struct Revision: Sendable, Encodable, Equatable {
        package var repo: String
        package var type: String
        package var commit: String
        /// Bytes its removal frees (blobs other revisions still use stay).
        package var freedBytes: Int64
    }

    /// A partial blob no process holds the lock of, older than the threshold.
    package struct PartialDownload: Sendable, Encodable, Equatable {
        package var repo: String
        /// `model` or `dataset`.
        package var type: String
        package var path: String
        package var sizeOnDisk: Int64
        /// When its bytes last changed.
        package var modified: Date
    }

    package var revisions: [Revision] = []
    package var partialDownloads: [PartialDownload] = []
    /// Partial downloads left alone because a process holds their lock (a pull in progress) or they are newer
    /// than the threshold.
    package var partialDownloadsKept: Int = 0
    /// Repositories skipped because they are pinned.
    package var pinnedSkipped: [String] = []
    package var freedBytes: Int64 = 0
    /// Whether it only planned.
    package var dryRun: Bool

    /// How old a partial download must be before a prune removes it: a day, as `hf cache prune` waits.
    package static let partialDownloadAge: Duration = .seconds(86_400)

    /// This plan with the partial downloads newer than `age` (at `now`) kept instead: one scan answers both what
    /// the cache holds and what a prune with the default age would remove.
    package func keepingPartials(newerThan age: Duration, now: Date) -> DetachedPrune {
        let seconds = age / .seconds(1)
        var result = self
        result.partialDownloads = []
        for partial in partialDownloads {
            if now.timeIntervalSince(partial.modified) < seconds {
                result.partialDownloadsKept += 1
                result.freedBytes -= partial.sizeOnDisk
            } else {
                result.partialDownloads.append(partial)
            }
        }
        return result
    }
}

extension ModelManager {
    /// Removes (or, with `dryRun`, lists) the revisions no ref points to — their blobs too, unless another
    /// revision uses them — and the partial downloads older than `olderThan` whose lock no process holds, as
    /// `hf cache prune` does. Pinned repositories are left alone: a catalog model pinned to a commit has no ref,
    /// and a pin says to keep it.
    package func pruneDetached(
        olderThan: Duration = DetachedPrune.partialDownloadAge, dryRun: Bool = false, now: Date = Date()
    ) async throws -> DetachedPrune {
        var result = DetachedPrune(dryRun: dryRun)
        let pins = PinStore(cache: cache)
        let threshold = olderThan / .seconds(1)
        let cache = cache
        let scanMemo = scanMemo
        let scan = try await BlockingWork.run {
            FileManager.default.fileExists(atPath: cache.root.path)
                ? try CacheScanner(cache: cache, memo: scanMemo).scan() : nil
        }
        for report in scan?.repositories ?? [] {
            guard let id = report.repoID, let type = report.repoType else { continue }
            let detached = report.revisions.filter(\.refs.isEmpty)
            guard !detached.isEmpty else { continue }
            if pins.isPinned(id, type: type) {
                result.pinnedSkipped.append(report.id)
                continue
            }
            let plan = try DeletionPlan(deleting: Set(detached.map(\.commit)), of: report)
            let perRevision = try detached.map { revision in
                try DeletionPlan(deleting: [revision.commit], of: report).freedBytes
            }
            for (revision, freed) in zip(detached, perRevision) {
                result.revisions.append(
                    .init(repo: report.id, type: report.type, commit: revision.commit, freedBytes: freed))
            }
            result.freedBytes += plan.freedBytes
            if !dryRun { _ = try await delete(plan, of: id, type: type) }
        }
        for partial in scan?.incompleteDownloads ?? [] {
            guard let found = Self.removablePartial(partial, olderThan: threshold, now: now, dryRun: dryRun, in: cache)
            else {
                result.partialDownloadsKept += 1
                continue
            }
            result.partialDownloads.append(found)
            result.freedBytes += found.sizeOnDisk
        }
        return result
    }

    /// The partial download, removed unless `dryRun`, when it is old enough and no process holds its lock
    /// (`.locks/<repo>/<etag>.lock`, which ModelDepot and Python both take while writing it); nil otherwise.
    static func removablePartial(
        _ partial: IncompleteDownload, olderThan threshold: Double, now: Date, dryRun: Bool, in cache: HubCache
    ) -> DetachedPrune.PartialDownload? {
        let record = partial.path + ".json"
        let modified = [partial.path, record].compactMap { FileStatus(path: $0)?.modifiedNanoseconds }.max() ?? 0
        let date = Date(timeIntervalSince1970: Double(modified) / 1e9)
        guard now.timeIntervalSince(date) >= threshold else { return nil }
        // Ours: `<etag>.incomplete`; Python's: `<etag>.<8 hex>.incomplete`. Either way the etag comes first.
        let name = (partial.path as NSString).lastPathComponent
        let folder = ((partial.path as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        guard let etag = name.split(separator: ".").first.map(String.init),
            let (type, repo) = RepoID.fromCacheFolderName((folder as NSString).lastPathComponent)
        else { return nil }
        let lockPath = cache.repository(repo, type: type).lockFile(etag).path
        try? FileManager.default.createDirectory(
            atPath: (lockPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        guard let lock = try? FileLock.attempt(path: lockPath) else { return nil }
        defer { lock.release(keepingFile: true) }
        if !dryRun {
            try? FileManager.default.removeItem(atPath: partial.path)
            try? FileManager.default.removeItem(atPath: record)
        }
        return .init(
            repo: partial.repo, type: type.rawValue, path: partial.path, sizeOnDisk: partial.sizeOnDisk, modified: date)
    }
}
