import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer
import ModelDepotTrust

/// One file of a repository at a commit, as the commit's listing describes it: what one fetch step of a pull is
/// asked for, and what a mirror asks ``SnapshotDownloader/pullBlob(_:onDisk:)`` for.
package struct ListedFile: Sendable {
    /// The pull it belongs to (repository, type, whether to fetch again what is cached).
    package var request: SnapshotRequest
    package var commit: String
    package var path: RepoFilePath
    /// The listing's entry: size and blob names.
    package var listing: RecordedTree.File

    package init(_ path: RepoFilePath, of request: SnapshotRequest, commit: String, listing: RecordedTree.File) {
        self.request = request
        self.commit = commit
        self.path = path
        self.listing = listing
    }
}

extension SnapshotDownloader {
    /// Downloads one file into its blob and, `linking`, links it; returns the bytes received from the network and
    /// the blob's name.
    func fetch(
        _ file: ListedFile, into repository: CachedRepository, linking: Bool, engine: Downloader,
        tracker: SnapshotProgressTracker
    ) async throws -> (bytes: Int64, etag: String) {
        do {
            let received = try await fetchBlob(
                file, into: repository, linking: linking, engine: engine, tracker: tracker)
            tracker.fileFinished(file.path.value, size: file.listing.size)
            return received
        } catch let error as ModelDepotError {
            tracker.fileAbandoned(file.path.value)
            throw Self.naming(file.path, in: error)
        }
    }

    /// Pulls one listed file into its blob in the cache and links it — one file of ``download(_:progress:)``, for
    /// a mirror that fetches what its clients ask for.
    ///
    /// - Parameter onDisk: told the byte ranges of the partial blob (`blobs/<etag>.incomplete`) written so far,
    ///   after every write: what a mirror may already serve of it.
    /// - Returns: the bytes received from the network (0 when the blob was already there).
    package func pullBlob(_ file: ListedFile, onDisk: @escaping @Sendable (ByteRangeSet) -> Void) async throws
        -> Int64
    {
        let tracker = SnapshotProgressTracker(
            clock: EngineClock(clock), interval: downloader.configuration.progressInterval, report: { _ in })
        return try await fetchBlob(
            file, into: cache.repository(file.request.repo, type: file.request.type), linking: true,
            engine: downloader, tracker: tracker, onDisk: onDisk
        ).bytes
    }

    func fetchBlob(
        _ listed: ListedFile, into repository: CachedRepository, linking: Bool, engine: Downloader,
        tracker: SnapshotProgressTracker, onDisk: (@Sendable (ByteRangeSet) -> Void)? = nil
    ) async throws -> (bytes: Int64, etag: String) {
        let (path, commit, file, request) = (listed.path, listed.commit, listed.listing, listed.request)
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
        if let received = try await pullThroughXet(
            listed, etag: etag, size: expectedSize, blob: blob, lock: lock, tracker: tracker)
        {
            if linking { try repository.link(path, commit: commit, toBlob: etag) }
            tracker.verified(blob.path)
            return (received, etag)
        }
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
