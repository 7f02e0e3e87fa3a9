import Foundation
import ModelDepotCore

/// What a Hub cache holds, counted the way Python's `scan_cache_dir` counts (the protocol note, §4.6): a
/// file's size is its blob's, each blob counts once per repository, symlinks and folders count nothing.
public struct CacheReport: Sendable {
    /// The cache folder scanned.
    public var root: URL
    /// Every repository found, whoever downloaded it.
    public var repositories: [CachedRepositoryReport]
    /// Unfinished downloads (`<repo>/blobs/*.incomplete`), not part of any snapshot.
    public var incompleteDownloads: [IncompleteDownload]
    /// Folders that are not valid cached repositories, with the reason (Python reports the same as warnings).
    public var warnings: [String]

    /// Bytes on disk over the whole cache, each blob counted once.
    public var sizeOnDisk: Int64

    /// The report for one repository, if it is cached.
    public func repository(_ id: RepoID, type: RepoType = .model) -> CachedRepositoryReport? {
        repositories.first { $0.id == id.description && $0.type == type.rawValue }
    }
}

/// One cached repository. Its JSON form has exactly the keys `modeldepot ls --json` documents.
public struct CachedRepositoryReport: Sendable, Encodable {
    /// The repository id as its folder names it.
    public var id: String
    /// `model`, `dataset` or `space`.
    public var type: String
    /// Distinct blobs referenced by any snapshot, in bytes.
    public var sizeOnDisk: Int64
    /// Distinct blobs referenced by any snapshot.
    public var files: Int
    /// Every cached revision.
    public var revisions: [CachedRevisionReport]
    /// Newest access / modification time of its blobs (of the folder when it has none).
    public var lastAccessed: Date
    /// When a file of the repository last changed.
    public var lastModified: Date
    /// `<cache>/models--org--name`.
    public var folder: URL

    enum CodingKeys: String, CodingKey {
        case id, type, sizeOnDisk, files, revisions, lastAccessed, lastModified
    }

    /// The id, parsed.
    public var repoID: RepoID? { try? RepoID(id) }
    /// The type, parsed.
    public var repoType: RepoType? { RepoType(rawValue: type) }
}

/// One cached revision (a snapshot folder).
public struct CachedRevisionReport: Sendable, Encodable {
    /// The commit the snapshot folder is named after.
    public var commit: String
    /// Branches and tags pointing at this commit (`refs/…` names).
    public var refs: [String]
    /// Bytes the revision's blobs take.
    public var sizeOnDisk: Int64
    /// Files in the snapshot.
    public var files: Int
    /// When a file of the snapshot last changed.
    public var lastModified: Date
    /// Each file of the snapshot and the blob it resolves to (one symlink hop, as Python reads it).
    public var entries: [CachedFileEntry]

    enum CodingKeys: String, CodingKey {
        case commit, refs, sizeOnDisk, files, lastModified
    }
}

/// One file of a snapshot.
public struct CachedFileEntry: Sendable, Hashable {
    /// The path in the repository.
    public var path: String
    /// The blob: the link's target made absolute, or the file itself in a cache without symlinks.
    public var blob: String
    /// The file's size in bytes.
    public var size: Int64
}

/// A partial blob left by an interrupted download.
public struct IncompleteDownload: Sendable, Encodable {
    /// The repository id.
    public var repo: String
    /// The partial blob's path.
    public var path: String
    /// Bytes the file takes (ModelDepot preallocates, so this can be the full size).
    public var sizeOnDisk: Int64
    /// Bytes really downloaded, from ModelDepot's resume record; nil for other tools' partial files.
    public var bytesDownloaded: Int64?
}
