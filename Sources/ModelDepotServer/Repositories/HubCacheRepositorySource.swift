import Foundation
import Logging
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotPlatform
import ModelDepotTransfer

/// Serves the repositories of a Hub cache (ours or Python's) with their real commit ids, and every ref
/// (branch or tag) as a revision.
///
/// Snapshot entries are followed one hop into the repository's `blobs/`, whose file names are the ETags
/// clients cached them under: 64 hex (SHA-256, an LFS file) or 40 hex (git blob id). Entries that are real
/// files (symlink-less caches) are hashed through the ``HashIndex``. A link is followed only when its real
/// path stays inside the repository's own folder, itself inside the cache, and passes through no hidden
/// folder (``ServedFolder``). A snapshot that holds only some files serves those.
struct HubCacheRepositorySource: RepositorySource {
    let root: ServedFolder
    let index: HashIndex

    var cache: URL { URL(fileURLWithPath: root.realPath, isDirectory: true) }

    /// A cache filled by anyone: where its files came from is not recorded, so the bill names the public Hub, as a
    /// client with default settings would.
    func servedCache(type: RepoType, id: RepoID) -> (cache: HubCache, origin: URL)? {
        let cache = HubCache(root: cache)
        // As `snapshot` claims a repository: a real folder (not a link) with snapshots in it.
        let repository = cache.repository(id, type: type)
        guard FileStatus(path: repository.folder.path, followingLinks: false)?.kind == .folder,
            FileStatus(path: repository.folder.appendingPathComponent("snapshots").path)?.kind == .folder
        else { return nil }
        return (cache, URL(string: "https://huggingface.co")!)
    }

    init(cache: URL, index: HashIndex, logger: Logger) {
        self.root = ServedFolder(cache, logger: logger)
        self.index = index
    }

    func repositories() throws -> [(RepoType, RepoID)] { repositories(holding: "snapshots") }

