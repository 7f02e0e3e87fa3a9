import Foundation
import ModelDepotCore
import ModelDepotXet

/// The mirror's Xet side (`serve --xet`): each file's Xet index, built once from its bytes in the background the
/// first time the file is asked for and kept on disk by content (a file's chunking never changes), so the first
/// plain download is never delayed; the short-lived read tokens the Hub's `xet-read-token` route hands out; and
/// what the CAS routes answer from them.
actor XetStore {
    struct Entry {
        var index: XetFileIndex
        var diskPath: String
        /// The repositories (`models/acme/big`) that serve it: a token for one of them may read it.
        var repositories: Set<String>
    }

    struct Token {
        let repository: String
        let expires: Date
    }

    let folder: URL
    /// How long a read token lasts (the Hub's last about an hour; clients refresh them through the token route).
    let tokenLifetime: TimeInterval
    private var entries: [String: Entry] = [:]
    private var etagOfFile: [String: String] = [:]
    private var xorbs: [String: (etag: String, xorb: Int)] = [:]
    private var building: Set<String> = []
    private var tokens: [String: Token] = [:]

    init(folder: URL, tokenLifetime: TimeInterval = 3600) {
        self.folder = folder
        self.tokenLifetime = tokenLifetime
    }

    /// `file`'s index when it is built; nil while it is being built (started now if it was not), or when the file
    /// is empty or not on disk. Cheap after the first time.
    func index(for file: ServedFile, repository: String) async -> XetFileIndex? {
        guard file.size > 0 else { return nil }
        let etag = file.etag
        if var entry = entries[etag] {
            if !entry.repositories.contains(repository) {
                entry.repositories.insert(repository)
                entry.diskPath = file.diskPath
                entries[etag] = entry
            }
            return entry.index
        }
        guard !building.contains(etag), HubEncoding.isSHA256(etag) || HubEncoding.isGitID(etag) else { return nil }
        building.insert(etag)
        let saved = folder.appendingPathComponent("\(etag).json")
        // A kept index is read at once (a small file); one to build is built in the background.
        if let kept = try? await BlockingWork.run({ try Self.load(saved, size: file.size) }) {
            register(kept, etag: etag, file: file, repository: repository)
            return kept
        }
        let path = file.diskPath
        let folder = folder
        Task {
            let built = try? await BlockingWork.run { () -> XetFileIndex in
                let index = try Self.build(path: path, size: file.size)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let data = try JSONEncoder().encode(index)
                try data.write(to: saved, options: .atomic)
                return index
            }
            await self.finishBuilding(built, etag: etag, file: file, repository: repository)
        }
        return nil
    }

    private func finishBuilding(_ index: XetFileIndex?, etag: String, file: ServedFile, repository: String) {
        if let index { register(index, etag: etag, file: file, repository: repository) }
        building.remove(etag)
    }

    private func register(_ index: XetFileIndex, etag: String, file: ServedFile, repository: String) {
        building.remove(etag)
        entries[etag] = Entry(index: index, diskPath: file.diskPath, repositories: [repository])
        etagOfFile[index.fileHash] = etag
        for (position, xorb) in index.xorbs.enumerated() { xorbs[xorb.hash] = (etag, position) }
    }

    /// Reads `file` in pieces and indexes it; fails when it is not `size` bytes.
    static func build(path: String, size: Int64) throws -> XetFileIndex {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ModelDepotError(.fileSystem, "Cannot open \(path) to index it for Xet.")
        }
        defer { try? handle.close() }
        var builder = XetFileIndex.Builder()
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

    /// A kept index, when it is one of a file of `size` bytes.
    static func load(_ url: URL, size: Int64) throws -> XetFileIndex {
        let index = try JSONDecoder().decode(XetFileIndex.self, from: Data(contentsOf: url))
        guard index.size == size, index.chunks.reduce(0, { $0 + Int64($1.length) }) == size else {
            throw ModelDepotError(.sizeMismatch, "\(url.path) is not an index of this file.")
        }
        return index
    }

    // MARK: Tokens

    /// A new read token for `repository`, and when it expires.
    func issueToken(for repository: String) -> (token: String, expires: Date) {
        let now = Date()
        tokens = tokens.filter { $0.value.expires > now }
        var random = SystemRandomNumberGenerator()
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &random)) }.joined()
        let expires = now.addingTimeInterval(tokenLifetime)
        tokens[token] = Token(repository: repository, expires: expires)
        return (token, expires)
    }

    /// The repository `token` may read, when it is one this store issued and it has not expired.
    func repository(of token: String) -> String? {
        guard let found = tokens[token], found.expires > Date() else { return nil }
        return found.repository
    }

    // MARK: CAS

    /// The index of the file whose Xet hash is `fileHash`, when `repository` serves it.
    func file(_ fileHash: String, readableBy repository: String) -> Entry? {
        guard let etag = etagOfFile[fileHash], let entry = entries[etag], entry.repositories.contains(repository)
        else { return nil }
        return entry
    }

    /// The xorb `hash`, its file's index and path, when `repository` serves that file.
    func xorb(_ hash: String, readableBy repository: String) -> (entry: Entry, xorb: XetFileIndex.Xorb)? {
        guard let (etag, position) = xorbs[hash], let entry = entries[etag], entry.repositories.contains(repository)
        else { return nil }
        return (entry, entry.index.xorbs[position])
    }
}
