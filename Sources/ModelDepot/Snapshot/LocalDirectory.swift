import Foundation
import ModelDepotCache
import ModelDepotCore
import ModelDepotPlatform
import ModelDepotTransfer
import ModelDepotTrust

/// A plain folder a pull writes a repository's files into (`hf download --local-dir`), with the bookkeeping
/// huggingface_hub keeps beside them, so each tool sees the other's downloads there as up to date:
/// `DIR/<path>` is the file itself (no links); `DIR/.cache/huggingface/download/<path>.metadata` holds three
/// lines — the commit, the etag, and the UNIX time the file was written; `.lock` files and partial downloads
/// sit next to it; `.cache/huggingface/` has a `.gitignore` of `*` and a `CACHEDIR.TAG`.
public struct LocalDirectory: Sendable, Hashable {
    /// The folder the files go into.
    public let root: URL

    public init(_ root: URL) {
        self.root = root.standardizedFileURL
    }

    var bookkeeping: URL { root.appendingPathComponent(".cache/huggingface", isDirectory: true) }

    /// Where a repository file lives.
    public func file(_ path: RepoFilePath) -> URL { root.appendingPathComponent(path.value) }

    func metadata(_ path: RepoFilePath) -> URL {
        bookkeeping.appendingPathComponent("download/" + path.value + ".metadata")
    }

    func lock(_ path: RepoFilePath) -> URL { bookkeeping.appendingPathComponent("download/" + path.value + ".lock") }

    func partial(_ path: RepoFilePath) -> URL {
        bookkeeping.appendingPathComponent("download/" + path.value + ".incomplete")
    }

    /// What a `.metadata` file says.
    struct Metadata: Equatable {
        var commit: String
        var etag: String
        /// Seconds since 1970 when the file was written.
        var timestamp: Double
    }

