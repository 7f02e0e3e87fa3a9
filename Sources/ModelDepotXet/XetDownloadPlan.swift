import Foundation

/// A CAS's answer to `GET /v1/reconstructions/{file}` (Xet documentation, "Download protocol":
/// `QueryReconstructionResponse`), read as a client must read a stranger's word: terms — a xorb and a range of its
/// chunks each — that must add up to exactly the file's size, each with a fetch (a URL and the inclusive byte range
/// of the xorb holding its chunks) whose chunk range contains the term's. Anything else is refused before a byte
/// is fetched, so a lying answer can neither make the client fetch without bound nor write past the file.
public struct XetDownloadPlan: Sendable, Equatable {
    public struct Term: Sendable, Equatable {
        public var xorb: String
        public var chunks: Range<Int>
        public var unpackedLength: Int
        /// Where the term's bytes start in the file.
        public var fileOffset: Int64
        /// Index into ``XetDownloadPlan/fetches``.
        public var fetch: Int
    }

    public struct Fetch: Sendable, Hashable {
        public var xorb: String
        public var chunks: Range<Int>
        public var url: URL
        /// Inclusive, as the protocol's `url_range` is.
        public var bytes: ClosedRange<Int64>
    }

    public var terms: [Term]
    /// The fetches the terms use, each once.
    public var fetches: [Fetch]

    /// The most a fetch may hold: a whole xorb's chunks, each possibly stored a little larger than it is.
    public static let maximumFetchBytes: Int64 = 80 << 20

    public struct Refused: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Reads the answer for a whole file of `size` bytes.
    public init(json: [UInt8], size: Int64) throws {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json))) as? [String: Any] else {
            throw Refused(description: "the reconstruction is not a JSON object")
        }
        guard (object["offset_into_first_range"] as? NSNumber)?.int64Value ?? 0 == 0 else {
            throw Refused(description: "the reconstruction of a whole file starts inside its first term")
        }
        guard let rawTerms = object["terms"] as? [[String: Any]] else {
            throw Refused(description: "the reconstruction has no terms")
        }
        let rawFetches = object["fetch_info"] as? [String: [[String: Any]]] ?? [:]
        // Each term is at least a byte: more terms than bytes is a lie, refused before anything is built.
        guard Int64(rawTerms.count) <= max(size, 0) else {
            throw Refused(description: "\(rawTerms.count) terms for a file of \(size) bytes")
        }
        var terms: [Term] = []
        var fetches: [Fetch] = []
        var fetchIndex: [Fetch: Int] = [:]
        var offset: Int64 = 0
        for raw in rawTerms {
            guard let xorb = raw["hash"] as? String, XetHash(hex: xorb)?.description == xorb,
                let chunks = Self.range(raw["range"]), let unpacked = (raw["unpacked_length"] as? NSNumber)?.intValue
            else { throw Refused(description: "a term without a xorb hash, chunk range or length") }
            guard chunks.count <= XetFileIndex.maximumXorbChunks, unpacked > 0,
                unpacked <= chunks.count * XetChunker.maximumSize
            else { throw Refused(description: "a term of \(chunks.count) chunks says \(unpacked) bytes") }
            guard Int64(unpacked) <= size - offset else {
                throw Refused(description: "the terms add up to more than the file's \(size) bytes")
            }
            let candidates = (rawFetches[xorb] ?? []).compactMap { Self.fetch($0, xorb: xorb) }
            guard
                let fetch = candidates.first(where: {
                    $0.chunks.lowerBound <= chunks.lowerBound && chunks.upperBound <= $0.chunks.upperBound
                })
            else { throw Refused(description: "no fetch holds chunks \(chunks) of xorb \(xorb)") }
            let index: Int
            if let known = fetchIndex[fetch] {
                index = known
            } else {
                index = fetches.count
                fetchIndex[fetch] = index
                fetches.append(fetch)
            }
            terms.append(Term(xorb: xorb, chunks: chunks, unpackedLength: unpacked, fileOffset: offset, fetch: index))
            offset += Int64(unpacked)
        }
        guard offset == size else {
            throw Refused(description: "the terms add up to \(offset) bytes, not the file's \(size)")
        }
        // What the fetches add up to: the file's chunks stored (at most a little larger than the file) and a xorb's
        // worth of neighbours per fetch at the most. A plan that would fetch far more than the file is refused.
        let fetched = fetches.reduce(Int64(0)) { $0 + $1.bytes.upperBound - $1.bytes.lowerBound + 1 }
        guard fetched <= 2 * size + Self.maximumFetchBytes else {
            throw Refused(description: "the fetches add up to \(fetched) bytes for a file of \(size)")
        }
        self.terms = terms
        self.fetches = fetches
    }

    private static func range(_ value: Any?) -> Range<Int>? {
        guard let object = value as? [String: Any], let start = (object["start"] as? NSNumber)?.intValue,
            let end = (object["end"] as? NSNumber)?.intValue, start >= 0, start < end
        else { return nil }
        return start..<end
    }

    private static func fetch(_ object: [String: Any], xorb: String) -> Fetch? {
        guard let chunks = range(object["range"]), let text = object["url"] as? String, let url = URL(string: text),
            ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil,
            let bytes = object["url_range"] as? [String: Any],
            let start = (bytes["start"] as? NSNumber)?.int64Value, let end = (bytes["end"] as? NSNumber)?.int64Value,
            start >= 0, start <= end, end - start < maximumFetchBytes
        else { return nil }
        return Fetch(xorb: xorb, chunks: chunks, url: url, bytes: start...end)
    }
}
