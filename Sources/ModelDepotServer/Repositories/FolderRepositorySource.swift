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
/// A walk of a repository folder is remembered (``FolderWalk``) and reused while a few `stat` calls show that
/// nothing it read has changed, so an API call on an unchanged repository costs no walk, hashing or sorting, and a
/// file added, removed or changed appears in the very next answer. A file request at a commit id (what clients
/// send once they have resolved `main`) is cheaper still: it checks only the requested file's `lstat`. On Linux, a
/// remembered walk the kernel watches (``FolderWalk/Watch``) is checked with one `stat` of the root, a `poll` of the
/// mount table and a `read` of the kernel's change notices, and by `stat` after a notice and at least once a
/// second (``FolderWalk/watchTrust``: stores into a shared mapping of a file send no notice).
struct FolderRepositorySource: RepositorySource {
    let root: ServedFolder
    let index: HashIndex
    let type: RepoType
    /// The last walk of each repository.
    private let lastWalks = LastWalks()
    /// The kernel's notices of changes under the root, where it gives them (the process's watch; a test may give
    /// one of its own); nil elsewhere (checks by `stat`).
    private let changes: ChangeWatch?
    /// The wall clock, in nanoseconds since 1970, that says whether a walk is settled (``FolderWalk``).
    let wallClock: @Sendable () -> Int64
    /// The clock that says how long ago a watched walk was last checked (``FolderWalk/watchTrust``).
    let now: @Sendable () -> ContinuousClock.Instant
    /// Files at least this large are served as LFS files (SHA-256 etag), as are typical weight formats.
    static let lfsThreshold: Int64 = 10 << 20
    static let lfsExtensions: Set<String> = [
        "gguf", "safetensors", "bin", "pt", "pth", "ckpt", "onnx", "h5", "msgpack", "tflite", "npz", "npy",
        "mlmodel", "weight", "zip", "tar", "gz", "pkl", "ot", "model", "mlpackage",
    ]

