import Foundation
import ModelDepotCache
import ModelDepotCore

/// What ModelDepot keeps beside a blob it pulled through Xet (`<repo>/.modeldepot/xet/<etag>.json`, outside
/// Python's layout): the file's terms — each a xorb, the chunks of it the term holds, where they start in the file,
/// and each chunk's length and hash. A later pull of a file that shares those chunks (the next revision, another
/// quantisation) copies them from this blob instead of fetching them, each checked against its hash first.
package struct XetRecord: Sendable, Codable, Equatable {
    package struct Term: Sendable, Codable, Equatable {
        package var xorb: String
        /// The index of the term's first chunk in the xorb.
        package var start: Int
        /// Where the term starts in the file.
        package var offset: Int64
        package var lengths: [Int]
        package var hashes: [String]
    }

    package var fileHash: String
    package var size: Int64
    package var terms: [Term]

    /// Where a chunk is on disk: in which blob, at which offset, how long, and the hash it must have.
    package struct LocalChunk: Sendable, Equatable {
        package var path: String
        package var offset: Int64
        package var length: Int
        package var hash: String
    }

    /// The chunks on disk by xorb and index in it.
    package struct LocalChunks: Sendable {
        var chunks: [String: [Int: LocalChunk]] = [:]

        package init() {}

        package func chunk(_ xorb: String, _ index: Int) -> LocalChunk? { chunks[xorb]?[index] }

        package var isEmpty: Bool { chunks.isEmpty }

        /// Adds what `record` says `blob` holds of `xorbs` (all when nil). A record is ModelDepot's own file, but a
        /// file on disk all the same: terms whose numbers cannot be a blob's are skipped, never trusted.
        package mutating func add(_ record: XetRecord, blob: String, xorbs: Set<String>? = nil) {
            for term in record.terms
            where term.lengths.count == term.hashes.count && xorbs?.contains(term.xorb) != false
                && (0...(1 << 24)).contains(term.start) && (0...record.size).contains(term.offset)
                && term.lengths.allSatisfy({ (1...(1 << 17)).contains($0) })
                && term.lengths.count <= 1 << 24
                && term.lengths.reduce(Int64(0), { $0 + Int64($1) }) <= record.size - term.offset
            {
                var offset = term.offset
                for (position, length) in term.lengths.enumerated() {
                    chunks[term.xorb, default: [:]][term.start + position] = LocalChunk(
                        path: blob, offset: offset, length: length, hash: term.hashes[position])
                    offset += Int64(length)
                }
            }
        }
    }

    static func folder(of repository: CachedRepository) -> URL {
        repository.folder.appendingPathComponent(".modeldepot/xet", isDirectory: true)
    }

    /// Keeps `self` for the blob `etag` of `repository`.
    func save(for etag: String, in repository: CachedRepository) throws {
        let folder = Self.folder(of: repository)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try JSONEncoder().encode(self).write(to: folder.appendingPathComponent("\(etag).json"), options: .atomic)
    }

    /// The chunks of `xorbs` in the blobs of `repository` pulled through Xet and still there whole. Only records
    /// that name one of the xorbs are decoded, so the cost follows what the new file shares, not the repository.
    static func localChunks(in repository: CachedRepository, xorbs: Set<String>) -> LocalChunks {
        var local = LocalChunks()
        let needles = xorbs.map { Data($0.utf8) }
        let folder = folder(of: repository)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        where name.hasSuffix(".json") {
            let etag = String(name.dropLast(5))
            guard HubEncoding.isSHA256(etag),
                let data = try? Data(contentsOf: folder.appendingPathComponent(name)),
                needles.contains(where: { data.range(of: $0) != nil }),
                let record = try? JSONDecoder().decode(XetRecord.self, from: data)
            else { continue }
            let blob = repository.blob(etag).path
            guard CacheScanner.regularFileSize(blob) == record.size else { continue }
            local.add(record, blob: blob, xorbs: xorbs)
        }
        return local
    }
}
