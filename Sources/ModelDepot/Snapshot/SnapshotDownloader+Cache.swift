import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotHub
import ModelDepotTransfer
import ModelDepotTrust

extension SnapshotDownloader {
    /// The snapshot of `request` as the cache holds it, with no network: Python's offline rules (the protocol
    /// note, §5). The commit is the revision itself or `refs/<revision>`; when `trees/<commit>.json` is
    /// recorded, every selected file must be present.
    package func cachedSnapshot(_ request: SnapshotRequest) throws -> Snapshot {
        let repository = cache.repository(request.repo, type: request.type)
        guard let commit = repository.commit(forRevision: request.revision) else {
            throw ModelDepotError(
                .notCached,
                "\(request.repo) at '\(request.revision)' is not in the cache \(cache.root.path), and the Hub cannot be asked (offline or unreachable). Pull it while online.",
                remedy: .downloadFirst)
        }
        let folder = repository.snapshotFolder(commit)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw ModelDepotError(
                .notCached,
                "\(request.repo) at commit \(commit) is not in the cache \(cache.root.path) (no snapshot folder). Pull it while online.",
                remedy: .downloadFirst)
        }
        let files: [RepoFilePath]
        if let tree = repository.recordedTree(commit) {
            let selected = try PullPlanner.select(request, from: tree)
            let absent = selected.filter { !repository.hasFile($0, commit: commit) }
            guard absent.isEmpty else {
                let names = absent.prefix(10).map(\.value).joined(separator: ", ")
                let more = absent.count > 10 ? " and \(absent.count - 10) more" : ""
                throw ModelDepotError(
                    .incompleteSnapshot,
                    "The cached snapshot of \(request.repo) at \(commit) lacks \(absent.count) of its \(selected.count) selected files: \(names)\(more). Pull it again while online."
                )
            }
            files = selected
        } else {
            files = CacheScanner.repositoryFiles(below: folder).filter { request.selection.selects($0.value) }
        }
        return Snapshot(repo: request.repo, type: request.type, commit: commit, folder: folder, files: files)
    }
}
