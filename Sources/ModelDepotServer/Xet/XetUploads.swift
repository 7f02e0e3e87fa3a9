import Foundation
import ModelDepotCore
import ModelDepotPlatform
import ModelDepotXet

/// What clients upload to the mirror's CAS (`serve --xet --xet-uploads`), as they upload to the Hub's (Xet
/// documentation, "Upload protocol"): xorbs, each checked against the hash it is sent under and kept with where its
/// chunks are; then shards recording files as ranges of those xorbs' chunks, each file's hash recomputed from the
/// chunks before it is recorded. Recorded files are read back through reconstructions by the repository whose write
/// token recorded them; they do not become repository files. Kept on disk under `folder`, so a restart keeps them.
actor XetUploads {
    /// A file a shard recorded.
    struct File: Codable, Sendable {
        struct Segment: Codable, Sendable {
            var xorb: String
            var start: Int
            var end: Int
        }

        var hash: String
        var size: Int64
        var segments: [Segment]
        var sha256: String?
        /// The repositories (`models/acme/big`) whose write tokens recorded it: a read token of one may read it.
        var repositories: Set<String>
    }

    /// Why an upload is refused, with the status the CAS answers.
    struct Refusal: Error {
        let status: Int
        let message: String
    }

    let folder: URL
    /// Bytes of xorbs kept at most: a client with a write token cannot fill the disk.
    let limit: Int64
    /// Free space left on the volume at least after a xorb is kept.
    static let reserve: Int64 = 1 << 30
    /// The largest xorb body taken: 64 MiB of chunks, their headers, and room for chunks LZ4 made no smaller.
    static let maximumXorbBody = 80 << 20
    static let maximumShardBody = 16 << 20

    private var used: Int64?
    private var layouts: [String: XorbLayout] = [:]
    private var files: [String: File]?
    /// Xorb hashes to the repositories whose recorded files cite them: what a read token may fetch.
    private var readers: [String: Set<String>] = [:]

    init(folder: URL, limit: Int64 = 16 << 30) {
        self.folder = folder
        self.limit = limit
    }

    private var xorbFolder: URL { folder.appendingPathComponent("xorbs") }
    private var fileFolder: URL { folder.appendingPathComponent("files") }

    /// Keeps the xorb `hash` sent as `bytes` once they prove to be it; false when it was already kept.
    func storeXorb(_ bytes: [UInt8], as hash: XetHash) async throws -> Bool {
        let name = hash.description
        if try await layout(name) != nil { return false }
        let used = try await usedBytes()
        guard used + Int64(bytes.count) <= limit else {
            throw Refusal(status: 507, message: "This CAS keeps at most \(limit) bytes of uploads and is full.")
        }
        let folder = xorbFolder
        let layout = try await BlockingWork.run { () throws -> XorbLayout in
            let layout: XorbLayout
            do {
                layout = try XorbLayout.verifying(bytes, as: hash)
            } catch let error as XorbChunks.Malformed {
                throw Refusal(status: 400, message: "Xorb \(name) refused: \(error.description).")
            }
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            guard (try? VolumeSpace.availableBytes(atPath: folder.path)) ?? 0 >= Int64(bytes.count) + Self.reserve
            else { throw Refusal(status: 507, message: "The mirror's disk is nearly full; xorb \(name) not kept.") }
            // The bytes first, then the layout that makes them visible: a crash between leaves nothing served.
            try Data(bytes).write(to: folder.appendingPathComponent(name), options: .atomic)
            try JSONEncoder().encode(layout).write(to: folder.appendingPathComponent("\(name).json"), options: .atomic)
            return layout
        }
        // Another upload of the same xorb may have finished meanwhile; it is counted once.
        if layouts[name] == nil { self.used = (self.used ?? used) + Int64(bytes.count) }
        layouts[name] = layout
        return true
    }

    /// Records the files of `shard` for `repository`, after checking every one: each xorb it lists or cites was
    /// uploaded (and a listed one has the chunks listed), each segment's chunks exist and add up to the bytes it
    /// says, and the file's hash is the one its chunks make. Nothing is recorded unless all are. False when every
    /// file was already recorded for the repository.
    func record(_ shard: XetShard, for repository: String) async throws -> Bool {
        let known = try await loadFiles()
        for xorb in shard.xorbs {
            guard let layout = try await layout(xorb.hash.description) else {
                throw Refusal(status: 400, message: "The shard lists xorb \(xorb.hash), which was not uploaded first.")
            }
            guard layout.chunks.map(\.hash) == xorb.chunks.map(\.hash.description) else {
                throw Refusal(status: 400, message: "The shard lists chunks xorb \(xorb.hash) does not hold.")
            }
        }
        var recorded: [File] = []
        for file in shard.files {
            var leaves: [(hash: XetHash, size: UInt64)] = []
            var segments: [File.Segment] = []
            for segment in file.segments {
                let name = segment.xorb.description
                guard let layout = try await layout(name) else {
                    throw Refusal(status: 400, message: "File \(file.hash) cites xorb \(name), which was not uploaded.")
                }
                guard segment.chunks.upperBound <= layout.chunks.count else {
                    throw Refusal(
                        status: 400,
                        message: "File \(file.hash) cites chunks \(segment.chunks) of xorb \(name), which has "
                            + "\(layout.chunks.count).")
                }
                let chunks = layout.chunks[segment.chunks]
                guard chunks.reduce(0, { $0 + $1.length }) == segment.unpackedBytes else {
                    throw Refusal(
                        status: 400,
                        message: "File \(file.hash) says \(segment.unpackedBytes) bytes for chunks its "
                            + "xorb holds otherwise.")
                }
                leaves += chunks.map { (XetHash(hex: $0.hash) ?? .zero, UInt64($0.length)) }
                segments.append(.init(xorb: name, start: segment.chunks.lowerBound, end: segment.chunks.upperBound))
            }
            let computed = XetHash.file(leaves)
            guard computed == file.hash else {
                throw Refusal(status: 400, message: "File \(file.hash)'s chunks make \(computed), not its hash.")
            }
            let size = leaves.reduce(Int64(0)) { $0 + Int64($1.size) }
            var entry =
                known[file.hash.description]
                ?? File(
                    hash: file.hash.description, size: size, segments: segments, sha256: file.sha256, repositories: [])
            guard !entry.repositories.contains(repository) else { continue }
            entry.repositories.insert(repository)
            recorded.append(entry)
        }
        let folder = fileFolder
        let toWrite = recorded
        try await BlockingWork.run {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for file in toWrite {
                try JSONEncoder().encode(file).write(
                    to: folder.appendingPathComponent("\(file.hash).json"), options: .atomic)
            }
        }
        // Merged into what is known now: another shard may have been recorded while this one was written.
        var current = files ?? known
        for file in recorded {
            var merged = current[file.hash] ?? file
            merged.repositories.formUnion(file.repositories)
            current[file.hash] = merged
            for segment in file.segments { readers[segment.xorb, default: []].formUnion(merged.repositories) }
        }
        files = current
        return !recorded.isEmpty || shard.files.isEmpty
    }

    /// The recorded file `hash` and the pieces it is made of, when `repository` recorded it.
    func file(_ hash: String, readableBy repository: String) async -> (file: File, pieces: [XetReconstruction.Piece])? {
        guard let file = (try? await loadFiles())?[hash], file.repositories.contains(repository) else { return nil }
        var pieces: [XetReconstruction.Piece] = []
        for segment in file.segments {
            guard let layout = try? await layout(segment.xorb), segment.end <= layout.chunks.count else { return nil }
            let chunks = layout.chunks[segment.start..<segment.end]
            pieces.append(
                .init(
                    xorb: segment.xorb, firstChunk: segment.start, lengths: chunks.map(\.length),
                    storedStart: chunks.first?.storedStart ?? 0, storedLengths: chunks.map(\.storedLength)))
        }
        return (file, pieces)
    }

    /// Where xorb `hash` is kept and how long it is, when a file `repository` recorded cites it.
    func xorb(_ hash: String, readableBy repository: String) async -> (path: String, length: Int)? {
        _ = try? await loadFiles()
        guard readers[hash]?.contains(repository) == true, let layout = try? await layout(hash) else { return nil }
        return (xorbFolder.appendingPathComponent(hash).path, layout.storedBytes)
    }

    /// A kept xorb's layout, read once from disk and checked against the xorb's length.
    private func layout(_ hash: String) async throws -> XorbLayout? {
        if let layout = layouts[hash] { return layout }
        guard XetHash(hex: hash) != nil else { return nil }
        let bytes = xorbFolder.appendingPathComponent(hash)
        let kept = xorbFolder.appendingPathComponent("\(hash).json")
        let layout = try await BlockingWork.run { () -> XorbLayout? in
            guard let status = FileStatus(path: bytes.path), status.kind == .file,
                let data = try? Data(contentsOf: kept),
                let layout = try? JSONDecoder().decode(XorbLayout.self, from: data),
                layout.hash == hash, layout.isConsistent(storedBytes: Int(status.size))
            else { return nil }
            return layout
        }
        if let layout { layouts[hash] = layout }
        return layout
    }

    private func loadFiles() async throws -> [String: File] {
        if let files { return files }
        let folder = fileFolder
        let loaded = try await BlockingWork.run { () -> [String: File] in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            var loaded: [String: File] = [:]
            for name in names where name.hasSuffix(".json") {
                guard let data = try? Data(contentsOf: folder.appendingPathComponent(name)),
                    let file = try? JSONDecoder().decode(File.self, from: data), name == "\(file.hash).json"
                else { continue }
                loaded[file.hash] = file
            }
            return loaded
        }
        if files == nil {
            files = loaded
            for file in loaded.values {
                for segment in file.segments { readers[segment.xorb, default: []].formUnion(file.repositories) }
            }
        }
        return files ?? loaded
    }

    private func usedBytes() async throws -> Int64 {
        if let used { return used }
        let folder = xorbFolder
        let total = try await BlockingWork.run { () -> Int64 in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return names.reduce(Int64(0)) { total, name in
                total + (FileStatus(path: folder.appendingPathComponent(name).path)?.size ?? 0)
            }
        }
        if used == nil { used = total }
        return used ?? total
    }
}
