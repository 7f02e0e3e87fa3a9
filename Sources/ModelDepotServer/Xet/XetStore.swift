import Foundation
import ModelDepotCore
import ModelDepotPlatform
import ModelDepotXet

/// The mirror's Xet side (`serve --xet`): each file's Xet index, built once from its bytes in the background (when
/// ``XetIndexer`` walks the served files, or the first time the file is asked for) and kept on disk by content (a file's chunking never changes), so the first
/// plain download is never delayed; the short-lived read tokens the Hub's `xet-read-token` route hands out; and
/// what the CAS routes answer from them.
actor XetStore {
    struct Entry {
        var etag: String
        var index: XetFileIndex
        var diskPath: String
        /// The file on disk as it was indexed (size, modification and status-change times, inode): a file changed
        /// since is indexed again, and its bytes are never served under the old hashes.
        var stamp: Stamp
        /// The repositories (`models/acme/big`) that serve it: a token for one of them may read it.
        var repositories: Set<String>
        /// Where each xorb's first chunk starts in the file.
        var xorbOffsets: [Int64]
    }

    struct Token {
        let repository: String
        let expires: Date
        /// A write token (the `xet-write-token` route's) may also upload xorbs and shards.
        let writes: Bool
    }

    let folder: URL
    /// How long a read token lasts (the Hub's last about an hour; clients refresh them through the token route).
    let tokenLifetime: TimeInterval
    private var entries: [String: Entry] = [:]
    /// File and xorb hashes to what holds them: several files may share one (the same content in two
    /// repositories, a shared first xorb).
    private var etagsOfFile: [String: Set<String>] = [:]
    private var xorbs: [String: [(etag: String, xorb: Int)]] = [:]
    private var building: Set<String> = []
    /// Builds that failed, and when: not tried again for a minute (a file still being written, one gone).
    private var failed: [String: Date] = [:]
    private var tokens: [String: Token] = [:]
    /// Files indexed at once; more wait for a later request (each build reads and hashes a whole file).
    static let concurrentBuilds = 2
    /// Tokens kept at most (the oldest go first): minting them must not grow memory without bound.
    static let maximumTokens = 10_000

    /// What clients upload, when the mirror takes uploads (`serve --xet-uploads`).
    let uploads: XetUploads?

    init(
        folder: URL, tokenLifetime: TimeInterval = 3600, acceptsUploads: Bool = false, uploadLimit: Int64 = 16 << 30
    ) {
        self.folder = folder
        self.tokenLifetime = tokenLifetime
        uploads =
            acceptsUploads ? XetUploads(folder: folder.appendingPathComponent("uploads"), limit: uploadLimit) : nil
    }

    /// `file`'s index when it is built and the file on disk is still what was indexed; nil while it is being built
    /// (started now if it was not and a build slot is free), or when the file is empty, not on disk, or failed to
    /// index within the last minute.
    func index(for file: ServedFile, repository: String) async -> XetFileIndex? {
        guard file.size > 0, let stamp = Self.stamp(of: file.diskPath), stamp.size == file.size else { return nil }
        let size = stamp.size
        let etag = file.etag
        if var entry = entries[etag] {
            if entry.diskPath == file.diskPath || Self.stamp(of: entry.diskPath) != entry.stamp {
                guard entry.stamp == stamp, entry.index.size == size else {
                    // Changed on disk since it was indexed: its hashes no longer describe its bytes.
                    forget(etag)
                    return nil
                }
                entry.diskPath = file.diskPath
            }
            // Else another copy of the same content (the same SHA-256, in another folder or repository): the
            // indexed file is still as it was and stays the one the CAS reads. (Taking each asking copy's path
            // made the two copies' stamps undo each other's index on every request.)
            guard entry.index.size == size else { return nil }
            entry.repositories.insert(repository)
            entries[etag] = entry
            // A file citing another file's xorbs is offered only while those are served (after a restart, once
            // the other file is asked for again): a reconstruction must never name a xorb nobody serves.
            return citesOnlyServedXorbs(entry.index, repository: repository) ? entry.index : nil
        }
        guard !building.contains(etag), building.count < Self.concurrentBuilds,
            HubEncoding.isSHA256(etag) || HubEncoding.isGitID(etag)
        else { return nil }
        if let when = failed[etag], Date().timeIntervalSince(when) < 60 { return nil }
        building.insert(etag)
        let saved = folder.appendingPathComponent("\(etag).json")
        let path = file.diskPath
        let folder = folder
        // The other files' indexes (copies share storage): the map of their chunks is built off the actor, and
        // only when no kept index is loaded.
        let others = entries.values.filter { $0.repositories.contains(repository) }.map(\.index)
        Task {
            // A kept index is read, checked and used; else the file is read whole and indexed.
            let index = try? await BlockingWork.run { () -> XetFileIndex in
                if let kept = try? Self.load(saved, size: size) { return kept }
                // At a lower priority: the downloads the mirror serves meanwhile come first.
                let index = try BackgroundPriority.run {
                    try Self.build(path: path, size: size, known: Self.knownChunks(in: others))
                }
                guard Self.stamp(of: path) == stamp else {
                    throw ModelDepotError(.sourceChanged, "\(path) changed while it was indexed.")
                }
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try JSONEncoder().encode(index).write(to: saved, options: .atomic)
                return index
            }
            await self.finishBuilding(index, etag: etag, path: path, stamp: stamp, repository: repository)
        }
        return nil
    }

    private func finishBuilding(
        _ index: XetFileIndex?, etag: String, path: String, stamp: Stamp, repository: String
    ) {
        building.remove(etag)
        guard let index else {
            failed[etag] = Date()
            return
        }
        failed[etag] = nil
        entries[etag] = Entry(
            etag: etag, index: index, diskPath: path, stamp: stamp, repositories: [repository],
            xorbOffsets: index.xorbOffsets())
        etagsOfFile[index.fileHash, default: []].insert(etag)
        for (position, xorb) in index.xorbs.enumerated() where xorb.isOwned {
            xorbs[xorb.hash, default: []].append((etag, position))
        }
    }

    /// The chunks of the own xorbs of `indexes` (the files a repository serves), by hash: a new file of the
    /// repository (the next revision of a file, another quantisation) cites them rather than storing them again, so
    /// a client that has the other file fetches only what differs.
    static func knownChunks(in indexes: [XetFileIndex]) -> [String: XetFileIndex.KnownChunk] {
        var known: [String: XetFileIndex.KnownChunk] = [:]
        for index in indexes {
            for xorb in index.xorbs where xorb.isOwned {
                var stored = 0
                for (offset, chunk) in index.chunks[xorb.firstChunk..<xorb.endChunk].enumerated() {
                    known[chunk.hash] = .init(xorb: xorb.hash, index: offset, storedStart: stored)
                    stored += chunk.length + XorbChunks.headerLength
                }
            }
        }
        return known
    }

    /// Whether the index of `etag` is being built now.
    func isBuilding(_ etag: String) -> Bool { building.contains(etag) }

    /// Whether a build may start now.
    var hasFreeBuildSlot: Bool { building.count < Self.concurrentBuilds }

    /// Whether every xorb `index` cites from another file is served to `repository` now.
    func citesOnlyServedXorbs(_ index: XetFileIndex, repository: String) -> Bool {
        index.xorbs.allSatisfy { $0.isOwned || xorb($0.hash, readableBy: repository) != nil }
    }

    /// The Xet hash of the file `etag` names, when its index is built and `repository` may read all of it (a listing
    /// never starts a build).
    func readyFileHash(etag: String, repository: String) -> String? {
        guard let entry = entries[etag], entry.repositories.contains(repository),
            citesOnlyServedXorbs(entry.index, repository: repository)
        else { return nil }
        return entry.index.fileHash
    }

    /// Drops what is known of `etag` (its file changed, or a read of it failed).
    func forget(_ etag: String) {
        guard let entry = entries.removeValue(forKey: etag) else { return }
        etagsOfFile[entry.index.fileHash]?.remove(etag)
        for xorb in entry.index.xorbs where xorb.isOwned { xorbs[xorb.hash]?.removeAll { $0.etag == etag } }
    }

    /// What identifies a file's content on disk without reading it.
    struct Stamp: Sendable, Equatable {
        let size: Int64
        let modified: Int64
        let changed: Int64
        let inode: UInt64
    }

    /// A regular file's stamp now; nil when there is none at `path`.
    static func stamp(of path: String) -> Stamp? {
        guard let status = FileStatus(path: path), status.kind == .file else { return nil }
        return Stamp(
            size: status.size, modified: status.modifiedNanoseconds, changed: status.changedNanoseconds,
            inode: status.inode)
    }

    /// Reads `file` in pieces and indexes it, citing `known` chunks where it has them; fails when it is not `size`
    /// bytes.
    static func build(path: String, size: Int64, known: [String: XetFileIndex.KnownChunk] = [:]) throws
        -> XetFileIndex
    {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ModelDepotError(.fileSystem, "Cannot open \(path) to index it for Xet.")
        }
        defer { try? handle.close() }
        var builder = XetFileIndex.Builder()
        builder.known = known
        var read: Int64 = 0
        while let piece = try handle.read(upToCount: 8 << 20), !piece.isEmpty {
            read += Int64(piece.count)
            piece.withUnsafeBytes { builder.feed($0) }
        }
        guard read == size else {
            throw ModelDepotError(.sizeMismatch, "\(path) has \(read) bytes, not the \(size) listed.")
        }
        return builder.finish()
    }

    /// A kept index, when it is a consistent one of a file of `size` bytes.
    static func load(_ url: URL, size: Int64) throws -> XetFileIndex {
        let index = try JSONDecoder().decode(XetFileIndex.self, from: Data(contentsOf: url))
        guard index.isConsistent(size: size) else {
            throw ModelDepotError(.sizeMismatch, "\(url.path) is not an index of this file.")
        }
        return index
    }

    // MARK: Tokens

    /// A new token for `repository` (a read token, or a write token that reads too), and when it expires.
    func issueToken(for repository: String, writes: Bool = false) -> (token: String, expires: Date) {
        let now = Date()
        if tokens.count >= Self.maximumTokens {
            tokens = tokens.filter { $0.value.expires > now }
            // Still full: the ones closest to expiry go.
            for (token, _) in tokens.sorted(by: { $0.value.expires < $1.value.expires }).prefix(tokens.count / 10 + 1) {
                tokens[token] = nil
            }
        }
        var random = SystemRandomNumberGenerator()
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &random)) }.joined()
        let expires = now.addingTimeInterval(tokenLifetime)
        tokens[token] = Token(repository: repository, expires: expires, writes: writes)
        return (token, expires)
    }

    /// The repository `token` may read, when it is one this store issued and it has not expired.
    func repository(of token: String) -> String? {
        guard let found = tokens[token], found.expires > Date() else { return nil }
        return found.repository
    }

    /// The repository `token` may write to, when it is a write token this store issued and it has not expired.
    func repository(writingWith token: String) -> String? {
        guard let found = tokens[token], found.writes, found.expires > Date() else { return nil }
        return found.repository
    }

    // MARK: CAS

    /// The index of the file whose Xet hash is `fileHash`, when `repository` serves it.
    func file(_ fileHash: String, readableBy repository: String) -> Entry? {
        etagsOfFile[fileHash]?.lazy.compactMap { self.entries[$0] }.first {
            $0.repositories.contains(repository) && self.citesOnlyServedXorbs($0.index, repository: repository)
        }
    }

    /// The xorb `hash`, the file that holds it and where, when `repository` serves that file.
    func xorb(_ hash: String, readableBy repository: String) -> (entry: Entry, position: Int)? {
        for (etag, position) in xorbs[hash] ?? [] {
            if let entry = entries[etag], entry.repositories.contains(repository) { return (entry, position) }
        }
        return nil
    }
}
