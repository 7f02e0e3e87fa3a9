/// Where each chunk of a serialized xorb is — what a CAS keeps beside a xorb a client uploaded, to answer
/// reconstructions with byte ranges of it and to check the shards that cite it.
public struct XorbLayout: Sendable, Equatable, Codable {
    public struct Chunk: Sendable, Equatable, Codable {
        public var hash: String
        /// Its length uncompressed.
        public var length: Int
        /// Its header's first byte in the serialized xorb, and its header and stored bytes' length.
        public var storedStart: Int
        public var storedLength: Int
    }

    public var hash: String
    public var chunks: [Chunk]
    public var storedBytes: Int

    /// The layout of `bytes`, a xorb as a client uploads it (Xet documentation, "Upload protocol": its chunks,
    /// without a footer), after checking that it is the xorb `expected` names: every chunk decompresses as its
    /// header says, there are at most 8192 chunks and 64 MiB uncompressed (xet-core's `MAX_XORB_CHUNKS`,
    /// `MAX_XORB_BYTES`), and the Merkle tree over the chunks' hashes is `expected`. Nothing a client claims about
    /// the bytes is taken on trust.
    public static func verifying(_ bytes: [UInt8], as expected: XetHash) throws -> XorbLayout {
        let records = try XorbChunks.records(bytes)
        guard !records.isEmpty else { throw XorbChunks.Malformed(description: "the xorb holds no chunks") }
        guard records.allSatisfy({ !$0.bytes.isEmpty }) else {
            throw XorbChunks.Malformed(description: "the xorb holds an empty chunk")
        }
        let hashes = records.map { XetHash.chunk($0.bytes) }
        let hash = XetHash.xorb(zip(hashes, records).map { ($0, UInt64($1.bytes.count)) })
        guard hash == expected else {
            throw XorbChunks.Malformed(description: "the chunks sent hash to xorb \(hash), not \(expected)")
        }
        let chunks = zip(hashes, records).map { hash, record in
            Chunk(
                hash: hash.description, length: record.bytes.count, storedStart: record.stored.lowerBound,
                storedLength: record.stored.count)
        }
        return XorbLayout(hash: hash.description, chunks: chunks, storedBytes: bytes.count)
    }

    /// Whether a kept layout fits a xorb of `storedBytes` bytes: its chunks tile the bytes in order.
    public func isConsistent(storedBytes: Int) -> Bool {
        var next = 0
        for chunk in chunks {
            guard chunk.storedStart == next, chunk.storedLength > XorbChunks.headerLength, chunk.length > 0 else {
                return false
            }
            next += chunk.storedLength
        }
        return !chunks.isEmpty && next == storedBytes && self.storedBytes == storedBytes
    }
}