    /// The cache's repositories that have `entry` (`snapshots` for files, `refs` for resolved revisions).
    func repositories(holding entry: String) -> [(RepoType, RepoID)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cache.path)) ?? []
        return names.compactMap { name -> (RepoType, RepoID)? in
            guard let parsed = RepoID.fromCacheFolderName(name),
                root.servablePath(cache.appendingPathComponent(name).path, minimumDepth: 1, shownAs: name) != nil,
                FileManager.default.fileExists(
                    atPath: cache.appendingPathComponent(name).appendingPathComponent(entry).path)
            else { return nil }
            return parsed
        }.sorted { ($0.0.rawValue, $0.1) < ($1.0.rawValue, $1.1) }
    }

    func snapshot(type: RepoType, id: RepoID, revision: String?) async throws -> RepoSnapshot? {
        let name = id.cacheFolderName(type: type)
        guard let real = root.servablePath(cache.appendingPathComponent(name).path, minimumDepth: 1, shownAs: name)
        else { return nil }
        let repo = URL(fileURLWithPath: real, isDirectory: true)
        guard FileManager.default.fileExists(atPath: repo.appendingPathComponent("snapshots").path) else { return nil }
        let refs = HubCache(root: cache).repository(id, type: type).refs()
        let wanted = revision ?? "main"
        let commit: String
        if let target = refs[wanted] {
            commit = target
        } else if HubEncoding.isGitID(wanted),
            FileManager.default.fileExists(atPath: repo.appendingPathComponent("snapshots/\(wanted)").path)
        {
            commit = wanted
        } else if revision == nil, let only = snapshotFolders(in: repo), only.count == 1 {
            commit = only[0]
        } else {
            throw HubServerError.revisionNotFound(id: id, revision: wanted)
        }
        let snapshotFolder = repo.appendingPathComponent("snapshots").appendingPathComponent(commit)
        var files: [ServedFile] = []
        try await collect(folder: snapshotFolder, prefix: "", repo: repo, into: &files)
        index.save()
        files.sort { $0.path < $1.path }
        let branches = refs.filter { $0.value == commit }.map(\.key).sorted()
        return RepoSnapshot(type: type, id: id, commit: commit, files: files, branches: branches)
    }

    private func collect(folder: URL, prefix: String, repo: URL, into files: inout [ServedFile]) async throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names.sorted() where name != ".git" {
            let entry = folder.appendingPathComponent(name)
            let relative = prefix.isEmpty ? name : prefix + "/" + name
            guard let real = root.servablePath(entry.path, minimumDepth: 2, shownAs: entry.path),
                root.componentsBelow(real)?.first.map(String.init) == repo.lastPathComponent,
                let status = FileStatus(path: real)
            else { continue }
            let resolved = URL(fileURLWithPath: real)
            if status.kind == .folder {
                try await collect(folder: entry, prefix: relative, repo: repo, into: &files)
                continue
            }
            guard status.kind == .file, let path = try? RepoFilePath(relative) else { continue }
            let size = status.size
            let modifiedNanoseconds = status.modifiedNanoseconds
            let modified = Date(timeIntervalSince1970: Double(modifiedNanoseconds) / 1e9)
            // The first hop of the link names the blob, and so the ETag.
            let blobName = (try? FileManager.default.destinationOfSymbolicLink(atPath: entry.path))
                .map { URL(fileURLWithPath: $0).lastPathComponent }
            if let blobName, HubEncoding.isSHA256(blobName) {
                let pointer = GitBlob.id(of: Array(GitBlob.lfsPointer(sha256: blobName, size: size).utf8))
                files.append(
                    ServedFile(
                        path: path, diskPath: resolved.path, size: size, modified: modified, gitOID: pointer,
                        sha256: blobName))
            } else if let blobName, HubEncoding.isGitID(blobName) {
                files.append(
                    ServedFile(
                        path: path, diskPath: resolved.path, size: size, modified: modified, gitOID: blobName,
                        sha256: nil))
            } else {
                let lfs = size >= FolderRepositorySource.lfsThreshold
                let digests = try await index.digests(
                    ofFileAt: resolved.path, size: size, modifiedNanoseconds: modifiedNanoseconds,
                    inode: status.inode, lfs: lfs)
                files.append(
                    ServedFile(
                        path: path, diskPath: resolved.path, size: size, modified: modified, gitOID: digests.gitOID,
                        sha256: digests.sha256))
            }
        }
    }

    private func snapshotFolders(in repo: URL) -> [String]? {
        try? FileManager.default.contentsOfDirectory(atPath: repo.appendingPathComponent("snapshots").path)
            .filter { HubEncoding.isGitID($0) }
    }
}

/// Serves repositories from several sources; the first that has a repository answers for it.
struct CombinedRepositorySource: RepositorySource {
    let sources: [any RepositorySource]

    func repositories() throws -> [(RepoType, RepoID)] {
        var seen = Set<String>()
        return try sources.flatMap { try $0.repositories() }.filter { seen.insert("\($0.0)/\($0.1)").inserted }
    }

    func snapshot(type: RepoType, id: RepoID, revision: String?) async throws -> RepoSnapshot? {
        for source in sources {
            if let snapshot = try await source.snapshot(type: type, id: id, revision: revision) { return snapshot }
        }
        return nil
    }

    func recordedSnapshot(type: RepoType, id: RepoID) async throws -> RepoSnapshot? {
        for source in sources {
            if let snapshot = try await source.recordedSnapshot(type: type, id: id) { return snapshot }
        }
        return nil
    }

    /// The cache of the first source that has the repository, as ``snapshot(type:id:revision:)`` picks it; nil when
    /// that source is a folder of plain files.
    func servedCache(type: RepoType, id: RepoID) async throws -> (cache: HubCache, origin: URL)? {
        for source in sources {
            if let found = try await source.servedCache(type: type, id: id) { return found }
            if try await source.recordedSnapshot(type: type, id: id) != nil { return nil }
        }
        return nil
    }

    func upstreamSearch(type: RepoType, text: String?, author: String?, limit: Int) async -> [[String: Any]]? {
        for source in sources {
            if let found = await source.upstreamSearch(type: type, text: text, author: author, limit: limit) {
                return found
            }
        }
        return nil
    }
}
