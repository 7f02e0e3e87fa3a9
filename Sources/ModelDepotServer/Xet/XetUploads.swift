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
    /// Bytes kept at most (xorbs, their layouts and the file records): a client with a write token cannot fill the
    /// disk.
    let limit: Int64
    /// Free space left on the volume at least after anything is kept.
    static let reserve: Int64 = 1 << 30
    /// The largest xorb body taken: 64 MiB of chunks, their headers, and room for chunks LZ4 made no smaller.
    static let maximumXorbBody = 80 << 20
    static let maximumShardBody = 16 << 20
    /// Chunks one shard's files may cite in all (2M chunks: about 128 GiB of files). Every cited chunk costs a hash
    /// to check; a small shard citing one big xorb's chunks over and over must not cost gigabytes.
    static let maximumCitedChunks = 2_000_000

    private var used: Int64?
    private var layouts: [String: XorbLayout] = [:]
    private var files: [String: File]?
    /// For each xorb, the chunk ranges each repository's recorded files cite: what that repository's read token
    /// may fetch of it.
    private var cited: [String: [String: [Range<Int>]]] = [:]
    /// Uploads of a xorb in progress: a second upload of the same xorb waits for the first rather than racing it.
    private var storing: [String: Task<Bool, any Error>] = [:]
    /// The shard being recorded: shards are recorded one at a time, so two never interleave their writes.
    private var recording: Task<Void, Never>?

    init(folder: URL, limit: Int64 = 16 << 30) {
        self.folder = folder
        self.limit = limit
    }

    private var xorbFolder: URL { folder.appendingPathComponent("xorbs") }
    private var fileFolder: URL { folder.appendingPathComponent("files") }

    /// Keeps the xorb `hash` sent as `bytes` once they prove to be it; false when it was already kept (or another
    /// upload of it, running now, keeps it).
    func storeXorb(_ bytes: [UInt8], as hash: XetHash) async throws -> Bool {
        let name = hash.description
        while let running = storing[name] {
            if (try? await running.value) != nil { return false }
            if storing[name] == running { storing[name] = nil }
        }
        // No suspension between the check above and taking the slot: a second upload waits for this one.
        let task = Task { () async throws -> Bool in
            if try await self.layout(name) != nil { return false }
            return try await self.keep(bytes, as: hash)
        }
        storing[name] = task
        defer { if storing[name] == task { storing[name] = nil } }
        return try await task.value
    }

    private func keep(_ bytes: [UInt8], as hash: XetHash) async throws -> Bool {
        let name = hash.description
        // The quota is taken before the first wait, so uploads in parallel cannot all pass one check.
        let cost = Int64(bytes.count) + Int64(bytes.count / 100) + 4096
        try await reserve(cost, for: "xorb \(name)")
        let folder = xorbFolder
        do {
            let layout = try await BlockingWork.run { () throws -> XorbLayout in
                let layout: XorbLayout
                do {
                    layout = try XorbLayout.verifying(bytes, as: hash)
                } catch let error as XorbChunks.Malformed {
                    throw Refusal(status: 400, message: "Xorb \(name) refused: \(error.description).")
                }
                try Self.checkFreeSpace(at: folder, for: Int64(bytes.count))
                // Both under temporary names, then renamed, the bytes first: the layout that makes them visible
                // never appears beside other bytes, and a crash between leaves nothing served.
                let target = folder.appendingPathComponent(name)
                let temporary = folder.appendingPathComponent(".\(name).\(UUID().uuidString)")
                try Data(bytes).write(to: temporary)
                do {
                    try AtomicFile.moveIntoPlace(temporary.path, atPath: target.path)
                } catch {
                    try? FileManager.default.removeItem(at: temporary)
                    throw ModelDepotError(.fileSystem, "\(error)")
                }
                try JSONEncoder().encode(layout).write(
                    to: folder.appendingPathComponent("\(name).json"), options: .atomic)
                return layout
            }
            layouts[name] = layout
            return true
        } catch {
            used = (used ?? cost) - cost
            throw error
        }
    }

    /// Takes `cost` bytes of the quota, or refuses with 507.
    private func reserve(_ cost: Int64, for what: String) async throws {
        let current = try await usedBytes()
        guard current + cost <= limit else {
            throw Refusal(
                status: 507, message: "This CAS keeps at most \(limit) bytes of uploads and is full; \(what) not kept.")
        }
        used = (used ?? current) + cost
    }

    private static func checkFreeSpace(at folder: URL, for bytes: Int64) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        guard (try? VolumeSpace.availableBytes(atPath: folder.path)) ?? 0 >= bytes + reserve else {
            throw Refusal(status: 507, message: "The mirror's disk is nearly full; the upload was not kept.")
        }
    }

    /// Records the files of `shard` for `repository`, after checking every one: each xorb it lists or cites was
    /// uploaded (and a listed one has the chunks listed), each segment's chunks exist and add up to the bytes it
    /// says, and the file's hash is the one its chunks make. Nothing is recorded unless all are. Shards are recorded
    /// one at a time. False when every file was already recorded for the repository.
    func record(_ shard: XetShard, for repository: String) async throws -> Bool {
        let previous = recording
        let task = Task { () async throws -> Bool in
            await previous?.value
            return try await self.recordNow(shard, for: repository)
        }
        recording = Task { _ = try? await task.value }
        return try await task.value
    }

    private func recordNow(_ shard: XetShard, for repository: String) async throws -> Bool {
        let known = try await loadFiles()
        let citedChunks = shard.files.reduce(0) { total, file in
            file.segments.reduce(total) { $0 + $1.chunks.count }
        }
        guard citedChunks <= Self.maximumCitedChunks else {
            throw Refusal(
                status: 400,
                message: "The shard cites \(citedChunks) chunks, past the \(Self.maximumCitedChunks) one "
                    + "shard may.")
        }
        var needed: [String: XorbLayout] = [:]
        for name in Set(
            shard.xorbs.map(\.hash.description) + shard.files.flatMap { $0.segments.map(\.xorb.description) })
        {
            guard let layout = try await layout(name) else {
                throw Refusal(status: 400, message: "The shard cites xorb \(name), which was not uploaded first.")
            }
            needed[name] = layout
        }
        let layouts = needed
        // Hashing every cited chunk's hash into its file's: off the cooperative pool.
        let checked = try await BlockingWork.run { () throws -> [File] in
            for xorb in shard.xorbs
            where layouts[xorb.hash.description]?.chunks.map(\.hash) != xorb.chunks.map(\.hash.description) {
                throw Refusal(status: 400, message: "The shard lists chunks xorb \(xorb.hash) does not hold.")
            }
            return try shard.files.map { try Self.check($0, layouts: layouts) }
        }
        var recorded: [File] = []
        for var file in checked {
            if let earlier = known[file.hash] {
                guard !earlier.repositories.contains(repository) else { continue }
                file.repositories = earlier.repositories
            }
            file.repositories.insert(repository)
            recorded.append(file)
        }
        let encoded = try recorded.map { try JSONEncoder().encode($0) }
        let cost = Int64(encoded.reduce(0) { $0 + $1.count + 4096 })
        try await reserve(cost, for: "the shard's files")
        let folder = fileFolder
        let names = recorded.map(\.hash)
        do {
            try await BlockingWork.run {
                try Self.checkFreeSpace(at: folder, for: Int64(encoded.reduce(0) { $0 + $1.count }))
                for (name, data) in zip(names, encoded) {
                    try data.write(to: folder.appendingPathComponent("\(name).json"), options: .atomic)
                }
            }
        } catch {
            used = (used ?? cost) - cost
            throw error
        }
        var current = files ?? known
        for file in recorded {
            current[file.hash] = file
            cite(file)
        }
        files = current
        return !recorded.isEmpty || shard.files.isEmpty
    }

    /// `file` checked against the xorbs it cites, as it will be recorded (for no repository yet).
    private static func check(_ file: XetShard.File, layouts: [String: XorbLayout]) throws -> File {
        var leaves: [(hash: XetHash, size: UInt64)] = []
        var segments: [File.Segment] = []
        for segment in file.segments {
            let name = segment.xorb.description
            guard let layout = layouts[name], segment.chunks.upperBound <= layout.chunks.count else {
                throw Refusal(status: 400, message: "File \(file.hash) cites chunks its xorb \(name) does not hold.")
            }
            let chunks = layout.chunks[segment.chunks]
            guard chunks.reduce(0, { $0 + $1.length }) == segment.unpackedBytes else {
                throw Refusal(status: 400, message: "File \(file.hash) says a size its xorb's chunks do not have.")
            }
            leaves += chunks.map { (XetHash(hex: $0.hash) ?? .zero, UInt64($0.length)) }
            segments.append(.init(xorb: name, start: segment.chunks.lowerBound, end: segment.chunks.upperBound))
        }
        guard XetHash.file(leaves) == file.hash else {
            throw Refusal(status: 400, message: "File \(file.hash) is not what its chunks make.")
        }
        let size = leaves.reduce(Int64(0)) { $0 + Int64($1.size) }
        return File(hash: file.hash.description, size: size, segments: segments, sha256: file.sha256, repositories: [])
    }

    /// Lets each of `file`'s repositories read the chunks it cites.
    private func cite(_ file: File) {
        for segment in file.segments {
            for repository in file.repositories {
                cited[segment.xorb, default: [:]][repository, default: []].append(segment.start..<segment.end)
            }
        }
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

    /// Where xorb `hash` is kept, how long it is, and the byte spans of it `repository` may read (those of the
    /// chunks its recorded files cite), when there are any.
    func xorb(_ hash: String, readableBy repository: String) async -> (path: String, length: Int, spans: [Range<Int>])?
    {
        _ = try? await loadFiles()
        guard let ranges = cited[hash]?[repository], let layout = try? await layout(hash) else { return nil }
        let spans = ranges.compactMap { range -> Range<Int>? in
            guard range.upperBound <= layout.chunks.count, !range.isEmpty else { return nil }
            let first = layout.chunks[range.lowerBound]
            let last = layout.chunks[range.upperBound - 1]
            return first.storedStart..<(last.storedStart + last.storedLength)
        }
        return (xorbFolder.appendingPathComponent(hash).path, layout.storedBytes, spans)
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
            for file in loaded.values { cite(file) }
        }
        return files ?? loaded
    }

    private func usedBytes() async throws -> Int64 {
        if let used { return used }
        let folder = self.folder
        let total = try await BlockingWork.run { () -> Int64 in
            // Xorbs, their layouts and the file records, as the quota counts them.
            var total: Int64 = 0
            for sub in [folder.appendingPathComponent("xorbs"), folder.appendingPathComponent("files")] {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: sub.path)) ?? []
                for name in names {
                    total += (FileStatus(path: sub.appendingPathComponent(name).path)?.size ?? 0) + 4096
                }
            }
            return total
        }
        if used == nil { used = total }
        return used ?? total
    }
}
