import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotPlatform
import ModelDepotTrust

/// A repository's files at one commit, as a pull sees them: what a "browse" screen or `modeldepot info` shows
/// before anything is downloaded.
package struct RepositoryListing: Sendable, Equatable {
    /// One file of the commit.
    package struct File: Sendable, Equatable {
        /// The path inside the repository.
        package var path: String
        /// Its size in bytes (the real file's, for files stored with LFS).
        package var size: Int64
        /// Its SHA-256 when the Hub states it (LFS files).
        package var sha256: String?
    }

    package var repo: RepoID
    package var type: RepoType
    /// The branch, tag or commit that was asked for.
    package var revision: String
    /// The commit `revision` names.
    package var commit: String
    /// Every file of the commit, by path.
    package var files: [File]
    /// Where the list came from: the endpoint's URL, or `cache` when it is the list recorded at pull time.
    package var source: String
}

extension ModelManager {
    /// The files of `repo` at `revision`, resolved and listed the way a pull does it (the same checks: a commit
    /// id names a folder of the cache, so it must be 40 hex digits). Offline, the list recorded in the cache
    /// when it was pulled.
    ///
    /// - Throws: `notCached` offline when nothing was recorded for the revision; the Hub's errors online.
    package nonisolated func listing(
        _ repo: RepoID, type: RepoType = .model, revision: String = "main"
    ) async throws -> RepositoryListing {
        let repository = cache.repository(repo, type: type)
        let commit: String
        let tree: RecordedTree
        let source: String
        if pull.hub.isOffline {
            guard let cached = repository.commit(forRevision: revision), let recorded = repository.recordedTree(cached)
            else {
                throw ModelDepotError(
                    .notCached,
                    "\(repo) at '\(revision)' has no recorded file list in the cache \(cache.root.path); look it up online."
                )
            }
            (commit, tree, source) = (cached, recorded, "cache")
        } else {
            let request = SnapshotRequest(repo: repo, type: type, revision: revision)
            commit = try await pull.resolveCommit(request)
            tree = try await pull.fileTree(request, commit: commit, repository: repository)
            source = pull.hub.endpoint.absoluteString
        }
        let files = tree.files.sorted { $0.key < $1.key }.map {
            RepositoryListing.File(path: $0.key.value, size: $0.value.size, sha256: $0.value.lfsSHA256)
        }
        return RepositoryListing(
            repo: repo, type: type, revision: revision, commit: commit, files: files, source: source)
    }

    /// The types under which `repo` is in the cache: a dataset and a model may share a name, and someone who
    /// asks for the model while only the dataset is cached wants to hear so.
    package nonisolated func cachedTypes(of repo: RepoID) -> [RepoType] {
        RepoType.allCases.filter {
            FileStatus(path: cache.repository(repo, type: $0).folder.path)?.kind == .folder
        }
    }
}
