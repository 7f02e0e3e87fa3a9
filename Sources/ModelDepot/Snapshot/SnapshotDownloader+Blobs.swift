import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer
import ModelDepotTrust

extension SnapshotDownloader {
    /// Downloads one file into its blob and, `linking`, links it; returns the bytes received from the network and
    /// the blob's name.
    func fetch(
        _ path: RepoFilePath, commit: String, file: RecordedTree.File, _ request: SnapshotRequest,
        _ repository: CachedRepository, _ engine: Downloader, _ tracker: SnapshotProgressTracker, linking: Bool
    ) async throws -> (bytes: Int64, etag: String) {
        do {
            let received = try await fetchBlob(
                path, commit: commit, file: file, request, repository, engine, tracker, linking: linking)
            tracker.fileFinished(path.value, size: file.size)
            return received
        } catch let error as ModelDepotError {
            tracker.fileAbandoned(path.value)
            throw Self.naming(path, in: error)
        }
    }

    /// Pulls one file of `repo` at `commit`, as the listing `file` describes it, into its blob and links it —
    /// one file of ``download(_:progress:)``, for a mirror that fetches what its clients ask for.
    ///
    /// - Parameter onDisk: told the byte ranges of the partial blob (`blobs/<etag>.incomplete`) written so far,
    ///   after every write: what a mirror may already serve of it.
    /// - Returns: the bytes received from the network (0 when the blob was already there).
    package func pullFile(
        _ path: RepoFilePath, of repo: RepoID, type: RepoType, commit: String, file: RecordedTree.File,
        onDisk: @escaping @Sendable (ByteRangeSet) -> Void
    ) async throws -> Int64 {
        let request = SnapshotRequest(repo: repo, type: type, revision: commit)
        let tracker = SnapshotProgressTracker(
            clock: EngineClock(clock), interval: downloader.configuration.progressInterval, report: { _ in })
        return try await fetchBlob(
            path, commit: commit, file: file, request, cache.repository(repo, type: type), downloader, tracker,
            linking: true, onDisk: onDisk
        ).bytes
    }

    func fetchBlob(
        _ path: RepoFilePath, commit: String, file: RecordedTree.File, _ request: SnapshotRequest,
        _ repository: CachedRepository, _ engine: Downloader, _ tracker: SnapshotProgressTracker, linking: Bool,
        onDisk: (@Sendable (ByteRangeSet) -> Void)? = nil
    ) async throws -> (bytes: Int64, etag: String) {
        let etag: String
        let expectedSize: Int64
        if Self.treeSettles(file) {
            // The listing already names the blob and its size, and the download verifies the content against
            // that name: a HEAD would only say it again (one round trip per file, most of a small file's cost).
            etag = file.etag
            expectedSize = file.size
        } else {
            switch try await hub.lookUpFile(request.repo, type: request.type, revision: commit, path: path) {
            case .found(let metadata):
                etag = metadata.etag
                expectedSize = metadata.size ?? file.size
            case .missing(let reportedCommit, let error):
                repository.markMissing(path, commit: reportedCommit ?? commit)
                throw error
            }
        }
        let blob = repository.blob(etag)
        if !request.forceDownload, CacheScanner.regularFileSize(blob.path) == expectedSize {
            if linking { try repository.link(path, commit: commit, toBlob: etag) }
            return (0, etag)
        }
        let lock = repository.lockFile(etag)
        try HubCache.createFolder(lock.deletingLastPathComponent())
        let partial = repository.partialBlob(etag)
        // The resolve URL at the commit is stable across runs (a CDN's signed URL is not), so it keys the resume
        // sidecar; the engine follows the redirect itself and drops the token when it leaves the origin.
        let result = try await downloadFromFirstThatAnswers(
            path, of: request, commit: commit, etag: etag, size: expectedSize, engine: engine, tracker: tracker,
            onDisk: onDisk
        ) { url, headers in
            var download = DownloadRequest(
                url: url, destination: blob,
                expectedSHA256: HubEncoding.isSHA256(etag) ? etag : nil,
                expectedSize: expectedSize,
                expectedGitBlobID: HubEncoding.isGitID(etag) ? etag : nil,
                headers: headers
            ).placingWorkFiles(partial: partial.path, resumeRecord: partial.path + ".json", sharedLock: lock.path)
            download.replacesExisting = request.forceDownload
            return download
        }
        if linking { try repository.link(path, commit: commit, toBlob: etag) }
        if HubEncoding.isSHA256(etag) || HubEncoding.isGitID(etag) { tracker.verified(blob.path) }
        return (result.bytesReceived, etag)
    }

    /// Whether the commit's listing alone names a file's blob and size: a SHA-256 for an LFS file, a git blob id
    /// for the others — the two names the download verifies content against. Anything else (a listing from a
    /// server that names blobs otherwise) is asked with a HEAD, as Python asks for every file.
    static func treeSettles(_ file: RecordedTree.File) -> Bool {
        if let sha256 = file.lfsSHA256 { return HubEncoding.isSHA256(sha256) }
        return HubEncoding.isGitID(file.blobID)
    }

    /// Where a file's partial blob would be (its space is already allocated when it exists).
    func partialPath(of path: RepoFilePath, in tree: RecordedTree, _ repository: CachedRepository) -> String {
        repository.partialBlob(tree.files[path]?.etag ?? "-").path
    }
}
