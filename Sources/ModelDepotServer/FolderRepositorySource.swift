import Foundation
import ModelDepot

/// Serves `root/<org>/<name>/` folders as repositories of one type (models, or datasets for a dataset root)
/// whose files are the folder's files.
///
/// Hidden files and folders (`.git`, the state folder) are never listed, nor symbolic links that lead
/// outside the root. Each repository has one branch, `main`, whose commit id is derived from the content;
/// when the content changes the id changes, and the old id answers `RevisionNotFound`.
struct FolderRepositorySource: RepositorySource {
    let root: URL
    let index: HashIndex
    let type: RepoType
    /// Files at least this large are served as LFS files (SHA-256 etag), as are typical weight formats.
    static let lfsThreshold: Int64 = 10 << 20
    static let lfsExtensions: Set<String> = [
        "gguf", "safetensors", "bin", "pt", "pth", "ckpt", "onnx", "h5", "msgpack", "tflite", "npz", "npy",
        "mlmodel", "weight", "zip", "tar", "gz", "pkl", "ot", "model", "mlpackage",
    ]

    init(root: URL, index: HashIndex, type: RepoType = .model) {
        self.root = root.standardizedFileURL.resolvingSymlinksInPath()
        self.index = index
        self.type = type
    }

    func repositories() throws -> [(RepoType, RepoID)] {
        var result: [(RepoType, RepoID)] = []
        for org in try visibleChildren(of: root) where isFolder(org) {
            for repo in try visibleChildren(of: org) where isFolder(repo) {
                if let id = try? RepoID("\(org.lastPathComponent)/\(repo.lastPathComponent)") {
                    result.append((type, id))
                }
            }
        }
        return result.sorted { $0.1 < $1.1 }
    }

    func snapshot(type: RepoType, id: RepoID, revision: String?) async throws -> RepoSnapshot? {
        guard type == self.type, let namespace = id.namespace else { return nil }
        let folder = root.appendingPathComponent(namespace).appendingPathComponent(id.name)
        guard isFolder(folder) else { return nil }
        var files: [ServedFile] = []
        try await collect(folder: folder, prefix: "", into: &files)
        index.save()
        files.sort { $0.path < $1.path }
        let commit = RepoSnapshot.commitID(for: files)
        if let revision, revision != "main", revision != commit {
            throw HubServerError.revisionNotFound(id: id, revision: revision)
        }
        return RepoSnapshot(type: type, id: id, commit: commit, files: files, branches: ["main"])
    }

    /// Walks a repository folder with one `readdir` per folder and one `stat` per file: this runs on every
    /// request, so it must stay cheap. Links are resolved (and must stay inside the root); hidden entries skipped.
    private func collect(folder: URL, prefix: String, into files: inout [ServedFile]) async throws {
        for entry in FolderEntry.list(folder.path).sorted(by: { $0.name < $1.name }) where !entry.name.hasPrefix(".") {
            let child = folder.appendingPathComponent(entry.name)
            let relative = prefix.isEmpty ? entry.name : prefix + "/" + entry.name
            var diskPath = child.path
            var isFolder = entry.kind == .folder
            switch entry.kind {
            case .folder, .file: break
            case .link:
                guard let resolved = insideRoot(child) else { continue }
                diskPath = resolved.path
                isFolder = self.isFolder(resolved)
            case .other: continue
            }
            if isFolder {
                try await collect(folder: child, prefix: relative, into: &files)
                continue
            }
            guard let path = try? RepoFilePath(relative) else { continue }
            var info = stat()
            guard stat(diskPath, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            let size = Int64(info.st_size)
            let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
            let lfs = size >= Self.lfsThreshold || Self.lfsExtensions.contains(child.pathExtension.lowercased())
            let digests = try await index.digests(
                ofFileAt: diskPath, size: size, modifiedNanoseconds: modified, inode: UInt64(info.st_ino), lfs: lfs)
            files.append(
                ServedFile(
                    path: path, diskPath: diskPath, size: size,
                    modified: Date(timeIntervalSince1970: Double(modified) / 1e9), gitOID: digests.gitOID,
                    sha256: digests.sha256))
        }
    }

    func insideRoot(_ url: URL) -> URL? {
        let resolved = url.resolvingSymlinksInPath()
        let rootPath = root.path.hasSuffix("/") ? root.path : root.path + "/"
        return resolved.path.hasPrefix(rootPath) ? resolved : nil
    }

    private func visibleChildren(of folder: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { !$0.hasPrefix(".") }
            .sorted()
            .map { folder.appendingPathComponent($0) }
    }

    private func isFolder(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
