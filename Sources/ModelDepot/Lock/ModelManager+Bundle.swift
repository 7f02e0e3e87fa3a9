import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotTransfer
import ModelDepotTrust

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

extension ModelManager {
    /// ``export(lock:to:layout:)`` as one tar file: the lock first, then every file, checked against the lock first.
    @discardableResult
    public nonisolated func export(lock: ModelLock, toArchive archive: URL) throws -> Int64 {
        let files = try cachedFiles(of: lock)
        let temporary = archive.deletingLastPathComponent().appendingPathComponent(
            ".\(archive.lastPathComponent).partial")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil),
            let output = FileHandle(forWritingAtPath: temporary.path)
        else { throw ModelDepotError(.fileSystem, "Cannot write \(archive.path).") }
        var placed = false
        defer {
            try? output.close()
            if !placed { try? FileManager.default.removeItem(at: temporary) }
        }
        func pad(_ size: Int64) throws { try output.write(contentsOf: BundleArchive.padding(after: size)) }
        let lockData = lock.encoded()
        try output.write(contentsOf: BundleArchive.headers(name: ModelBundle.lockName, size: Int64(lockData.count)))
        try output.write(contentsOf: lockData)
        try pad(Int64(lockData.count))
        var written: Int64 = 0
        for (repository, file, source) in files {
            try output.write(
                contentsOf: BundleArchive.headers(name: ModelBundle.relativePath(repository, file), size: file.size))
            guard let input = FileHandle(forReadingAtPath: source.path) else {
                throw ModelDepotError(.fileSystem, "Cannot read \(source.path).")
            }
            defer { try? input.close() }
            var copied: Int64 = 0
            while let chunk = try input.read(upToCount: 8 << 20), !chunk.isEmpty {
                try output.write(contentsOf: chunk)
                copied += Int64(chunk.count)
            }
            guard copied == file.size else {
                throw ModelDepotError(.sizeMismatch, "\(source.path) changed while it was exported.")
            }
            try pad(file.size)
            written += file.size
        }
        try output.write(contentsOf: Data(count: 2 * BundleArchive.block))
        try output.close()
        try? FileManager.default.removeItem(at: archive)
        try FileManager.default.moveItem(at: temporary, to: archive)
        placed = true
        return written
    }
}
