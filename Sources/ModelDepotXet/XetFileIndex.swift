/// How a file is stored in Xet: its chunks (where each starts, its length and hash), grouped in order into xorbs of
/// at most 64 MiB and 8192 chunks (xet-core's `MAX_XORB_BYTES`, `MAX_XORB_CHUNKS`), each chunk stored uncompressed;
/// the xorbs' hashes and the file's. Built once per file (a file's chunking never changes) and kept; a CAS answers
/// a reconstruction from it.
public struct XetFileIndex: Sendable, Equatable, Codable {
    public struct Chunk: Sendable, Equatable, Codable {
        public var hash: String
        public var length: Int
    }

    public struct Xorb: Sendable, Equatable, Codable {
        public var hash: String
        /// Indexes into ``XetFileIndex/chunks``: the xorb holds `chunks[firstChunk..<endChunk]`.
        public var firstChunk: Int
        public var endChunk: Int
    }

    public static let maximumXorbBytes = 64 << 20
    public static let maximumXorbChunks = 8192

    public var fileHash: String
    public var size: Int64
    public var chunks: [Chunk]
    public var xorbs: [Xorb]

    /// The index of `bytes`.
    public static func build(_ bytes: [UInt8]) -> XetFileIndex {
        var index = Builder()
        bytes.withUnsafeBytes { index.feed($0) }
        return index.finish()
    }

    /// Builds an index from a file read in pieces of any size (the bytes of a piece are hashed as its chunks
    /// complete), so a file larger than memory can be indexed.
    public struct Builder: Sendable {
        /// Xorbs close at this many stored bytes (smaller in tests, to make several).
        public var maximumXorbBytes = XetFileIndex.maximumXorbBytes
        private var chunker = XetChunker()
        private var pending: [UInt8] = []
        private var chunks: [Chunk] = []
        private var leaves: [(hash: XetHash, size: UInt64)] = []
        private var size: Int64 = 0

        public init() {}

        public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
            size += Int64(bytes.count)
            var start = 0
            for length in chunker.feed(bytes) {
                let fromPending = pending.count
                let end = start + (length - fromPending)
                pending += bytes[start..<end]
                add(pending)
                pending.removeAll(keepingCapacity: true)
                start = end
            }
            pending += bytes[start...]
        }

        public mutating func finish() -> XetFileIndex {
            if chunker.finish() != nil { add(pending) }
            pending = []
            var xorbs: [Xorb] = []
            var first = 0
            var bytes = 0
            for (index, chunk) in chunks.enumerated() {
                let stored = chunk.length + XorbChunks.headerLength
                if index > first, bytes + stored > maximumXorbBytes || index - first == XetFileIndex.maximumXorbChunks {
                    xorbs.append(xorb(first, index))
                    first = index
                    bytes = 0
                }
                bytes += stored
            }
            if first < chunks.count { xorbs.append(xorb(first, chunks.count)) }
            return XetFileIndex(fileHash: XetHash.file(leaves).description, size: size, chunks: chunks, xorbs: xorbs)
        }

        private mutating func add(_ chunk: [UInt8]) {
            let hash = XetHash.chunk(chunk)
            chunks.append(Chunk(hash: hash.description, length: chunk.count))
            leaves.append((hash, UInt64(chunk.count)))
        }

        private func xorb(_ first: Int, _ end: Int) -> Xorb {
            Xorb(hash: XetHash.xorb(Array(leaves[first..<end])).description, firstChunk: first, endChunk: end)
        }
    }

    /// The stored chunks `chunks` (counted within `xorb`) of the xorb, as a CAS serves them: each chunk's header
    /// and bytes, the bytes read from the file with `read(offset, length)`. `xorbOffset` is where the xorb's first
    /// chunk starts in the file (``xorbOffsets()``); computed here when nil.
    public func stored(
        _ chunks: Range<Int>, of xorb: Xorb, xorbOffset: Int64? = nil, read: (Int64, Int) throws -> [UInt8]
    ) rethrows -> [UInt8] {
        let first = xorb.firstChunk + chunks.lowerBound
        var offset =
            (xorbOffset ?? self.offset(ofChunk: xorb.firstChunk))
            + self.chunks[xorb.firstChunk..<first].reduce(0) { $0 + Int64($1.length) }
        var run: [UInt8] = []
        for index in first..<(xorb.firstChunk + chunks.upperBound) {
            let length = self.chunks[index].length
            run += XorbChunks.stored(try read(offset, length))
            offset += Int64(length)
        }
        return run
    }

    /// Where each xorb's first chunk starts in the file, in one pass (a CAS keeps them: finding one by summing the
    /// chunks before it on every request would cost a pass per request).
    public func xorbOffsets() -> [Int64] {
        var offsets: [Int64] = []
        offsets.reserveCapacity(xorbs.count)
        var offset: Int64 = 0
        for xorb in xorbs {
            offsets.append(offset)
            offset += chunks[xorb.firstChunk..<xorb.endChunk].reduce(0) { $0 + Int64($1.length) }
        }
        return offsets
    }

    /// Whether the index is one a file of `size` bytes can have: chunks within Xet's limits adding up to the
    /// size, xorbs that cover the chunks in order. A kept index that is not is built again.
    public func isConsistent(size: Int64) -> Bool {
        guard self.size == size,
            chunks.allSatisfy({ $0.length > 0 && $0.length <= XetChunker.maximumSize }),
            chunks.reduce(0, { $0 + Int64($1.length) }) == size
        else { return false }
        var next = 0
        for xorb in xorbs {
            guard xorb.firstChunk == next, xorb.endChunk > xorb.firstChunk, xorb.endChunk <= chunks.count else {
                return false
            }
            next = xorb.endChunk
        }
        return next == chunks.count
    }

    /// Where chunk `index` starts in the file.
    public func offset(ofChunk index: Int) -> Int64 {
        chunks[..<index].reduce(0) { $0 + Int64($1.length) }
    }
}

extension XetFileIndex {
    /// The reconstruction of bytes `range` of the file (all of it when nil); nil when the range starts past the
    /// end. Chunk ranges are counted within each xorb.
    public func reconstruction(of range: Range<Int64>? = nil) -> XetReconstruction? {
        let pieces = xorbs.map { xorb in
            let lengths = chunks[xorb.firstChunk..<xorb.endChunk].map(\.length)
            return XetReconstruction.Piece(
                xorb: xorb.hash, firstChunk: 0, lengths: lengths, storedStart: 0,
                storedLengths: lengths.map { $0 + XorbChunks.headerLength })
        }
        return XetReconstruction.plan(pieces, size: size, range: range)
    }
}
