/// A shard as a client uploads it to record files (Xet documentation, "MDB Shard File Format Specification";
/// xet-core's `metadata_shard/shard_format.rs`, `file_structs.rs`, `xorb_structs.rs`): a 48-byte header (a 32-byte
/// tag, version 2, footer size), the file info section, the xorb info section, each closed by a bookend entry whose
/// hash is all ones, then — in shards a CAS serves, not in the ones clients upload (footer size 0) — lookup tables
/// and a footer, which are not read here. Every entry is 48 bytes; integers are little-endian; hashes are the raw
/// 32 bytes of a ``XetHash``.
public struct XetShard: Sendable, Equatable {
    /// A file's reconstruction: ranges of chunks of xorbs whose bytes, in order, are the file.
    public struct File: Sendable, Equatable {
        public struct Segment: Sendable, Equatable {
            public var xorb: XetHash
            /// Chunk indexes within the xorb, end exclusive.
            public var chunks: Range<Int>
            /// What the chunks add up to, uncompressed.
            public var unpackedBytes: Int

            public init(xorb: XetHash, chunks: Range<Int>, unpackedBytes: Int) {
                self.xorb = xorb
                self.chunks = chunks
                self.unpackedBytes = unpackedBytes
            }
        }

        public var hash: XetHash
        public var segments: [Segment]
        /// One range hash per segment, when the client sent them (`MDB_FILE_FLAG_WITH_VERIFICATION`).
        public var verification: [XetHash]?
        /// The file's SHA-256 as a hex digest, when the client sent it (`MDB_FILE_FLAG_WITH_METADATA_EXT`).
        public var sha256: String?

        public init(hash: XetHash, segments: [Segment], verification: [XetHash]? = nil, sha256: String? = nil) {
            self.hash = hash
            self.segments = segments
            self.verification = verification
            self.sha256 = sha256
        }
    }

    /// A xorb the client created, and its chunks: hash, where each starts uncompressed, its length.
    public struct Xorb: Sendable, Equatable {
        public struct Chunk: Sendable, Equatable {
            public var hash: XetHash
            public var start: Int
            public var length: Int

            public init(hash: XetHash, start: Int, length: Int) {
                self.hash = hash
                self.start = start
                self.length = length
            }
        }

        public var hash: XetHash
        public var chunks: [Chunk]
        public var unpackedBytes: Int

        public init(hash: XetHash, chunks: [Chunk], unpackedBytes: Int) {
            self.hash = hash
            self.chunks = chunks
            self.unpackedBytes = unpackedBytes
        }
    }

    public var files: [File]
    public var xorbs: [Xorb]

    public static let entryLength = 48
    static let tag: [UInt8] =
        Array("HFRepoMetaData".utf8) + [
            0, 85, 105, 103, 69, 106, 123, 129, 87, 131, 165, 189, 217, 92, 205, 209, 74, 169,
        ]
    static let withVerification: UInt32 = 1 << 31
    static let withMetadataExtension: UInt32 = 1 << 30
    static let bookend = XetHash(bytes: [UInt8](repeating: 0xff, count: 32))

    public init(files: [File], xorbs: [Xorb]) {
        self.files = files
        self.xorbs = xorbs
    }

