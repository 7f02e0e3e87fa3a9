import Foundation
import Logging
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust
import Synchronization

// The pull into a plain folder (`--local-dir`): the planner and the queue of a pull into the cache, a folder as
// the destination.
extension SnapshotDownloader {
    /// ``download(_:progress:)`` into a plain folder: the same resolution, listing, selection and verified,
    /// resumable transfers, but each file lands at `DIR/<path>` with its metadata, and the cache is not touched.
    func download(
        _ request: SnapshotRequest, into directory: LocalDirectory,
        progress: @escaping @Sendable (SnapshotProgress) -> Void
    ) async throws -> Snapshot {
        if hub.isOffline {
            // As huggingface_hub does: offline, a folder that holds files is the answer, as it is.
            let files = CacheScanner.repositoryFiles(below: directory.root).filter {
                !$0.value.hasPrefix(".cache/huggingface/")
            }
            guard !files.isEmpty else {
                throw ModelDepotError(
                    .notCached,
                    "\(directory.root.path) holds no files of \(request.repo), and offline mode is on. Pull it while online."
                )
            }
            var snapshot = Snapshot(
                repo: request.repo, type: request.type, commit: directory.trustedMetadata(files[0])?.commit ?? "",
                folder: directory.root, files: files)
            snapshot.answeredFromCacheBecause = "offline mode is on"
            return snapshot
        }
        let tracker = SnapshotProgressTracker(
            clock: EngineClock(clock), interval: downloader.configuration.progressInterval, report: progress)
        tracker.start(endpoint: TransportFailure.serverName(hub.endpoint))
        let observed = hub.observingWaits { tracker.apiWaiting($0) }
        let commit = try await resolveCommit(request, hub: observed)
        let entries = try await observed.listFiles(request.repo, type: request.type, revision: commit)
        let tree = try RecordedTree(entries: entries)
        let selected = try PullPlanner.select(request, from: tree)
        for path in selected { try LocalDirectory.checkNotGit(path) }
        try directory.prepare()
        // Hashes files already in the folder (gigabytes for a re-run): off the cooperative pool.
        let present: Set<RepoFilePath> =
            request.forceDownload
            ? []
            : try await BlockingWork.run {
                Set(selected.filter { self.isUpToDate($0, file: tree.files[$0]!, commit: commit, in: directory) })
            }
        let work = PullPlanner.work(
            for: request, tree: tree, selected: selected, present: present,
            resumable: Set(selected.filter { FileManager.default.fileExists(atPath: directory.partial($0).path) }))
        let missing = work.toFetch
        // A file already there that no pull wrote (no metadata) is the user's: replaced only when asked.
        if !request.forceDownload {
            let theirs = missing.filter {
                FileStatus(path: directory.file($0).path, followingLinks: false) != nil && !directory.isOurs($0)
            }
            if !theirs.isEmpty {
                throw ModelDepotError(
                    .invalidArgument,
                    "\(directory.root.path) already holds \(theirs.map(\.value).sorted().joined(separator: ", ")), which no pull wrote (no metadata in .cache/huggingface/download) and which differ from \(request.repo); pass --force-download to replace them."
                )
            }
        }
        tracker.planned(
            totalBytes: work.totalBytes, totalFiles: selected.count, cachedBytes: work.heldBytes,
            cachedFiles: work.heldFiles)
        try directory.checkSpace(for: work, of: request, using: downloader.fileSystem)
        let received = try await transfer(work) { path, engine in
            try await fetch(
                ListedFile(path, of: request, commit: commit, listing: tree.files[path]!), into: directory,
                engine: engine, tracker: tracker)
        }
        tracker.completed()
        return Snapshot(
            repo: request.repo, type: request.type, commit: commit, folder: directory.root, files: selected,
            filesDownloaded: missing.count, bytesDownloaded: received)
    }
}
