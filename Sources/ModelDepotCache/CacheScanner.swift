import Foundation
import ModelDepotCore
import ModelDepotPlatform

/// Reads a Hub cache into a ``CacheReport`` with plain POSIX calls (one `lstat` per entry, one `stat` per
/// distinct blob), the same rules as Python's `scan_cache_dir`, so both tools report the same repositories,
/// sizes and file counts.
package struct CacheScanner: Sendable {
    package let cache: HubCache
    /// Reports kept from earlier scans, reused while their repositories are unchanged; nil reads everything.
    package let memo: CacheScanMemo?

    package init(cache: HubCache, memo: CacheScanMemo? = nil) {
        self.cache = cache
        self.memo = memo
    }

    static let ignoredNames: Set<String> = [".DS_Store", "Thumbs.db", "desktop.ini"]

    /// Scans every repository of the cache.
    ///
    /// - Throws: `notCached` when the cache folder does not exist.
    package func scan() throws -> CacheReport {
        let root = cache.root.path
        guard FileStatus(path: root, followingLinks: true)?.kind == .folder else {
            throw ModelDepotError(
                .notCached,
                "There is no cache at \(root). Pull a model first, or point HF_HUB_CACHE at a cache.")
        }
        var repositories: [CachedRepositoryReport] = []
        var warnings: [String] = []
        var incomplete: [IncompleteDownload] = []
        var folders = Set<String>()
        for name in Directory.names(root).sorted() {
            if Self.ignoredNames.contains(name) || name == ".locks" || name == "CACHEDIR.TAG" { continue }
            let folder = root + "/" + name
            // Python 2.4's shared Xet blob store, recognised by its marker file.
            if name == "blobs",
                FileStatus(path: folder + "/.huggingface-shared-blobs", followingLinks: false)?.kind != nil
            {
                continue
            }
            do {
                if let memo {
                    // Taken before reading: a change during the scan shows as a different fingerprint next time.
                    let fingerprint = CacheScanMemo.fingerprint(of: folder)
                    folders.insert(folder)
                    if let kept = memo.report(for: folder, fingerprint: fingerprint) {
                        repositories.append(kept)
                    } else {
                        let report = try scanRepository(name: name, folder: folder)
                        memo.keep(report, for: folder, fingerprint: fingerprint)
                        repositories.append(report)
                    }
                } else {
                    repositories.append(try scanRepository(name: name, folder: folder))
                }
            } catch let error as ModelDepotError {
                warnings.append(error.message)
            }
            incomplete += Self.incompleteDownloads(in: folder, name: name)
        }
        memo?.retain(only: folders)
        var seen = Set<String>()
        var total: Int64 = 0
        for repository in repositories {
            for revision in repository.revisions {
                for entry in revision.entries where seen.insert(entry.blob).inserted { total += entry.size }
            }
        }
        return CacheReport(
            root: cache.root, repositories: repositories, incompleteDownloads: incomplete, warnings: warnings,
            sizeOnDisk: total)
    }

    /// Scans one repository folder; throws (Python: a warning) when it is not a valid cached repository.
    package func scanRepository(name: String, folder: String) throws -> CachedRepositoryReport {
        let corrupt = { (reason: String) in ModelDepotError(.fileSystem, "\(folder): \(reason)") }
        guard FileStatus(path: folder, followingLinks: true)?.kind == .folder else { throw corrupt("not a folder") }
        guard name.contains("--") else { throw corrupt("not a cached repository name") }
        guard let (type, id) = RepoID.cacheFolderParts(name) else {
            throw corrupt("unknown repository type '\(name.components(separatedBy: "--")[0])'")
        }
        let snapshots = folder + "/snapshots"
        guard FileStatus(path: snapshots, followingLinks: true)?.kind == .folder else {
            throw corrupt("no snapshots folder")
        }

        var refsByCommit: [String: [String]] = [:]
        let refs = folder + "/refs"
        switch FileStatus(path: refs, followingLinks: true)?.kind {
        case .file: throw corrupt("refs is a file")
        case .folder:
            for ref in Self.walkFiles(refs) where !Self.ignoredNames.contains((ref as NSString).lastPathComponent) {
                guard let data = FileManager.default.contents(atPath: refs + "/" + ref) else { continue }
                refsByCommit[String(decoding: data, as: UTF8.self), default: []].append(ref)
            }
        default: break
        }

        var blobStats: [String: FileStatus] = [:]
        var revisions: [CachedRevisionReport] = []
        for commit in Directory.names(snapshots).sorted() where !Self.ignoredNames.contains(commit) {
            let revisionFolder = snapshots + "/" + commit
            guard FileStatus(path: revisionFolder, followingLinks: true)?.kind == .folder else {
                throw corrupt("a file in snapshots/: \(commit)")
            }
            var entries: [CachedFileEntry] = []
            var revisionBlobs = Set<String>()
            var newest: Double?
            for (relative, isLink) in Directory.walk(revisionFolder) {
                let file = revisionFolder + "/" + relative
                let blob = isLink ? Self.blobPath(of: file) : file
                if blobStats[blob] == nil {
                    guard let status = FileStatus(path: blob) else {
                        throw corrupt("blob missing (broken link): \(blob)")
                    }
                    // A link to a folder: Python's `is_dir()` skips it.
                    if status.kind == .folder { continue }
                    blobStats[blob] = status
                }
                let info = blobStats[blob]!
                entries.append(CachedFileEntry(path: relative, blob: blob, size: info.size))
                revisionBlobs.insert(blob)
                newest = max(newest ?? 0, info.modified)
            }
            let size = revisionBlobs.reduce(Int64(0)) { $0 + blobStats[$1]!.size }
            revisions.append(
                CachedRevisionReport(
                    commit: commit, refs: (refsByCommit.removeValue(forKey: commit) ?? []).sorted(), sizeOnDisk: size,
                    files: entries.count,
                    lastModified: Date(timeIntervalSince1970: newest ?? Self.modificationTime(revisionFolder)),
                    entries: entries.sorted { $0.path < $1.path }))
        }
        if !refsByCommit.isEmpty {
            throw corrupt(
                "refs point to commits without a snapshot: \(refsByCommit.keys.sorted().joined(separator: ", "))")
        }
        let accessed: Double
        let modified: Double
        if blobStats.isEmpty {
            let status = FileStatus(path: folder)
            accessed = status?.accessed ?? 0
            modified = status?.modified ?? 0
        } else {
            accessed = blobStats.values.map(\.accessed).max()!
            modified = blobStats.values.map(\.modified).max()!
        }
        return CachedRepositoryReport(
            id: id, type: type.rawValue, sizeOnDisk: blobStats.values.reduce(0) { $0 + $1.size },
            files: blobStats.count, revisions: revisions, lastAccessed: Date(timeIntervalSince1970: accessed),
            lastModified: Date(timeIntervalSince1970: modified), folder: URL(fileURLWithPath: folder))
    }

    // MARK: - Cache paths

    /// Like `Directory.walk` but only the paths of files and links to files.
    package static func walkFiles(_ root: String) -> [String] {
        Directory.walk(root).compactMap { entry in
            guard entry.isLink else { return entry.path }
            return FileStatus(path: root + "/" + entry.path)?.kind == .file ? entry.path : nil
        }
    }

    /// The files (links to blobs, or real files) under a snapshot folder, as repository paths, sorted: the one
    /// walk, so a snapshot is read one way everywhere.
    package static func repositoryFiles(below folder: URL) -> [RepoFilePath] {
        walkFiles(folder.path).compactMap { try? RepoFilePath($0) }.sorted()
    }

    /// The first symlink hop made absolute (without resolving further), or the path itself when not a link.
    package static func blobPath(of file: String) -> String {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBufferPointer { pointer in
            pointer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: pointer.count) {
                readlink(file, $0, pointer.count - 1)
            }
        }
        guard count > 0 else { return file }
        return resolve(target: buffer[0..<count], from: file)
    }

    /// Joins a link's target to the link's folder and removes `.`/`..` lexically, as `os.path.abspath` does.
    ///
    /// The common case — a cache link `../../blobs/<etag>` — is handled on bytes without splitting strings:
    /// each leading `../` drops one trailing component of the link's folder.
    static func resolve(target: ArraySlice<UInt8>, from file: String) -> String {
        if target.first == UInt8(ascii: "/") {
            return normalize(String(decoding: target, as: UTF8.self))
        }
        var base = Array(file.utf8)
        // The link's folder.
        while let last = base.last, last != UInt8(ascii: "/") { base.removeLast() }
        if !base.isEmpty { base.removeLast() }
        var rest = target[...]
        while rest.count >= 3, rest.starts(with: [UInt8(ascii: "."), UInt8(ascii: "."), UInt8(ascii: "/")]) {
            rest = rest.dropFirst(3)
            while let last = base.last, last != UInt8(ascii: "/") { base.removeLast() }
            if !base.isEmpty { base.removeLast() }
        }
        let joined = base + [UInt8(ascii: "/")] + rest
        // Anything unusual left (`./`, inner `..`, `//`) takes the general path.
        if rest.contains(UInt8(ascii: ".")) && (rest.starts(with: [UInt8(ascii: ".")]) || containsDotSegment(rest)) {
            return normalize(String(decoding: joined, as: UTF8.self))
        }
        return String(decoding: joined, as: UTF8.self)
    }

    private static func containsDotSegment(_ bytes: ArraySlice<UInt8>) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.contains("/./") || text.contains("/../") || text.hasSuffix("/.") || text.hasSuffix("/..")
            || text.contains("//")
    }

    /// Removes `.` and `..` components lexically, as `os.path.abspath` does (no symlink resolution).
    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." {
                if !parts.isEmpty { parts.removeLast() }
                continue
            }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// The size of a regular file (links followed); nil for anything else or nothing.
    package static func regularFileSize(_ path: String) -> Int64? {
        guard let status = FileStatus(path: path), status.kind == .file else { return nil }
        return status.size
    }

    static func modificationTime(_ path: String) -> Double {
        FileStatus(path: path)?.modified ?? 0
    }

    static func incompleteDownloads(in folder: String, name: String) -> [IncompleteDownload] {
        let blobs = folder + "/blobs"
        let repo = RepoID.fromCacheFolderName(name).map { $0.1.description } ?? name
        return Directory.names(blobs).filter { $0.hasSuffix(".incomplete") }.sorted().compactMap { file in
            guard let status = FileStatus(path: blobs + "/" + file) else { return nil }
            let record = ResumeRecord.load(from: blobs + "/" + file + ".json")
            return IncompleteDownload(
                repo: repo, path: blobs + "/" + file, sizeOnDisk: status.size,
                bytesDownloaded: record?.completed.count)
        }
    }
}
