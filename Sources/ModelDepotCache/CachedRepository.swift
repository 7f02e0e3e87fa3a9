import Foundation
import ModelDepotCore
import ModelDepotPlatform

/// One repository's folder in a ``HubCache``: blobs named by ETag, snapshots of relative symlinks, refs.
///
/// Every path built here comes from a validated `RepoID`, a 40-hex commit, a `RepoFilePath` or a safe
/// blob name, so nothing from the network can point outside the folder.
package struct CachedRepository: Sendable, Hashable {
    /// The cache holding the repository.
    package let cache: HubCache
    /// The repository id.
    package let id: RepoID
    /// Whether it is a model, dataset or space repository.
    package let type: RepoType
    /// `<cache>/models--org--name`.
    package let folder: URL

    /// `blobs/`: file contents, named by ETag.
    package var blobsFolder: URL { folder.appendingPathComponent("blobs", isDirectory: true) }
    /// `snapshots/`: one folder per commit, with links into `blobs/`.
    package var snapshotsFolder: URL { folder.appendingPathComponent("snapshots", isDirectory: true) }
    /// `refs/`: branch and tag names, each a file holding its commit.
    package var refsFolder: URL { folder.appendingPathComponent("refs", isDirectory: true) }

    /// The blob named `etag` (it may not exist).
    package func blob(_ etag: String) -> URL { blobsFolder.appendingPathComponent(etag) }

    /// Where a download of blob `etag` collects its bytes. Python's `scan_cache_dir` lists `blobs/*.incomplete`
    /// as unfinished downloads, and the fixed name (unlike Python 2.4's random one) lets a later run resume it.
    package func partialBlob(_ etag: String) -> URL { blobsFolder.appendingPathComponent(etag + ".incomplete") }

    /// The lock Python takes for the same blob: both tools serialise on it.
    package func lockFile(_ etag: String) -> URL {
        cache.root.appendingPathComponent(".locks/\(folder.lastPathComponent)/\(etag).lock")
    }

    /// The snapshot folder of `commit` (it may not exist).
    package func snapshotFolder(_ commit: String) -> URL {
        snapshotsFolder.appendingPathComponent(commit, isDirectory: true)
    }

    /// A file's place in the snapshot of `commit` (it may not exist).
    package func snapshotFile(_ commit: String, _ path: RepoFilePath) -> URL {
        snapshotFolder(commit).appendingPathComponent(path.value)
    }

    func noExistMarker(_ commit: String, _ path: RepoFilePath) -> URL {
        folder.appendingPathComponent(".no_exist/\(commit)/\(path.value)")
    }

    func treeCacheFile(_ commit: String) -> URL {
        folder.appendingPathComponent("trees/\(commit).json")
    }

    // MARK: - Refs

    /// `refs/<revision>`; names with `/` (`refs/pr/1`) become sub-folders, as in Python.
    func refFile(_ revision: String) throws -> URL {
        let path = try RepoFilePath(revision)
        return refsFolder.appendingPathComponent(path.value)
    }

    /// The commit a branch or tag pointed to when last pulled; nil when unknown. Read verbatim (no trimming),
    /// as Python reads it.
    package func commit(forRevision revision: String) -> String? {
        if HubEncoding.isGitID(revision) { return revision }
        guard let file = try? refFile(revision), let data = FileManager.default.contents(atPath: file.path) else {
            return nil
        }
        let commit = String(decoding: data, as: UTF8.self)
        return HubEncoding.isGitID(commit) ? commit : nil
    }

    /// Every ref this cache records (`refs/main`, `refs/v1.0`, nested `refs/pr/1`) → the commit it names, read
    /// verbatim as ``commit(forRevision:)`` reads one; refs whose content is not a commit id are left out.
    package func refs() -> [String: String] {
        var refs: [String: String] = [:]
        for entry in Directory.walk(refsFolder.path) {
            guard let data = FileManager.default.contents(atPath: refsFolder.path + "/" + entry.path) else { continue }
            let commit = String(decoding: data, as: UTF8.self)
            if HubEncoding.isGitID(commit) { refs[entry.path] = commit }
        }
        return refs
    }

    /// Points `refs/<revision>` at `commit`: exactly 40 characters, no newline, written atomically and only
    /// when it changes (so read-only caches still work when nothing changed).
    package func setRef(_ revision: String, to commit: String) throws {
        guard revision != commit else { return }
        let file = try refFile(revision)
        if let data = FileManager.default.contents(atPath: file.path), String(decoding: data, as: UTF8.self) == commit {
            return
        }
        try HubCache.writeAtomically(Data(commit.utf8), to: file)
    }

    // MARK: - Snapshots

    /// Where links are made before they are renamed into a snapshot: the repository's own `.modeldepot/`
    /// folder, which Python's cache tools and model loaders never look at. A process killed between making a
    /// link and renaming it so leaves nothing inside `snapshots/`.
    var linkWorkFolder: URL { folder.appendingPathComponent(".modeldepot/links", isDirectory: true) }

    /// Makes `snapshots/<commit>/<path>` a relative symlink to `blobs/<etag>`, replacing what was there.
    package func link(_ path: RepoFilePath, commit: String, toBlob etag: String) throws {
        let link = snapshotFile(commit, path)
        try HubCache.createFolder(link.deletingLastPathComponent())
        // One `..` per folder between the link and the repo folder: the path's own folders, the commit, snapshots.
        // The text is relative to the link's final place; a rename moves a link without changing its text.
        let target = String(repeating: "../", count: path.components.count + 1) + "blobs/" + etag
        if let existing = try? FileManager.default.destinationOfSymbolicLink(atPath: link.path), existing == target {
            return
        }
        try HubCache.createFolder(linkWorkFolder)
        let temporary = linkWorkFolder.appendingPathComponent(
            "\(String(UInt64.random(in: 0...UInt64.max), radix: 16)).link")
        guard symlink(target, temporary.path) == 0 else {
            throw POSIXFailure.error("Cannot create the link \(temporary.path)", errno: errno)
        }
        guard rename(temporary.path, link.path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw POSIXFailure.error("Cannot place the link \(link.path)", errno: code)
        }
    }

    /// Removes what an interrupted link left: temporary links an older version made inside the snapshot
    /// (`.<name>.<hex>.link` beside the file they were for, never a file `tree` lists) and this version's
    /// leftovers in ``linkWorkFolder``. Returns the snapshot paths removed.
    @discardableResult
    package func removeLinkDebris(commit: String, keeping tree: RecordedTree) -> [String] {
        // Another process may be between making a link here and renaming it (microseconds): only links older
        // than a minute are leftovers.
        let aMinuteAgo = Date().addingTimeInterval(-60)
        for name in Directory.names(linkWorkFolder.path) where name.hasSuffix(".link") {
            let path = linkWorkFolder.appendingPathComponent(name).path
            // attributesOfItem does not follow links: this is the link's own time.
            let made = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
            if let made, made < aMinuteAgo { unlink(path) }
        }
        let snapshot = snapshotFolder(commit).path
        var removed: [String] = []
        for entry in Directory.walk(snapshot) where entry.isLink && Self.isTemporaryLinkName(entry.path) {
            if let path = try? RepoFilePath(entry.path), tree.files[path] != nil { continue }
            if unlink(snapshot + "/" + entry.path) == 0 { removed.append(entry.path) }
        }
        return removed
    }

    /// `.<name>.<1 to 16 hex>.link`: the temporary name earlier versions gave a link inside the snapshot.
    static func isTemporaryLinkName(_ path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard name.hasPrefix("."), name.hasSuffix(".link") else { return false }
        let middle = name.dropFirst().dropLast(5)
        guard let dot = middle.lastIndex(of: ".") else { return false }
        let hex = middle[middle.index(after: dot)...]
        return middle[..<dot].count > 0 && (1...16).contains(hex.count) && hex.allSatisfy(\.isHexDigit)
    }

    /// Whether `snapshots/<commit>/<path>` resolves to a file (a link to an existing blob, or a real file).
    package func hasFile(_ path: RepoFilePath, commit: String) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: snapshotFile(commit, path).path, isDirectory: &isFolder)
            && !isFolder.boolValue
    }

    /// Remembers that `path` does not exist at `commit` (`.no_exist/<commit>/<path>`, empty).
    package func markMissing(_ path: RepoFilePath, commit: String) {
        let marker = noExistMarker(commit, path)
        try? HubCache.createFolder(marker.deletingLastPathComponent())
        _ = FileManager.default.createFile(atPath: marker.path, contents: nil)
    }

    /// Whether a pull recorded that the Hub has no such file at `commit` (`.no_exist/`).
    package func isKnownMissing(_ path: RepoFilePath, commit: String) -> Bool {
        FileManager.default.fileExists(atPath: noExistMarker(commit, path).path)
    }

    // MARK: - Tree cache

    /// The recursive file listing recorded for `commit` (`trees/<commit>.json`), nil when absent or unreadable.
    package func recordedTree(_ commit: String) -> RecordedTree? {
        guard let data = FileManager.default.contents(atPath: treeCacheFile(commit).path) else { return nil }
        return try? RecordedTree(json: data)
    }

    /// When the listing of `commit` was recorded, nil when it was not.
    package func treeRecordedDate(_ commit: String) -> Date? {
        // One `stat`: a pull-through mirror asks on every request whether the listing it served is still the one
        // recorded, and `attributesOfItem` builds a whole dictionary (owner and group names included) for it.
        FileStatus(path: treeCacheFile(commit).path).map { Date(timeIntervalSince1970: $0.modified) }
    }

    package func recordTree(_ tree: RecordedTree, commit: String) throws {
        try HubCache.writeAtomically(tree.json(), to: treeCacheFile(commit))
    }
}