    /// Parses a shard, refusing anything that is not one: the wrong tag or version, a section without its bookend,
    /// counts that run past the bytes, a segment whose chunk range is empty or reversed, flags this reader does not
    /// know, or bytes after the xorb section when the header says there is no footer.
    public init(parsing bytes: [UInt8]) throws {
        var reader = Reader(bytes: bytes)
        guard bytes.count >= Self.entryLength, Array(bytes[0..<32]) == Self.tag else {
            throw XorbChunks.Malformed(description: "not a Xet shard (its first 32 bytes are not the shard tag)")
        }
        reader.at = 32
        let version = try reader.u64()
        let footerSize = try reader.u64()
        guard version == 2 else { throw XorbChunks.Malformed(description: "a shard of version \(version), not 2") }
        var files: [File] = []
        while true {
            let hash = try reader.hash()
            let flags = try reader.u32()
            let count = Int(try reader.u32())
            _ = try reader.u64()
            if hash == Self.bookend { break }
            guard flags & ~(Self.withVerification | Self.withMetadataExtension) == 0 else {
                throw XorbChunks.Malformed(description: "file \(hash) has unknown flags \(flags)")
            }
            try reader.require(entries: count)
            var segments: [File.Segment] = []
            for _ in 0..<count {
                let xorb = try reader.hash()
                _ = try reader.u32()
                let unpacked = Int(try reader.u32())
                let start = Int(try reader.u32())
                let end = Int(try reader.u32())
                guard start < end else {
                    throw XorbChunks.Malformed(description: "file \(hash) has an empty chunk range \(start)..<\(end)")
                }
                segments.append(.init(xorb: xorb, chunks: start..<end, unpackedBytes: unpacked))
            }
            var verification: [XetHash]?
            if flags & Self.withVerification != 0 {
                try reader.require(entries: count)
                verification = try (0..<count).map { _ in
                    let range = try reader.hash()
                    reader.at += 16
                    return range
                }
            }
            var sha256: String?
            if flags & Self.withMetadataExtension != 0 {
                sha256 = try reader.hash().description
                reader.at += 16
            }
            files.append(File(hash: hash, segments: segments, verification: verification, sha256: sha256))
        }
        var xorbs: [Xorb] = []
        while true {
            let hash = try reader.hash()
            _ = try reader.u32()
            let count = Int(try reader.u32())
            let unpacked = Int(try reader.u32())
            _ = try reader.u32()
            if hash == Self.bookend { break }
            try reader.require(entries: count)
            let chunks = try (0..<count).map { _ in
                let chunk = try reader.hash()
                let start = Int(try reader.u32())
                let length = Int(try reader.u32())
                reader.at += 8
                return Xorb.Chunk(hash: chunk, start: start, length: length)
            }
            xorbs.append(Xorb(hash: hash, chunks: chunks, unpackedBytes: unpacked))
        }
        if footerSize == 0, reader.at != bytes.count {
            throw XorbChunks.Malformed(description: "\(bytes.count - reader.at) bytes follow the shard's xorb section")
        }
        self.files = files
        self.xorbs = xorbs
    }

    /// The shard's bytes as a client uploads it (no lookup tables, no footer): what tests build hostile shards with.
    public func serialized() -> [UInt8] {
        var out = Self.tag
        out.append(u64: 2)
        out.append(u64: 0)
        for file in files {
            var flags: UInt32 = 0
            if file.verification != nil { flags |= Self.withVerification }
            if file.sha256 != nil { flags |= Self.withMetadataExtension }
            out += file.hash.bytes
            out.append(u32: flags)
            out.append(u32: UInt32(file.segments.count))
            out.append(u64: 0)
            for segment in file.segments {
                out += segment.xorb.bytes
                out.append(u32: 0)
                out.append(u32: UInt32(segment.unpackedBytes))
                out.append(u32: UInt32(segment.chunks.lowerBound))
                out.append(u32: UInt32(segment.chunks.upperBound))
            }
            for range in file.verification ?? [] {
                out += range.bytes
                out += [UInt8](repeating: 0, count: 16)
            }
            if let sha256 = file.sha256, let digest = XetHash(hex: sha256) {
                out += digest.bytes
                out += [UInt8](repeating: 0, count: 16)
            }
        }
        out += Self.bookend.bytes + [UInt8](repeating: 0, count: 16)
        for xorb in xorbs {
            out += xorb.hash.bytes
            out.append(u32: 0)
            out.append(u32: UInt32(xorb.chunks.count))
            out.append(u32: UInt32(xorb.unpackedBytes))
            out.append(u32: 0)
            for chunk in xorb.chunks {
                out += chunk.hash.bytes
                out.append(u32: UInt32(chunk.start))
                out.append(u32: UInt32(chunk.length))
                out += [UInt8](repeating: 0, count: 8)
            }
        }
        out += Self.bookend.bytes + [UInt8](repeating: 0, count: 16)
        return out
    }

    private struct Reader {
        let bytes: [UInt8]
        var at = 0

        /// Fails unless `entries` more 48-byte entries fit: a count can never make the reader allocate for more
        /// entries than the bytes hold.
        func require(entries: Int) throws {
            guard entries <= (bytes.count - at) / XetShard.entryLength else {
                throw XorbChunks.Malformed(description: "a shard section counts \(entries) entries past its end")
            }
        }

        mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
            guard at >= 0, bytes.count - at >= count else {
                throw XorbChunks.Malformed(description: "the shard is cut off (a section without its bookend)")
            }
            defer { at += count }
            return bytes[at..<(at + count)]
        }

        mutating func hash() throws -> XetHash { XetHash(bytes: Array(try take(32))) }

        mutating func u32() throws -> UInt32 {
            try take(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func u64() throws -> UInt64 {
            try take(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
    }
}

extension [UInt8] {
    fileprivate mutating func append(u32 value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    fileprivate mutating func append(u64 value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}
