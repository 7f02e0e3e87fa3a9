import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer
import ModelDepotTrust

extension SnapshotDownloader {
    /// Downloads and verifies what is missing of `request` into `blobs/`, as ``download(_:progress:)`` does, but
    /// writes no snapshot link, ref or tree: the cache looks as it did until ``publish(_:)``. For pulls that must
    /// pass a check first (a signature, a lock), so a refused pull leaves nothing anyone would load.
    ///
    /// Offline, or when the Hub cannot be reached, the cached snapshot is the answer (already published).
    ///
    /// - Throws: `invalidArgument` for a request with a local directory; otherwise what ``download(_:progress:)``
    ///   throws.
    package func stage(
        _ request: SnapshotRequest, progress: @escaping @Sendable (SnapshotProgress) -> Void = { _ in }
    ) async throws -> StagedSnapshot {
        try Self.checkRevisionName(request.revision)
        guard request.localDirectory == nil else {
            throw ModelDepotError(
                .invalidArgument, "A staged pull goes into the cache; \(request.repo) names a local directory.")
        }
        return try await pull(request, publishing: false, progress: progress).staged
    }

    /// Makes a staged pull the snapshot of its revision: records the commit's tree, links every staged file into
    /// `snapshots/<commit>/`, then points `refs/<revision>` at the commit (last, so an interrupted publish leaves
    /// the old revision current). Compiles its Core ML models when the pull has a ``modelCompiler``.
    package func publish(_ staged: StagedSnapshot) async throws -> Snapshot {
        let request = staged.request
        let repository = cache.repository(request.repo, type: request.type)
        let commit = staged.commit
        guard HubEncoding.isGitID(commit) else {
            throw ModelDepotError(.invalidArgument, "'\(commit)' is not a commit id; stage the pull again.")
        }
        // Something may have removed a staged blob since (a delete, a prune): nothing is linked to a blob that is
        // not there.
        for (path, etag) in staged.blobs where !FileManager.default.fileExists(atPath: repository.blob(etag).path) {
            throw ModelDepotError(
                .fileSystem,
                "The staged file \(path) of \(request.repo) is no longer in the cache (deleted or pruned since it was staged); stage the pull again."
            )
        }
        // A snapshot the cache answered with is published already: nothing to link, and no ref to move.
        if staged.answeredFromCacheBecause == nil || !staged.blobs.isEmpty {
            try cache.writeCacheDirectoryTag()
            if let tree = staged.tree, repository.recordedTree(commit) == nil {
                try repository.recordTree(tree, commit: commit)
            }
            try HubCache.createFolder(repository.snapshotFolder(commit))
            for (path, etag) in staged.blobs.sorted(by: { $0.key < $1.key }) {
                try repository.link(path, commit: commit, toBlob: etag)
            }
        }
        if staged.answeredFromCacheBecause == nil { try repository.setRef(request.revision, to: commit) }
        var snapshot = Snapshot(
            repo: request.repo, type: request.type, commit: commit, folder: repository.snapshotFolder(commit),
            files: staged.files, filesDownloaded: staged.filesDownloaded, bytesDownloaded: staged.bytesDownloaded)
        snapshot.answeredFromCacheBecause = staged.answeredFromCacheBecause
        if let modelCompiler {
            let models = CompiledModels.sources(in: staged.files)
            if !models.isEmpty {
                snapshot.compiledModels = try await CompiledModels.compile(
                    models, snapshot: snapshot.folder, repository: repository, commit: commit,
                    compiler: modelCompiler
                ) { _, _, _ in }
            }
        }
        return snapshot
    }
}
