import Foundation
import ModelDepotCore

/// A folder holding a lock and exactly the files it names, as `export` writes it and `import` reads it: the way
/// to carry models to a machine without a network, or into an app's build. Two layouts:
///
/// ```
/// bundle (to import into a cache)               app (to ship inside an app, read in place)
/// BUNDLE/modeldepot.lock                         Models/modeldepot.lock
/// BUNDLE/models/<org>/<name>/<path>              Models/models--<org>--<name>/<path>
/// BUNDLE/datasets/<org>/<name>/<path>            Models/datasets--<org>--<name>/<path>
/// ```
///
/// The app layout gives each repository one folder at the top, named as the Hub cache names it, so an app
/// project adds `Models` as one folder reference and finds a model's folder with a single lookup; its files are
/// written read-only. ``BundledModels`` reads it.
public enum ModelBundle {
    /// The lock's name inside a bundle.
    public static let lockName = "modeldepot.lock"

    /// How a bundle folder arranges its files.
    public enum Layout: String, Sendable, CaseIterable {
        /// `models/<org>/<name>/<path>`: for `import` into another machine's cache.
        case bundle
        /// `models--<org>--<name>/<path>`, read-only files: for an app's `Models` resource folder.
        case app
    }

    /// Where `file` of `repository` lives inside a bundle.
    public static func relativePath(
        _ repository: ModelLock.Repository, _ file: ModelLock.File, layout: Layout = .bundle
    ) -> String {
        "\(repositoryFolder(repository, layout: layout))/\(file.path)"
    }

    /// The folder holding `repository`'s files inside a bundle.
    public static func repositoryFolder(_ repository: ModelLock.Repository, layout: Layout) -> String {
        switch layout {
        case .bundle: "\(repository.type.rawValue)s/\(repository.repo)"
        case .app: repository.repo.cacheFolderName(type: repository.type)
        }
    }

    /// The bundle's lock and layout, once the folder holds exactly what the lock names: no file missing, none
    /// extra, no link, nothing but folders and regular files. Every refusal is an `invalidArgument` error naming
    /// the entry. The layout is the one whose first file is there (`layout` insists on one).
    public static func checkedLock(in folder: URL, layout: Layout? = nil) throws -> (ModelLock, Layout) {
        let lock = try ModelLock.load(folder.appendingPathComponent(lockName))
        let found = try regularFiles(in: folder)
        let detected =
            layout ?? lock.repositories.first.flatMap { repository in
                repository.files.first.flatMap { file in
                    Layout.allCases.first { found.contains(relativePath(repository, file, layout: $0)) }
                }
            } ?? .bundle
        try check(found, against: lock, layout: detected)
        return (lock, detected)
    }

    /// The relative paths of the folder's files; refuses links and anything that is not a folder or a file.
    static func regularFiles(in folder: URL) throws -> Set<String> {
        let keys: [URLResourceKey] = [.isSymbolicLinkKey, .isRegularFileKey, .isDirectoryKey]
        guard let walk = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: keys) else {
            throw ModelDepotError(.fileSystem, "Cannot read the bundle folder \(folder.path).")
        }
        var found = Set<String>()
        let root = folder.standardizedFileURL.path + "/"
        for case let url as URL in walk {
            let relative = String(url.standardizedFileURL.path.dropFirst(root.count))
            let values = try url.resourceValues(forKeys: Set(keys))
            if values.isSymbolicLink == true {
                throw ModelDepotError(
                    .invalidArgument, "The bundle holds a link, \(relative); bundles hold plain files only.")
            }
            if values.isDirectory == true { continue }
            guard values.isRegularFile == true else {
                throw ModelDepotError(.invalidArgument, "The bundle holds \(relative), which is not a regular file.")
            }
            found.insert(relative)
        }
        return found
    }

    /// Refuses a bundle whose files are not exactly the lock's (and the lock itself).
    static func check(_ names: Set<String>, against lock: ModelLock, layout: Layout = .bundle) throws {
        var expected = Set([lockName])
        for repository in lock.repositories {
            for file in repository.files { expected.insert(relativePath(repository, file, layout: layout)) }
        }
        if let extra = names.subtracting(expected).sorted().first {
            throw ModelDepotError(
                .invalidArgument, "The bundle holds \(extra), which its lock does not name; refusing the bundle.")
        }
        if let missing = expected.subtracting(names).sorted().first {
            throw ModelDepotError(.invalidArgument, "The bundle lacks \(missing), which its lock names.")
        }
    }
}

