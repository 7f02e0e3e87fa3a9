import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer
import ModelDepotTrust

/// What a pull would do, worked out without downloading or writing anything (`modeldepot pull --dry-run`):
/// each selected file, whether it is cached, what would be fetched, and the free space left afterwards.
public struct SnapshotPlan: Sendable, Codable, Equatable {
    /// One selected file.
    public struct File: Sendable, Codable, Equatable {
        public var path: String
        public var size: Int64
        /// Whether the cache already holds it at this commit.
        public var cached: Bool
        /// Whether the pull would fetch it (not cached, or a forced download).
        public var willDownload: Bool
    }

    public var repo: String
    public var commit: String
    /// The selected files, by path.
    public var files: [File]
    /// Bytes of every selected file.
    public var totalBytes: Int64
    /// Bytes the pull would fetch (what earlier, interrupted pulls already hold is not subtracted).
    public var downloadBytes: Int64
    /// Free space on the cache's volume now; nil when the volume does not say.
    public var freeBytes: Int64?
    /// Free space after the pull; negative when it would not fit.
    public var freeBytesAfter: Int64? { freeBytes.map { $0 - downloadBytes } }

    private enum CodingKeys: String, CodingKey {
        case repo, commit, files, totalBytes, downloadBytes, freeBytes, freeBytesAfter
    }

    init(repo: String, commit: String, files: [File], freeBytes: Int64?) {
        self.repo = repo
        self.commit = commit
        self.files = files
        totalBytes = files.reduce(0) { $0 + $1.size }
        downloadBytes = files.filter(\.willDownload).reduce(0) { $0 + $1.size }
        self.freeBytes = freeBytes
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            repo: try container.decode(String.self, forKey: .repo),
            commit: try container.decode(String.self, forKey: .commit),
            files: try container.decode([File].self, forKey: .files),
            freeBytes: try container.decodeIfPresent(Int64.self, forKey: .freeBytes))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(repo, forKey: .repo)
        try container.encode(commit, forKey: .commit)
        try container.encode(files, forKey: .files)
        try container.encode(totalBytes, forKey: .totalBytes)
        try container.encode(downloadBytes, forKey: .downloadBytes)
        try container.encodeIfPresent(freeBytes, forKey: .freeBytes)
        try container.encodeIfPresent(freeBytesAfter, forKey: .freeBytesAfter)
    }
}

extension SnapshotDownloader {
    /// What ``download(_:progress:)`` would fetch for `request`, asking the Hub for the commit and its files
    /// (or, offline, reading them from the cache) but writing nothing.
    package func plan(_ request: SnapshotRequest) async throws -> SnapshotPlan {
        try Self.checkRevisionName(request.revision)
        let repository = cache.repository(request.repo, type: request.type)
        let commit: String
        let tree: RecordedTree
        if hub.isOffline, request.localDirectory == nil {
            guard let cached = repository.commit(forRevision: request.revision),
                let recorded = repository.recordedTree(cached)
            else {
                throw ModelDepotError(
                    .notCached,
                    "\(request.repo) at '\(request.revision)' has no recorded file list in the cache \(cache.root.path), and offline mode is on. Plan the pull while online."
                )
            }
            (commit, tree) = (cached, recorded)
        } else {
            commit = try await resolveCommit(request)
            tree = try await fileTree(request, commit: commit, repository: repository)
        }
        let selected = try PullPlanner.select(request, from: tree)
        let (finalCommit, finalTree) = (commit, tree)
        // A local folder's files are hashed to see whether they are current: off the cooperative pool.
        let present = try await BlockingWork.run {
            Set(
                selected.filter { path in
                    request.localDirectory.map {
                        self.isUpToDate(
                            path, file: finalTree.files[path]!, commit: finalCommit, in: $0, recording: false)
                    } ?? repository.hasFile(path, commit: finalCommit)
                })
        }
        return PullPlanner.work(for: request, tree: tree, selected: selected, present: present).report(
            repo: request.repo, commit: commit, present: present,
            freeBytes: StorageBudget(cache: cache).availableSpace(using: downloader.fileSystem))
    }
}
