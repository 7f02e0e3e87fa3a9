import Foundation
import Logging
import ModelDepotCore
import ModelDepotHub
import ModelDepotPlatform
import Synchronization

/// Serves `root/<org>/<name>/` folders as repositories of one type (models, or datasets for a dataset root)
/// whose files are the folder's files.
///
/// Nothing outside the root is ever listed or served, whatever links point where: an organization, a
/// repository or a file that is a link is followed only when its real path is a visible entry inside the root
/// (``ServedFolder``); hidden files and folders (`.git`, `.env`, the state folder) are never reached, not even
/// through a link. Each repository has one branch, `main`, whose commit id is derived from the content; when
/// the content changes the id changes, and the old id answers `RevisionNotFound`.
///
/// A listing walks the whole repository folder. A file request at a commit id (what clients send once they have
/// resolved `main`) instead reuses the last walk of that commit when the requested file's `lstat` still matches
/// it: a pull of many small files costs one walk, not one per file.
struct FolderRepositorySource: RepositorySource {
    let root: ServedFolder
    let index: HashIndex
    let type: RepoType
    /// The last walk of each repository.
    private let lastWalks = LastWalks()
    /// Files at least this large are served as LFS files (SHA-256 etag), as are typical weight formats.
    static let lfsThreshold: Int64 = 10 << 20
    static let lfsExtensions: Set<String> = [
        "gguf", "safetensors", "bin", "pt", "pth", "ckpt", "onnx", "h5", "msgpack", "tflite", "npz", "npy",
        "mlmodel", "weight", "zip", "tar", "gz", "pkl", "ot", "model", "mlpackage",
    ]

    init(root: URL, index: HashIndex, type: RepoType = .model, logger: Logger) {
        self.root = ServedFolder(root, logger: logger)
        self.index = index
        self.type = type
    }

    func repositories() throws -> [(RepoType, RepoID)] {
        var result: [(RepoType, RepoID)] = []
        for org in visibleEntries(of: root.realPath) {
            guard let orgPath = servableFolder(org, in: root.realPath, shownAs: org.name, depth: 1) else { continue }
            for repo in visibleEntries(of: orgPath) {
                let shown = "\(org.name)/\(repo.name)"
                guard servableFolder(repo, in: orgPath, shownAs: shown, depth: 2) != nil,
                    let id = try? RepoID(shown)
                else { continue }
                result.append((type, id))
            }
        }
        return result.sorted { $0.1 < $1.1 }
    }

    func snapshot(type: RepoType, id: RepoID, revision: String?) async throws -> RepoSnapshot? {
        guard type == self.type, let namespace = id.namespace,
            !namespace.hasPrefix("."), !id.name.hasPrefix("."),
            let folder = root.servablePath(
                root.realPath + "/" + namespace + "/" + id.name, minimumDepth: 2, shownAs: id.description),
            FileStatus(path: folder)?.kind == .folder
        else { return nil }
        var files: [ServedFile] = []
        var visited: Set<String> = [folder]
        try await collect(folder: folder, prefix: "", visited: &visited, into: &files)
        index.save()
        files.sort { $0.path < $1.path }
        let commit = RepoSnapshot.commitID(for: files)
        let snapshot = RepoSnapshot(type: type, id: id, commit: commit, files: files, branches: ["main"])
        lastWalks.walks.withLock { $0[id] = snapshot }
        if let revision, revision != "main", revision != commit {
            throw HubServerError.revisionNotFound(id: id, revision: revision)
        }
        return snapshot
    }

    func snapshot(type: RepoType, id: RepoID, revision: String?, serving path: String) async throws -> RepoSnapshot? {
        // Only a commit id can be answered from memory: `main` may have moved since, by any file changing.
        if type == self.type, let revision, HubEncoding.isGitID(revision),
            let remembered = lastWalks.walks.withLock({ $0[id] }), remembered.commit == revision,
            let file = remembered.file(at: path), let stamp = file.stamp,
            let status = FileStatus(path: file.diskPath, followingLinks: false), status.kind == .file,
            FileStamp(status) == stamp
        {
            return remembered
        }
        return try await snapshot(type: type, id: id, revision: revision)
    }

    /// Walks a repository folder (given by its real path) with one `readdir` per folder and one `stat` per
    /// file: this runs on every request, so it must stay cheap. Only links cost a `realpath` each; `visited`
    /// holds the real folders on the way down, so a link to a folder above it cannot loop.
    private func collect(
        folder: String, prefix: String, visited: inout Set<String>, into files: inout [ServedFile]
    ) async throws {
        for entry in visibleEntries(of: folder) {
            let relative = prefix.isEmpty ? entry.name : prefix + "/" + entry.name
            var diskPath = folder + "/" + entry.name
            switch entry.kind {
            case .folder, .file: break
            case .link:
                guard let resolved = root.servablePath(diskPath, minimumDepth: 3, shownAs: relativeToRoot(diskPath))
                else { continue }
                diskPath = resolved
            case .other: continue
            }
            guard let status = FileStatus(path: diskPath) else { continue }
            if status.kind == .folder {
                guard visited.insert(diskPath).inserted else { continue }
                try await collect(folder: diskPath, prefix: relative, visited: &visited, into: &files)
                visited.remove(diskPath)
                continue
            }
            guard status.kind == .file, let path = try? RepoFilePath(relative) else { continue }
            let size = status.size
            let modified = status.modifiedNanoseconds
            let lfs =
                size >= Self.lfsThreshold
                || Self.lfsExtensions.contains(
                    (entry.name as NSString).pathExtension.lowercased())
            let digests = try await index.digests(
                ofFileAt: diskPath, size: size, modifiedNanoseconds: modified, inode: status.inode, lfs: lfs)
            files.append(
                ServedFile(
                    path: path, diskPath: diskPath, size: size,
                    modified: Date(timeIntervalSince1970: Double(modified) / 1e9), gitOID: digests.gitOID,
                    sha256: digests.sha256, stamp: FileStamp(status)))
        }
    }

    /// An organization or repository folder's real path: itself, or where its link leads when that is a visible
    /// folder inside the root.
    private func servableFolder(_ entry: DirectoryEntry, in parent: String, shownAs: String, depth: Int) -> String? {
        let path = parent + "/" + entry.name
        switch entry.kind {
        case .folder: return path
        case .link:
            guard let real = root.servablePath(path, minimumDepth: depth, shownAs: shownAs),
                FileStatus(path: real)?.kind == .folder
            else { return nil }
            return real
        case .file, .other: return nil
        }
    }

    private func relativeToRoot(_ path: String) -> String {
        root.componentsBelow(path).map { $0.joined(separator: "/") } ?? path
    }

    private func visibleEntries(of folder: String) -> [DirectoryEntry] {
        Directory.entries(folder).filter { !$0.name.hasPrefix(".") }.sorted { $0.name < $1.name }
    }
}

/// The last walk of each repository a ``FolderRepositorySource`` serves, by repository id.
private final class LastWalks: Sendable {
    let walks = Mutex<[RepoID: RepoSnapshot]>([:])
}
