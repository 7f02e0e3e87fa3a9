import Foundation
import ModelDepotCore
import ModelDepotTrust

/// What to pull: a repository, a revision, and which of its files.
public struct SnapshotRequest: Sendable, Hashable {
    /// The repository to pull.
    public var repo: RepoID
    /// Whether it is a model, dataset or space repository.
    public var type: RepoType
    /// A branch, tag or 40-hex commit; `main` by default.
    public var revision: String
    /// Which files of the revision to pull.
    public var selection: FileSelection
    /// Files or folders of the repository to pull, when the request names them (as `hf download REPO FILE…`):
    /// a name that is a file selects it, a name that is a folder selects every file under it, and a name that
    /// is neither fails the pull. The patterns apply on top.
    public var files: [String]?
    /// Fetch the selected files again even when they are cached (`hf download --force-download`); each new
    /// blob replaces the old one in one rename.
    public var forceDownload: Bool
    /// When set, the files go into this plain folder instead of the cache (`hf download --local-dir`), with
    /// huggingface_hub's metadata beside them; files it already holds for this commit or etag are kept.
    public var localDirectory: LocalDirectory?
    /// Whether files the endpoint stores in Xet come through Xet (``XetMode``; `modeldepot pull --xet`).
    public var xet: XetMode = .auto

    /// A request for the files of `repo` at `revision` that match `include` and not `exclude` (all when empty).
    ///
    /// - Parameters:
    ///   - repo: the repository.
    ///   - type: model, dataset or space.
    ///   - revision: a branch, tag or 40-hex commit.
    ///   - include: globs a file must match one of (every file when empty).
    ///   - exclude: globs that drop a file even when it matches `include`.
    ///   - files: when given, only these files or folders of the repository (as `hf download REPO FILE…`); each
    ///     must exist at the revision.
    ///   - forceDownload: fetch the files again even when cached.
    ///   - localDirectory: a plain folder to download into instead of the cache.
    public init(
        repo: RepoID, type: RepoType = .model, revision: String = "main", include: [String] = [],
        exclude: [String] = [], files: [String]? = nil, forceDownload: Bool = false,
        localDirectory: LocalDirectory? = nil
    ) {
        self.repo = repo
        self.type = type
        self.revision = revision
        self.selection = FileSelection(include: include, exclude: exclude)
        self.files = files
        self.forceDownload = forceDownload
        self.localDirectory = localDirectory
    }
}

/// Whether a pull fetches through Xet the files the endpoint offers that way (the listing gives their `xetHash`).
public enum XetMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Through Xet where offered; by HTTP otherwise, and by HTTP again when Xet fails (said once per pull).
    case auto
    /// Always by HTTP.
    case never
    /// Through Xet where offered, and a Xet failure fails the pull; files not offered through Xet go by HTTP.
    case always
}
