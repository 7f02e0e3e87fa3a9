import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a Hub cache into a ``CacheReport`` with plain POSIX calls (one `lstat` per entry, one `stat` per
/// distinct blob), the same rules as Python's `scan_cache_dir`, so both tools report the same repositories,
/// sizes and file counts.
public struct CacheScanner: Sendable {
    public let cache: HubCache

    public init(cache: HubCache) {
        self.cache = cache
    }

    static let ignoredNames: Set<String> = [".DS_Store", "Thumbs.db", "desktop.ini"]

    /// Scans every repository of the cache.
    ///
    /// - Throws: `notCached` when the cache folder does not exist.
    public func scan() throws -> CacheReport {
        let root = cache.root.path
        guard Self.kind(of: root, following: true) == .folder else {
            throw ModelDepotError(
                .notCached,
                "There is no cache at \(root). Pull a model first, or point --cache-dir / HF_HUB_CACHE at a cache.")
        }
        var repositories: [CachedRepositoryReport] = []
        var warnings: [String] = []
        var incomplete: [IncompleteDownload] = []
        for name in Self.list(root).sorted() {
            if Self.ignoredNames.contains(name) || name == ".locks" || name == "CACHEDIR.TAG" { continue }
            let folder = root + "/" + name
            // Python 2.4's shared Xet blob store, recognised by its marker file.
            if name == "blobs", Self.kind(of: folder + "/.huggingface-shared-blobs", following: false) != nil {
                continue
            }
            do {
                repositories.append(try scanRepository(name: name, folder: folder))
            } catch let error as ModelDepotError {
                warnings.append(error.message)
            }
            incomplete += Self.incompleteDownloads(in: folder, name: name)
        }
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
    public func scanRepository(name: String, folder: String) throws -> CachedRepositoryReport {
        let corrupt = { (reason: String) in ModelDepotError(.fileSystem, "\(folder): \(reason)") }
        guard Self.kind(of: folder, following: true) == .folder else { throw corrupt("not a folder") }
        guard let separator = name.range(of: "--") else { throw corrupt("not a cached repository name") }
        let prefix = String(name[..<separator.lowerBound])
        guard let type = RepoType.allCases.first(where: { $0.cacheFolderPrefix == prefix }) else {
            throw corrupt("unknown repository type '\(prefix)'")
        }
        let id = name[separator.upperBound...].replacingOccurrences(of: "--", with: "/")
        let snapshots = folder + "/snapshots"
        guard Self.kind(of: snapshots, following: true) == .folder else { throw corrupt("no snapshots folder") }

        var refsByCommit: [String: [String]] = [:]
        let refs = folder + "/refs"
        switch Self.kind(of: refs, following: true) {
        case .file: throw corrupt("refs is a file")
        case .folder:
            for ref in Self.walkFiles(refs) where !Self.ignoredNames.contains((ref as NSString).lastPathComponent) {
                guard let data = FileManager.default.contents(atPath: refs + "/" + ref) else { continue }
                refsByCommit[String(decoding: data, as: UTF8.self), default: []].append(ref)
            }
        default: break
        }

        var blobStats: [String: stat] = [:]
        var revisions: [CachedRevisionReport] = []
        for commit in Self.list(snapshots).sorted() where !Self.ignoredNames.contains(commit) {
            let revisionFolder = snapshots + "/" + commit
            guard Self.kind(of: revisionFolder, following: true) == .folder else {
                throw corrupt("a file in snapshots/: \(commit)")
            }
            var entries: [CachedFileEntry] = []
            var revisionBlobs = Set<String>()
            var newest: Double?
            for (relative, isLink) in Self.walkEntries(revisionFolder) {
                let file = revisionFolder + "/" + relative
                let blob = isLink ? Self.blobPath(of: file) : file
                if blobStats[blob] == nil {
                    var info = stat()
                    guard stat(blob, &info) == 0 else { throw corrupt("blob missing (broken link): \(blob)") }
                    // A link to a folder: Python's `is_dir()` skips it.
                    if (info.st_mode & S_IFMT) == S_IFDIR { continue }
                    blobStats[blob] = info
                }
                let info = blobStats[blob]!
                entries.append(CachedFileEntry(path: relative, blob: blob, size: Int64(info.st_size)))
                revisionBlobs.insert(blob)
                newest = max(newest ?? 0, Self.seconds(info.st_mtim))
            }
            let size = revisionBlobs.reduce(Int64(0)) { $0 + Int64(blobStats[$1]!.st_size) }
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
            var info = stat()
            stat(folder, &info)
            accessed = Self.seconds(info.st_atim)
            modified = Self.seconds(info.st_mtim)
        } else {
            accessed = blobStats.values.map { Self.seconds($0.st_atim) }.max()!
            modified = blobStats.values.map { Self.seconds($0.st_mtim) }.max()!
        }
        return CachedRepositoryReport(
            id: id, type: type.rawValue, sizeOnDisk: blobStats.values.reduce(0) { $0 + Int64($1.st_size) },
            files: blobStats.count, revisions: revisions, lastAccessed: Date(timeIntervalSince1970: accessed),
            lastModified: Date(timeIntervalSince1970: modified), folder: URL(fileURLWithPath: folder))
    }

    // MARK: - POSIX helpers

    enum Kind { case file, folder, link, other }

    static func kind(of path: String, following: Bool) -> Kind? {
        var info = stat()
        guard (following ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .folder
        case S_IFLNK: return .link
        default: return .other
        }
    }

    /// Names in a folder, `.` and `..` excluded; empty when it cannot be read.
    static func list(_ path: String) -> [String] {
        entries(path).map(\.name)
    }

    /// Names in a folder with their `d_type` (`DT_UNKNOWN` when the file system does not say).
    static func entries(_ path: String) -> [(name: String, type: UInt8)] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [(String, UInt8)] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append((name, entry.pointee.d_type)) }
        }
        return names
    }

    /// Paths (relative, `/`-separated) of everything below `root` that is not a folder, with whether each is a
    /// symlink. Uses the folder entries' types, so it costs no `stat` per file; links are not followed (a link
    /// to a folder shows up as a file here and is skipped once its target is found to be a folder).
    static func walkEntries(_ root: String) -> [(path: String, isLink: Bool)] {
        var result: [(String, Bool)] = []
        var pending = [""]
        while let relative = pending.popLast() {
            let folder = relative.isEmpty ? root : root + "/" + relative
            for (name, type) in entries(folder) {
                let child = relative.isEmpty ? name : relative + "/" + name
                var kind = type
                if kind == UInt8(DT_UNKNOWN) {
                    switch self.kind(of: folder + "/" + name, following: false) {
                    case .folder: kind = UInt8(DT_DIR)
                    case .link: kind = UInt8(DT_LNK)
                    case nil: continue
                    default: kind = UInt8(DT_REG)
                    }
                }
                if kind == UInt8(DT_DIR) {
                    pending.append(child)
                } else {
                    result.append((child, kind == UInt8(DT_LNK)))
                }
            }
        }
        return result
    }

    /// Like ``walkEntries(_:)`` but only the paths of files and links to files.
    static func walkFiles(_ root: String) -> [String] {
        walkEntries(root).compactMap { entry in
            guard entry.isLink else { return entry.path }
            return kind(of: root + "/" + entry.path, following: true) == .file ? entry.path : nil
        }
    }

    /// The first symlink hop made absolute (without resolving further), or the path itself when not a link.
    static func blobPath(of file: String) -> String {
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
    static func regularFileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    static func seconds(_ time: timespec) -> Double {
        Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func modificationTime(_ path: String) -> Double {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return seconds(info.st_mtim)
    }

    static func incompleteDownloads(in folder: String, name: String) -> [IncompleteDownload] {
        let blobs = folder + "/blobs"
        let repo = RepoID.fromCacheFolderName(name).map { $0.1.description } ?? name
        return list(blobs).filter { $0.hasSuffix(".incomplete") }.sorted().compactMap { file in
            var info = stat()
            guard stat(blobs + "/" + file, &info) == 0 else { return nil }
            let record = ResumeRecord.load(from: blobs + "/" + file + ".json")
            return IncompleteDownload(
                repo: repo, path: blobs + "/" + file, sizeOnDisk: Int64(info.st_size),
                bytesDownloaded: record?.completed.count)
        }
    }
}
