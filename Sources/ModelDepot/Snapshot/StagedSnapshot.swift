import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotTrust

/// A pull whose files are downloaded and verified into `blobs/` but not yet visible: no snapshot link, ref or tree
/// was written for them, so `modeldepot path`, readiness checks and Python's huggingface_hub (online or offline)
/// still see the cache exactly as it was before the pull.
///
/// ``ModelManager/publish(_:)`` makes it the revision's snapshot once whatever must hold has been checked (a
/// signature, a lock). One never published leaves only blobs no snapshot refers to, which `prune` removes.
///
/// ```swift
/// let staged = try await models.stage(SnapshotRequest(repo: try RepoID("acme/tiny")))
/// for path in staged.files { try check(staged.url(of: path)) }  // the verified bytes, wherever they are
/// let snapshot = try await models.publish(staged)
/// ```
public struct StagedSnapshot: Sendable {
    /// What was pulled; its revision is the ref ``ModelManager/publish(_:)`` points at the commit.
    public package(set) var request: SnapshotRequest
    /// The commit the revision resolved to.
    public package(set) var commit: String
    /// The commit's files as listed, recorded when published; nil when the cache answered without a recorded tree.
    var tree: RecordedTree?
    /// Where each selected file's verified bytes are: a blob, or the snapshot's own file when it was already there.
    var locations: [RepoFilePath: URL]
    /// The blob each staged file is to be linked to (files the snapshot already held are not listed).
    var blobs: [RepoFilePath: String]
    /// Files fetched by the pull (the others were cached already).
    public var filesDownloaded: Int
    /// Bytes received from the network by the pull.
    public var bytesDownloaded: Int64
    /// Why the Hub was not asked; the cached snapshot is then the answer, already published as it was.
    public var answeredFromCacheBecause: String?

    /// The selected files.
    public var files: [RepoFilePath] { locations.keys.sorted() }

    /// Where the verified bytes of `path` are now (a blob until published).
    public func url(of path: RepoFilePath) -> URL? { locations[path] }

    /// The commit's file listing, when the pull had one: what a check holds the files to (files not pulled count).
    package var recordedTree: RecordedTree? { tree }

    /// This pull and `other` (another selection at the same commit) published together, `other`'s files added.
    ///
    /// - Throws: `invalidArgument` when the two are of different repositories or commits.
    public func adding(_ other: StagedSnapshot) throws -> StagedSnapshot {
        guard other.request.repo == request.repo, other.request.type == request.type, other.commit == commit else {
            throw ModelDepotError(
                .invalidArgument,
                "Cannot publish \(other.request.repo)@\(other.commit.prefix(12)) together with \(request.repo)@\(commit.prefix(12)): they are different snapshots."
            )
        }
        var merged = self
        merged.locations.merge(other.locations) { _, new in new }
        merged.blobs.merge(other.blobs) { _, new in new }
        merged.tree = tree ?? other.tree
        merged.filesDownloaded += other.filesDownloaded
        merged.bytesDownloaded += other.bytesDownloaded
        // Answered from the cache only when both were: if either reached the Hub, its files are to be published.
        merged.answeredFromCacheBecause =
            other.answeredFromCacheBecause == nil ? nil : answeredFromCacheBecause
        return merged
    }
}