    /// The metadata of `path`, when it exists and still describes the file: huggingface_hub trusts it only if the
    /// file was not modified more than a second after the metadata's time.
    func trustedMetadata(_ path: RepoFilePath) -> Metadata? {
        guard let text = try? String(contentsOf: metadata(path), encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard lines.count >= 3, let timestamp = Double(lines[2]),
            let status = FileStatus(path: file(path).path), status.kind == .file,
            Double(status.modifiedNanoseconds) / 1e9 - timestamp <= 1
        else { return nil }
        return Metadata(commit: lines[0], etag: lines[1], timestamp: timestamp)
    }

    /// Records that `path` now holds the blob `etag` of `commit`, written just now.
    func recordMetadata(_ path: RepoFilePath, commit: String, etag: String) throws {
        let url = metadata(path)
        try HubCache.createFolder(url.deletingLastPathComponent())
        let text = "\(commit)\n\(etag)\n\(Date().timeIntervalSince1970)\n"
        do {
            try AtomicFile.replace(Array(text.utf8), atPath: url.path, temporarySuffix: ".\(UUID().uuidString).tmp")
        } catch {
            throw POSIXFailure.error(error.operation, errno: error.code)
        }
    }

    /// Whether a file a pull wrote is at `path`: huggingface_hub's metadata for it is in
    /// `.cache/huggingface/download/` (whether or not the file changed since). Any other file there is the user's.
    func isOurs(_ path: RepoFilePath) -> Bool {
        FileStatus(path: metadata(path).path, followingLinks: false)?.kind == .file
    }

    /// Refuses a repository path that would write into a git folder (`.git`, in any case, and with the trailing
    /// dots and spaces Windows drops): a listing naming `.git/config` or `.git/hooks/…` would make the user's next
    /// git command in the folder run code.
    /// A path component as a case-insensitive volume (APFS, NTFS) sees it: lower case, trailing dots and spaces gone.
    static func foldedName(_ component: String) -> String {
        var name = Substring(component.lowercased())
        while let last = name.last, last == "." || last == " " { name = name.dropLast() }
        return String(name)
    }

    static func checkNotGit(_ path: RepoFilePath) throws {
        for component in path.components {
            if foldedName(component) == ".git" {
                throw ModelDepotError(
                    .protocolViolation,
                    "Refusing the repository path '\(path)': a local directory never gets files inside a .git folder.")
            }
        }
    }

    /// The `.gitignore` and `CACHEDIR.TAG` huggingface_hub writes into `.cache/huggingface/`.
    func prepare() throws {
        try HubCache.createFolder(bookkeeping)
        let gitignore = bookkeeping.appendingPathComponent(".gitignore")
        if !FileManager.default.fileExists(atPath: gitignore.path) {
            try? Data("*".utf8).write(to: gitignore, options: .atomic)
        }
        try HubCache(root: bookkeeping).writeCacheDirectoryTag()
    }

    /// Fails before any transfer when `work` cannot fit in this folder's volume (files an interrupted pull left
    /// bytes of already have their room); a volume that does not say how much is free is not checked.
    func checkSpace(for work: PullWork, of request: SnapshotRequest, using fileSystem: any DownloadFileSystem) throws {
        guard work.diskNeeded > 0, let available = try? fileSystem.availableSpace(forPath: root.path),
            available < work.diskNeeded
        else { return }
        throw ModelDepotError(
            .insufficientDiskSpace,
            "Not enough disk space for \(request.repo) in \(root.path): it needs \(work.diskNeeded) more bytes, \(available) are free. Free \(work.diskNeeded - available) bytes, or pull into a folder on another disk.",
            remedy: .freeSpace)
    }
}

extension SnapshotDownloader {
    /// Whether `path` in `directory` already holds the file the listing names, by huggingface_hub's rules: its
    /// metadata names this commit or this etag; or, with no metadata, an LFS file whose SHA-256 matches or a
    /// small file whose git blob id does (the metadata is then written, as Python writes it, unless `recording`
    /// is off).
    func isUpToDate(
        _ path: RepoFilePath, file: RecordedTree.File, commit: String, in directory: LocalDirectory,
        recording: Bool = true
    ) -> Bool {
        if let metadata = directory.trustedMetadata(path) {
            return metadata.commit == commit || metadata.etag == file.etag
        }
        guard CacheScanner.regularFileSize(directory.file(path).path) == file.size else { return false }
        if let sha256 = file.lfsSHA256 {
            guard (try? FileDigests.sha256(ofFileAt: directory.file(path).path)) == sha256 else { return false }
        } else {
            // A small file (a git clone's config.json): its git blob id is the listing's.
            guard HubEncoding.isGitID(file.blobID), file.size <= 16 << 20,
                let bytes = FileManager.default.contents(atPath: directory.file(path).path),
                GitBlob.id(of: [UInt8](bytes)) == file.blobID.lowercased()
            else { return false }
        }
        if recording { try? directory.recordMetadata(path, commit: commit, etag: file.etag) }
        return true
    }

    /// Downloads one file into `directory` (resumable, verified, replacing a stale file in one rename) and
    /// records its metadata; returns the bytes received.
    func fetch(
        _ listed: ListedFile, into directory: LocalDirectory, engine: Downloader, tracker: SnapshotProgressTracker
    ) async throws -> Int64 {
        let (path, commit, file, request) = (listed.path, listed.commit, listed.listing, listed.request)
        do {
            let etag = file.etag
            try HubCache.createFolder(directory.lock(path).deletingLastPathComponent())
            let result = try await downloadFromFirstThatAnswers(
                path, of: request, commit: commit, etag: etag, size: file.size, engine: engine, tracker: tracker
            ) { url, headers in
                var download = DownloadRequest(
                    url: url, destination: directory.file(path),
                    expectedSHA256: HubEncoding.isSHA256(etag) ? etag : nil, expectedSize: file.size,
                    expectedGitBlobID: HubEncoding.isGitID(etag) ? etag : nil, headers: headers
                ).placingWorkFiles(
                    partial: directory.partial(path).path, resumeRecord: directory.partial(path).path + ".json",
                    sharedLock: directory.lock(path).path)
                // A file there that the metadata does not vouch for is stale: fetched again, replaced in one rename.
                download.replacesExisting = true
                return download
            }
            try directory.recordMetadata(path, commit: commit, etag: etag)
            tracker.fileFinished(path.value, size: file.size)
            return result.bytesReceived
        } catch let error as ModelDepotError {
            tracker.fileAbandoned(path.value)
            throw Self.naming(path, in: error)
        }
    }
}