extension ModelManager {
    /// Writes the cached files `lock` names, and the lock, into the empty (or new) folder `folder` in `layout` —
    /// after checking every one against the lock, so a bundle never carries bytes the lock does not promise.
    ///
    /// - Returns: the bytes written.
    /// - Throws: `invalidArgument` when the folder is not empty, `checksumMismatch` naming a cached file that
    ///   differs from the lock (pull the lock first), file system errors.
    @discardableResult
    public nonisolated func export(lock: ModelLock, to folder: URL, layout: ModelBundle.Layout = .bundle) throws
        -> Int64
    {
        if let existing = try? FileManager.default.contentsOfDirectory(atPath: folder.path), !existing.isEmpty {
            throw ModelDepotError(.invalidArgument, "\(folder.path) is not empty; export into a new or empty folder.")
        }
        var written: Int64 = 0
        for (repository, file, source) in try cachedFiles(of: lock) {
            let target = folder.appendingPathComponent(
                ModelBundle.relativePath(repository, file, layout: layout))
            try FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: source, to: target)
            if layout == .app {
                // Shipped files are never written: read-only already on the build machine.
                try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: target.path)
            }
            written += file.size
        }
        try lock.encoded().write(to: folder.appendingPathComponent(ModelBundle.lockName), options: .atomic)
        return written
    }

    /// The cached copy of every file `lock` names, once the cache is checked against the lock (what both exports
    /// write).
    ///
    /// - Throws: `checksumMismatch` naming the first cached file that differs from the lock.
    nonisolated func cachedFiles(of lock: ModelLock) throws -> [(ModelLock.Repository, ModelLock.File, URL)] {
        if let problem = problems(in: lock).first {
            throw ModelDepotError(
                .checksumMismatch,
                "The cache does not match the lock: \(problem). Run `modeldepot pull --locked` first.")
        }
        return try lock.repositories.flatMap { repository in
            let cached = cache.repository(repository.repo, type: repository.type)
            return try repository.files.map { file in
                (
                    repository, file,
                    cached.snapshotFile(repository.commit, try RepoFilePath(file.path)).resolvingSymlinksInPath()
                )
            }
        }
    }

    /// Places a bundle's files in the cache, each checked against the bundle's lock as it is copied, so Python's
    /// huggingface_hub and ModelDepot see the models as cached, offline. Interrupted, it resumes: blobs already
    /// placed (named by their digest) are kept. Nothing unverified is ever placed.
    ///
    /// - Returns: the bundle's lock.
    /// - Throws: `invalidArgument` for a bundle that is not exactly what its lock names (checked before anything
    ///   is placed), `checksumMismatch` naming a file whose bytes differ from the lock.
    @discardableResult
    public nonisolated func importBundle(from folder: URL) throws -> ModelLock {
        let (lock, layout) = try ModelBundle.checkedLock(in: folder)
        try place(lock) { repository, file in
            (folder.appendingPathComponent(ModelBundle.relativePath(repository, file, layout: layout)), 0, nil)
        }
        return lock
    }

    /// ``importBundle(from:)`` for a tar archive `export --archive` wrote: the same checks, reading each file
    /// where it lies in the archive. A link, a device, a name that leaves the bundle or one the lock does not
    /// name is refused before anything is placed.
    @discardableResult
    public nonisolated func importBundle(fromArchive archive: URL) throws -> ModelLock {
        let members = try BundleArchive.members(of: archive)
        let byName = Dictionary(members.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        guard byName.count == members.count else {
            throw ModelDepotError(.invalidArgument, "\(archive.lastPathComponent) holds a file twice; refusing it.")
        }
        guard let lockMember = byName[ModelBundle.lockName], lockMember.size < 64 << 20 else {
            throw ModelDepotError(.invalidArgument, "\(archive.lastPathComponent) holds no \(ModelBundle.lockName).")
        }
        guard let handle = FileHandle(forReadingAtPath: archive.path) else {
            throw ModelDepotError(.fileSystem, "Cannot open \(archive.path).")
        }
        try handle.seek(toOffset: UInt64(lockMember.offset))
        let lockData = try handle.read(upToCount: Int(lockMember.size)) ?? Data()
        try? handle.close()
        let lock = try ModelLock.parse(lockData, name: "\(archive.lastPathComponent)'s \(ModelBundle.lockName)")
        try ModelBundle.check(Set(byName.keys), against: lock)
        try place(lock) { repository, file in
            let member = byName[ModelBundle.relativePath(repository, file)]!
            return (archive, member.offset, member.size)
        }
        return lock
    }

    /// Places every file of `lock`, read from where `source` says (a file, an offset, a length or the rest of
    /// the file), each verified as it is copied. Every blob of every repository is copied and verified before the
    /// first link is made: a bundle one of whose files is refused leaves no snapshot, tree or ref behind (the
    /// verified blobs stay, unreferenced, for `prune` or the next import).
    private nonisolated func place(
        _ lock: ModelLock, from source: (ModelLock.Repository, ModelLock.File) -> (URL, Int64, Int64?)
    ) throws {
        for repository in lock.repositories {
            let cached = cache.repository(repository.repo, type: repository.type)
            for file in repository.files {
                let blob = cached.blob(file.sha256 ?? file.gitBlob ?? "")
                if !FileManager.default.fileExists(atPath: blob.path) {
                    let (url, offset, length) = source(repository, file)
                    try Self.copyVerifying(
                        url, offset: offset, length: length, to: blob, as: file,
                        shown: "\(repository.repo)/\(file.path)")
                }
            }
        }
        for repository in lock.repositories {
            let cached = cache.repository(repository.repo, type: repository.type)
            var tree: [RepoFilePath: RecordedTree.File] = [:]
            for file in repository.files {
                let path = try RepoFilePath(file.path)
                let etag = file.sha256 ?? file.gitBlob ?? ""
                try cached.link(path, commit: repository.commit, toBlob: etag)
                let pointer = file.sha256.map {
                    GitBlob.id(of: Array(GitBlob.lfsPointer(sha256: $0, size: file.size).utf8))
                }
                tree[path] = RecordedTree.File(
                    size: file.size, blobID: pointer ?? etag, lfsSHA256: file.sha256,
                    lfsSize: file.sha256 == nil ? nil : file.size)
            }
            // What the cache knew of this commit stays; the bundle adds its files. A branch already pointing
            // elsewhere is left alone (it may be newer); a missing one is set, so `main` finds the snapshot offline.
            let known = cached.recordedTree(repository.commit)?.files ?? [:]
            try cached.recordTree(RecordedTree(files: known.merging(tree) { old, _ in old }), commit: repository.commit)
            if cached.commit(forRevision: repository.revision) == nil, !HubEncoding.isGitID(repository.revision) {
                try cached.setRef(repository.revision, to: repository.commit)
            }
        }
        try? cache.writeCacheDirectoryTag()
    }

    /// Copies `source` to `blob` through a temporary name, hashing as it goes; the blob appears only when the
    /// digest and size match the lock.
    static func copyVerifying(
        _ source: URL, offset: Int64, length: Int64?, to blob: URL, as file: ModelLock.File, shown: String
    ) throws {
        try FileManager.default.createDirectory(at: blob.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = blob.deletingLastPathComponent().appendingPathComponent(
            ".\(blob.lastPathComponent).\(String(UInt64.random(in: 0...UInt64.max), radix: 16)).import")
        var placed = false
        defer { if !placed { try? FileManager.default.removeItem(at: temporary) } }
        // Exactly the locked size: a folder's file must be that long (it may have been swapped since the check),
        // an archive's member is read no further than its own size.
        if let length, length != file.size {
            throw ModelDepotError(
                .invalidArgument,
                "\(shown) in the bundle is \(length) bytes; the lock says \(file.size) bytes. Nothing of it was placed."
            )
        }
        let (digest, size) = try VerifyingCopy.copy(
            from: source.path, offset: offset, length: file.size, fileSize: length == nil ? file.size : nil,
            to: temporary.path, computing: file.sha256 != nil ? .sha256 : .gitBlob(expectedSize: file.size))
        let expected = file.sha256 ?? file.gitBlob ?? ""
        guard size == file.size, digest == expected else {
            throw ModelDepotError(
                .checksumMismatch,
                "\(shown) in the bundle is \(size) bytes with digest \(digest); the lock says \(file.size) bytes, \(file.digestText). Nothing of it was placed."
            )
        }
        // Another import may have placed the same verified blob meanwhile: either copy is the same bytes.
        if FileManager.default.fileExists(atPath: blob.path) { return }
        try FileManager.default.moveItem(at: temporary, to: blob)
        placed = true
    }
}
