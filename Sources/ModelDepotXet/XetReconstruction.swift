/// A reconstruction (Xet documentation, "Download protocol": `QueryReconstructionResponse`): the terms that rebuild
/// a range of a file's bytes — each a xorb and a range of its chunks — how far into the first term's bytes the range
/// starts, and for each term where its chunks' stored bytes are in the xorb (a chunk range and the inclusive byte
/// range of the serialization that holds it).
public struct XetReconstruction: Sendable, Equatable {
    public struct Term: Sendable, Equatable {
        public var xorb: String
        public var chunks: Range<Int>
        public var unpackedLength: Int
    }

    public struct Fetch: Sendable, Equatable {
        public var xorb: String
        public var chunks: Range<Int>
        /// Inclusive, as the protocol's `url_range` is.
        public var bytes: ClosedRange<Int>
    }

    public var offsetIntoFirstRange: Int64
    public var terms: [Term]
    public var fetches: [Fetch]

    /// A run of chunks of one xorb, in the order the file holds them: a file is a list of pieces (a file indexed
    /// here, one piece per xorb; a file a client uploaded, one per segment of its shard).
    public struct Piece: Sendable, Equatable {
        public var xorb: String
        /// The index of the piece's first chunk within the xorb.
        public var firstChunk: Int
        /// Each chunk's length uncompressed.
        public var lengths: [Int]
        /// Where the first chunk's header is in the xorb's serialization, and each chunk's header and stored
        /// bytes' length.
        public var storedStart: Int
        public var storedLengths: [Int]

        public init(xorb: String, firstChunk: Int, lengths: [Int], storedStart: Int, storedLengths: [Int]) {
            precondition(lengths.count == storedLengths.count, "a length and a stored length per chunk")
            self.xorb = xorb
            self.firstChunk = firstChunk
            self.lengths = lengths
            self.storedStart = storedStart
            self.storedLengths = storedLengths
        }
    }

    /// The reconstruction of bytes `range` (all when nil) of the file of `size` bytes that `pieces` make; nil
    /// when the range starts past the end. Chunk ranges are counted within each xorb.
    public static func plan(_ pieces: [Piece], size: Int64, range: Range<Int64>?) -> XetReconstruction? {
        let wanted = range ?? 0..<size
        guard wanted.lowerBound < max(size, 1) || (size == 0 && wanted.lowerBound == 0) else { return nil }
        let end = min(wanted.upperBound, size)
        var terms: [Term] = []
        var fetches: [Fetch] = []
        var firstOffset: Int64 = 0
        var chunkStart: Int64 = 0
        for piece in pieces {
            var first: Int?
            var last = 0
            var unpacked = 0
            for (index, length) in piece.lengths.enumerated() {
                defer { chunkStart += Int64(length) }
                guard chunkStart + Int64(length) > wanted.lowerBound, chunkStart < end else { continue }
                if first == nil {
                    first = index
                    if terms.isEmpty { firstOffset = wanted.lowerBound - chunkStart }
                }
                last = index
                unpacked += length
            }
            guard let first else { continue }
            let local = (piece.firstChunk + first)..<(piece.firstChunk + last + 1)
            terms.append(.init(xorb: piece.xorb, chunks: local, unpackedLength: unpacked))
            let from = piece.storedStart + piece.storedLengths[..<first].reduce(0, +)
            let to = from + piece.storedLengths[first...last].reduce(0, +) - 1
            fetches.append(.init(xorb: piece.xorb, chunks: local, bytes: from...to))
        }
        return XetReconstruction(offsetIntoFirstRange: firstOffset, terms: terms, fetches: merged(fetches))
    }

    /// The fetches of each xorb merged where their chunk ranges overlap or touch, so each term lies in exactly one
    /// and no two start at the same chunk: hf_xet keys the ranges it downloads by (xorb, first chunk), and two
    /// ranges of one xorb starting at the same chunk with different ends would have it cut a term out of the wrong
    /// one (its reader panics). The Hub's answers are merged the same way.
    static func merged(_ fetches: [Fetch]) -> [Fetch] {
        var order: [String] = []
        var byXorb: [String: [Fetch]] = [:]
        for fetch in fetches {
            if byXorb[fetch.xorb] == nil { order.append(fetch.xorb) }
            byXorb[fetch.xorb, default: []].append(fetch)
        }
        var result: [Fetch] = []
        for xorb in order {
            var current: Fetch?
            for fetch in byXorb[xorb, default: []].sorted(by: { $0.chunks.lowerBound < $1.chunks.lowerBound }) {
                if var open = current, fetch.chunks.lowerBound <= open.chunks.upperBound {
                    open.chunks = open.chunks.lowerBound..<max(open.chunks.upperBound, fetch.chunks.upperBound)
                    open.bytes = open.bytes.lowerBound...max(open.bytes.upperBound, fetch.bytes.upperBound)
                    current = open
                } else {
                    if let open = current { result.append(open) }
                    current = fetch
                }
            }
            if let open = current { result.append(open) }
        }
        return result
    }
}
