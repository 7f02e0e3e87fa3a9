/// How a file is stored in Xet: its chunks (where each starts, its length and hash), grouped in order into xorbs of
/// at most 64 MiB and 8192 chunks (xet-core's `MAX_XORB_BYTES`, `MAX_XORB_CHUNKS`), each chunk stored uncompressed;
/// the xorbs' hashes and the file's. Built once per file (a file's chunking never changes) and kept; a CAS answers
/// a reconstruction from it.
public struct XetFileIndex: Sendable, Equatable, Codable {
    public struct Chunk: Sendable, Equatable, Codable {
        public var hash: String
        public var length: Int
    }

    /// A run of the file's chunks in one xorb: a xorb of this file's own (it holds exactly these chunks), or a run
    /// of chunks in another file's xorb (deduplicated: the file shares them, and a client that has the other file
    /// already has them).
    public struct Xorb: Sendable, Equatable, Codable {
        public var hash: String
        /// Indexes into ``XetFileIndex/chunks``: the run is `chunks[firstChunk..<endChunk]`.
        public var firstChunk: Int
        public var endChunk: Int
        /// For a run in another file's xorb: where in that xorb the run starts, as a chunk index and as a byte
        /// offset of its serialization. Nil for the file's own xorbs.
        public var xorbFirstChunk: Int?
        public var storedStart: Int?

        public init(hash: String, firstChunk: Int, endChunk: Int, xorbFirstChunk: Int? = nil, storedStart: Int? = nil) {
            self.hash = hash
            self.firstChunk = firstChunk
            self.endChunk = endChunk
            self.xorbFirstChunk = xorbFirstChunk
            self.storedStart = storedStart
        }

        /// Whether the xorb is the file's own (its bytes are this file's), not a run in another file's.
        public var isOwned: Bool { xorbFirstChunk == nil }
    }

    /// A chunk another file's own xorb holds: which xorb, its index there, and where its serialization starts.
    public struct KnownChunk: Sendable, Equatable {
        public var xorb: String
        public var index: Int
        public var storedStart: Int

        public init(xorb: String, index: Int, storedStart: Int) {
            self.xorb = xorb
            self.index = index
            self.storedStart = storedStart
        }
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
        /// Chunks other files' own xorbs hold, by hash: a chunk found here is not stored again but cited there,
        /// as hf_xet deduplicates an upload against what the CAS has.
        public var known: [String: KnownChunk] = [:]
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
            // The file's own xorb being filled, and the run of known chunks being followed.
            var first: Int?
            var bytes = 0
            var cited: (xorb: KnownChunk, first: Int, last: Int)?
            func closeOwned(at end: Int) {
                if let start = first { xorbs.append(xorb(start, end)) }
                first = nil
                bytes = 0
            }
            func closeCited(at end: Int) {
                if let run = cited {
                    xorbs.append(
                        Xorb(
                            hash: run.xorb.xorb, firstChunk: run.first, endChunk: end, xorbFirstChunk: run.xorb.index,
                            storedStart: run.xorb.storedStart))
                }
                cited = nil
            }
            for (index, chunk) in chunks.enumerated() {
                if let found = known[chunk.hash] {
                    closeOwned(at: index)
                    if let run = cited, run.xorb.xorb == found.xorb, found.index == run.last + 1 {
                        cited?.last = found.index
                    } else {
                        closeCited(at: index)
                        cited = (found, index, found.index)
                    }
                    continue
                }
                closeCited(at: index)
                let stored = chunk.length + XorbChunks.headerLength
                if let start = first,
                    bytes + stored > maximumXorbBytes || index - start == XetFileIndex.maximumXorbChunks
                {
                    closeOwned(at: index)
                }
                if first == nil { first = index }
                bytes += stored
            }
            closeOwned(at: chunks.count)
            closeCited(at: chunks.count)
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
                xorb: xorb.hash, firstChunk: xorb.xorbFirstChunk ?? 0, lengths: lengths,
                storedStart: xorb.storedStart ?? 0, storedLengths: lengths.map { $0 + XorbChunks.headerLength })
        }
        return XetReconstruction.plan(pieces, size: size, range: range)
    }
}