    init(
        root: URL, index: HashIndex, type: RepoType = .model, logger: Logger,
        wallClock: @escaping @Sendable () -> Int64 = FolderRepositorySource.now,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now },
        changes: ChangeWatch? = ChangeWatch.shared
    ) {
        self.root = ServedFolder(root, logger: logger)
        self.changes = ChangeWatch.seesEveryChange(under: self.root.realPath) ? changes : nil
        self.index = index
        self.type = type
        self.wallClock = wallClock
        self.now = now
    }

    /// The wall clock file systems stamp times from, in nanoseconds since 1970.
    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1e9) }

    /// How many times a repository folder was walked (the rest were answered from a remembered walk).
    var walks: Int { lastWalks.count.withLock { $0 } }

    /// How many times a remembered walk was checked by `stat` (the rest were vouched for by the kernel's watch).
    var statChecks: Int { lastWalks.statChecks.withLock { $0 } }

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
        guard type == self.type, let namespace = id.namespace, !namespace.hasPrefix("."), !id.name.hasPrefix(".")
        else { return nil }
        let remembered = lastWalks.walks.withLock { $0[id] }
        let snapshot: RepoSnapshot
        // A remembered walk the kernel watches stands while no notice came. Otherwise, one of a folder reached
        // without links is checked with three `lstat` calls instead of a `realpath` (a `readlink` per component).
        // Anything else, and every new walk, takes the full resolution.
        if let remembered, remembered.reachedDirectly, remembered.settled, isStillWatched(remembered) {
            snapshot = remembered.snapshot
        } else if let remembered, remembered.reachedDirectly, remembered.settled,
            await isLinkFreeAndCurrent(remembered, id: id)
        {
            snapshot = remembered.snapshot
        } else {
            let direct = root.realPath + "/" + namespace + "/" + id.name
            guard let folder = root.servablePath(direct, minimumDepth: 2, shownAs: id.description),
                FileStatus(path: folder)?.kind == .folder
            else { return nil }
            if let remembered, remembered.folder == folder, remembered.settled, await remembered.isCurrent() {
                snapshot = remembered.snapshot
            } else {
                snapshot = try await self.walk(folder, reachedDirectly: folder == direct, id: id)
            }
        }
        if let revision, revision != "main", revision != snapshot.commit {
            throw HubServerError.revisionNotFound(id: id, revision: revision)
        }
        return snapshot
    }

    func snapshot(type: RepoType, id: RepoID, revision: String?, serving path: String) async throws -> RepoSnapshot? {
        // Only a commit id can be answered from memory: `main` may have moved since, by any file changing.
        // The way to the file must be as it was too: a repository or organization folder moved out of the root
        // and replaced by a link keeps its files' stamps.
        if type == self.type, let revision, HubEncoding.isGitID(revision), let namespace = id.namespace,
            let walk = lastWalks.walks.withLock({ $0[id] }), walk.snapshot.commit == revision, walk.reachedDirectly,
            let file = walk.snapshot.file(at: path)
        {
            if walk.settled, isStillWatched(walk) { return walk.snapshot }
            if let stamp = file.stamp,
                let status = FileStatus(path: file.diskPath, followingLinks: false), status.kind == .file,
                FileStamp(status) == stamp, isLinkFree(namespace, id.name)
            {
                return walk.snapshot
            }
        }
        return try await snapshot(type: type, id: id, revision: revision)
    }

    /// Whether the kernel vouches that nothing `walk` read changed since a check found it as it was, and the root
    /// is still the folder it was at start (a folder above the root is not watched): a `stat`, a `poll` and a
    /// `read`.
    private func isStillWatched(_ walk: FolderWalk) -> Bool {
        guard let watch = walk.watch else { return false }
        return root.isStillItself() && watch.isUnchanged(now: now())
    }

    /// The `stat` check of a remembered walk of a folder reached without links; when it passes, the walk's watch
    /// vouches for it again from the moment the check began, or, when that watch can never vouch again (the kernel
    /// dropped one of its watches, or a new epoch started), the walk is watched anew.
    private func isLinkFreeAndCurrent(_ walk: FolderWalk, id: RepoID) async -> Bool {
        guard let namespace = id.namespace else { return false }
        lastWalks.statChecks.withLock { $0 += 1 }
        let moment = walk.watch?.moment()
        let started = now()
        guard isLinkFree(namespace, id.name), await walk.isCurrent() else { return false }
        if let watch = walk.watch {
            if let moment {
                watch.checked(at: moment, time: started)
            } else {
                // Watched anew; when that fails (a mount inside the tree, no watches left), checked by `stat` from
                // now on rather than trying again on every request. Unless a newer walk took its place meanwhile.
                let rewatched = FolderWalk(walk, watch: await self.watch(walk, id: id))
                lastWalks.walks.withLock { walks in
                    if walks[id] === walk { walks[id] = rewatched }
                }
            }
        }
        return true
    }

    /// Whether the root is still the folder it was at start and `root/namespace/name` holds no link: that path is
    /// then its own real path.
    private func isLinkFree(_ namespace: String, _ name: String) -> Bool {
        let organization = root.realPath + "/" + namespace
        return root.isStillItself() && FileStatus(path: organization, followingLinks: false)?.kind == .folder
            && FileStatus(path: organization + "/" + name, followingLinks: false)?.kind == .folder
    }

    /// Walks a repository folder (given by its real path) off the cooperative pool, hashes what the index does
    /// not know yet, and remembers the walk.
    private func walk(_ folder: String, reachedDirectly: Bool, id: RepoID) async throws -> RepoSnapshot {
        let started = wallClock()
        let found = try await BlockingWork.run { self.scan(folder) }
        var files: [ServedFile] = []
        files.reserveCapacity(found.files.count)
        for entry in found.files {
            let status = entry.status
            let lfs =
                status.size >= Self.lfsThreshold
                || Self.lfsExtensions.contains((entry.path.value as NSString).pathExtension.lowercased())
            let digests = try await index.digests(
                ofFileAt: entry.diskPath, size: status.size, modifiedNanoseconds: status.modifiedNanoseconds,
                inode: status.inode, lfs: lfs)
            files.append(
                ServedFile(
                    path: entry.path, diskPath: entry.diskPath, size: status.size,
                    modified: Date(timeIntervalSince1970: Double(status.modifiedNanoseconds) / 1e9),
                    gitOID: digests.gitOID, sha256: digests.sha256, stamp: FileStamp(status)))
        }
        // Written only when something was hashed; a file write, so not on the pool either.
        let index = self.index
        _ = try? await BlockingWork.run { index.save() }
        files.sort { $0.path < $1.path }
        let snapshot = RepoSnapshot(
            type: type, id: id, commit: RepoSnapshot.commitID(for: files), files: files, branches: ["main"])
        var walk = FolderWalk(
            snapshot: snapshot, folder: folder, reachedDirectly: reachedDirectly, folders: found.folders,
            links: found.links, started: started)
        if let watch = await self.watch(walk, id: id) { walk = FolderWalk(walk, watch: watch) }
        lastWalks.walks.withLock { $0[id] = walk }
        lastWalks.count.withLock { $0 += 1 }
        return snapshot
    }

    /// Sets the kernel's watch on what a settled walk read, when it was reached without links and has none, and
    /// checks after it is set that the disk is still as the walk found it; nil when any of that fails (the walk is
    /// then checked by `stat`). Watches the root and the organization folder too: an entry of theirs replaced by a
    /// link must be noticed as `isLinkFree` would.
    private func watch(_ walk: FolderWalk, id: RepoID) async -> FolderWalk.Watch? {
        guard let changes, walk.settled, walk.links.isEmpty, walk.reachedDirectly, let namespace = id.namespace
        else { return nil }
        let paths = [root.realPath, root.realPath + "/" + namespace] + walk.watchedPaths
        let root = root
        let armed = { @Sendable () -> FolderWalk.Watch? in
            guard let watched = changes.watch(paths, under: root.realPath) else { return nil }
            let watch = FolderWalk.Watch(changes: changes, watched: watched)
            guard let moment = watch.moment() else { return nil }
            let started = self.now()
            guard self.isLinkFree(namespace, id.name), walk.check() else { return nil }
            watch.checked(at: moment, time: started)
            return watch
        }
        guard paths.count > FolderWalk.inlineCheckLimit else { return armed() }
        return (try? await BlockingWork.run(armed)) ?? nil
    }

    /// What a walk reads from disk, before any hashing.
    private struct Scan: Sendable {
        struct File: Sendable {
            let path: RepoFilePath
            let diskPath: String
            let status: FileStatus
        }
        var files: [File] = []
        var folders: [FolderWalk.Folder] = []
        var links: [FolderWalk.Link] = []
    }

    /// One `readdir` and one `stat` per folder, one `stat` per file; only links cost a `realpath` each. `visited`
    /// holds the real folders on the way down, so a link to a folder above it cannot loop. Blocking: run it off
    /// the pool.
    private func scan(_ folder: String) -> Scan {
        var scan = Scan()
        var visited: Set<String> = [folder]
        collect(folder: folder, prefix: "", visited: &visited, into: &scan)
        return scan
    }

    private func collect(folder: String, prefix: String, visited: inout Set<String>, into scan: inout Scan) {
        // Stamped before listing: an entry added after the listing changes the folder after this stamp.
        guard let folderStatus = FileStatus(path: folder), folderStatus.kind == .folder else { return }
        scan.folders.append(FolderWalk.Folder(path: folder, stamp: FileStamp(folderStatus)))
        for entry in visibleEntries(of: folder) {
            let relative = prefix.isEmpty ? entry.name : prefix + "/" + entry.name
            var diskPath = folder + "/" + entry.name
            switch entry.kind {
            case .folder, .file: break
            case .link:
                guard let resolved = root.servablePath(diskPath, minimumDepth: 3, shownAs: relativeToRoot(diskPath))
                else {
                    // Not served now; checked, so that the walk is made again when it leads somewhere else.
                    scan.links.append(FolderWalk.Link(path: diskPath, target: ServedFolder.realPath(of: diskPath)))
                    continue
                }
                scan.links.append(FolderWalk.Link(path: diskPath, target: resolved))
                diskPath = resolved
            case .other: continue
            }
            guard let status = FileStatus(path: diskPath) else { continue }
            if status.kind == .folder {
                guard visited.insert(diskPath).inserted else { continue }
                collect(folder: diskPath, prefix: relative, visited: &visited, into: &scan)
                visited.remove(diskPath)
                continue
            }
            guard status.kind == .file, let path = try? RepoFilePath(relative) else { continue }
            scan.files.append(Scan.File(path: path, diskPath: diskPath, status: status))
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
    let walks = Mutex<[RepoID: FolderWalk]>([:])
    let count = Mutex(0)
    let statChecks = Mutex(0)
}
