import Crypto
import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotPlatform
import ModelDepotTransfer

/// One file of a served repository.
struct ServedFile: Sendable, Equatable {
    let path: RepoFilePath
    /// Absolute path on disk.
    let diskPath: String
    let size: Int64
    let modified: Date
    /// Git blob id: of the content for regular files, of the LFS pointer for LFS files (as git stores them).
    let gitOID: String
    /// SHA-256 of the content, for LFS files.
    let sha256: String?
    /// What `stat` said of the file on disk when it was listed, for sources that check a remembered listing
    /// against the disk (``FolderRepositorySource``); nil where nobody does.
    var stamp: FileStamp? = nil

    var isLFS: Bool { sha256 != nil }
    /// The blob name clients cache it under: SHA-256 for LFS files, git blob id otherwise.
    var etag: String { sha256 ?? gitOID }
    var pointerSize: Int { GitBlob.lfsPointer(sha256: sha256 ?? "", size: size).utf8.count }
}

/// A file's (or folder's) size, modification and status-change times and inode: when all are unchanged, so is
/// what was read of it. The status-change time catches a copy that sets the old modification time back
/// (`cp -p`, `rsync -t` in place), which the modification time alone would miss.
struct FileStamp: Sendable, Equatable {
    let size: Int64
    let modifiedNanoseconds: Int64
    let changedNanoseconds: Int64
    let inode: UInt64

    init(_ status: FileStatus) {
        size = status.size
        modifiedNanoseconds = status.modifiedNanoseconds
        changedNanoseconds = status.changedNanoseconds
        inode = status.inode
    }

    /// The later of the two times: what says how recently the entry changed.
    var latestChange: Int64 { max(modifiedNanoseconds, changedNanoseconds) }
}

/// A repository at one commit, as the mirror serves it. A value, whose unchanging part is one shared object: every
/// request copies the snapshot it answers from, and a copy costs one reference count, not one per field.
struct RepoSnapshot: Sendable {
    private final class Core: Sendable {
        let type: RepoType
        let id: RepoID
        let commit: String
        let files: [ServedFile]
        let branches: [String]
        let positions: [String: Int]
        let rendered = RenderedAnswers()

        init(type: RepoType, id: RepoID, commit: String, files: [ServedFile], branches: [String]) {
            self.type = type
            self.id = id
            self.commit = commit
            self.files = files
            self.branches = branches
            positions = Dictionary(
                files.enumerated().map { ($1.path.value, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    private let core: Core
    var type: RepoType { core.type }
    var id: RepoID { core.id }
    var commit: String { core.commit }
    /// Sorted by path.
    var files: [ServedFile] { core.files }
    /// Branch and tag names that point at this commit (`main` for folder repos).
    var branches: [String] { core.branches }
    /// Set when the answer may be out of date because the upstream could not be asked: clients get a `Warning`.
    var staleBecause: String? = nil
    /// The pull-through source the snapshot came from, which fetches files the cache lacks; nil for local sources.
    var pullThrough: PullThroughSource? = nil
    /// Bodies rendered from this snapshot, shared by its copies.
    var rendered: RenderedAnswers { core.rendered }

    init(type: RepoType, id: RepoID, commit: String, files: [ServedFile], branches: [String]) {
        core = Core(type: type, id: id, commit: commit, files: files, branches: branches)
    }

    var lastModified: Date { files.map(\.modified).max() ?? Date(timeIntervalSince1970: 0) }

    /// The file at `path`; positions by path let a repository of thousands of files answer without a scan.
    func file(at path: String) -> ServedFile? { core.positions[path].map { core.files[$0] } }

    /// The commits that lead to this snapshot, newest first: the upstream's history when pulling through, else
    /// the one commit the mirror knows.
    func history() async throws -> [RepoCommit] {
        guard let pullThrough else { return [knownCommit] }
        return try await pullThrough.commits(of: self)
    }

    /// The snapshot's commit as a history of one: a folder has no history, and a cache keeps only the commit id.
    var knownCommit: RepoCommit {
        RepoCommit(
            id: commit, title: "Files as this mirror serves them", message: "", authors: [],
            date: HubJSON.timestamp(lastModified))
    }

    /// A commit id derived from the content only: the same files give the same id on any machine.
    static func commitID(for files: [ServedFile]) -> String {
        var sha = Insecure.SHA1()
        for file in files.sorted(by: { $0.path < $1.path }) {
            sha.update(data: Array("\(file.path.value)\0\(file.etag)\n".utf8))
        }
        return sha.finalize().hexString
    }
}

/// Where the mirror's repositories come from.
protocol RepositorySource: Sendable {
    /// Every repository this source serves.
    func repositories() throws -> [(RepoType, RepoID)]
    /// The repository at `revision` (its default branch when nil); nil when the repository does not exist.
    /// Throws `RevisionNotFound` (as ``HubServerError``) when the repository exists but the revision does not.
    func snapshot(type: RepoType, id: RepoID, revision: String?) async throws -> RepoSnapshot?
    /// The repository at `revision` for serving the file at `path`: what ``snapshot(type:id:revision:)`` gives,
    /// or a remembered listing when the source can show that nothing the answer depends on has changed.
    func snapshot(type: RepoType, id: RepoID, revision: String?, serving path: String) async throws -> RepoSnapshot?
    /// The repository's default branch from what is at hand, never asking an upstream: for routes that look
    /// through every repository (blobs by SHA-256, search), which must not cost an upstream call per repository.
    func recordedSnapshot(type: RepoType, id: RepoID) async throws -> RepoSnapshot?
    /// What the upstream finds for a search, when the source pulls through (nil otherwise, or when the upstream
    /// cannot be asked): the search then reaches beyond what the mirror holds.
    func upstreamSearch(type: RepoType, text: String?, author: String?, limit: Int) async -> [[String: Any]]?
    /// The Hub cache a repository is served from and the Hub its files came from, for answers made from the cached
    /// bytes themselves (a bill of materials); nil when it is served from a folder of plain files, or not at all.
    func servedCache(type: RepoType, id: RepoID) async throws -> (cache: HubCache, origin: URL)?
}

extension RepositorySource {

    func snapshot(type: RepoType, id: RepoID, revision: String?, serving path: String) async throws -> RepoSnapshot? {
        try await snapshot(type: type, id: id, revision: revision)
    }

    func recordedSnapshot(type: RepoType, id: RepoID) async throws -> RepoSnapshot? {
        try await snapshot(type: type, id: id, revision: nil)
    }

    func upstreamSearch(type: RepoType, text: String?, author: String?, limit: Int) async -> [[String: Any]]? { nil }

    func servedCache(type: RepoType, id: RepoID) async throws -> (cache: HubCache, origin: URL)? { nil }
}
