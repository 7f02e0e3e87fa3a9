/// A xorb's chunk section (Xet documentation, "Xorb format"; xet-core's `XorbChunkHeader`): each chunk is an
/// 8-byte header — version 0, compressed length (3 bytes, little-endian), compression scheme, uncompressed length
/// (3 bytes) — and its bytes. What a CAS serves when a client asks for a xorb's byte range is a run of these.
public enum XorbChunks {
    /// How a chunk's bytes are stored.
    public enum Scheme: UInt8, Sendable {
        case none = 0
        case lz4 = 1
        /// Byte grouping (``ByteGrouping``), then LZ4.
        case byteGrouping4LZ4 = 2
    }

    public static let headerLength = 8

    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// `chunk` as a stored chunk (header and bytes), uncompressed.
    public static func stored(_ chunk: some Collection<UInt8>) -> [UInt8] {
        let count = UInt32(chunk.count)
        precondition(count < 1 << 24, "a Xet chunk is at most 128 KiB")
        let length = [
            UInt8(truncatingIfNeeded: count), UInt8(truncatingIfNeeded: count >> 8),
            UInt8(truncatingIfNeeded: count >> 16),
        ]
        return [0] + length + [Scheme.none.rawValue] + length + Array(chunk)
    }

    /// The chunks a run of stored chunks holds, decompressed and checked (``records(_:maximumChunks:maximumBytes:)``).
    public static func read(_ run: some Collection<UInt8>) throws -> [[UInt8]] {
        try records(run).map(\.bytes)
    }

    /// A chunk as a run stores it: where its header and bytes are in the run, and its bytes decompressed.
    public struct Record: Sendable, Equatable {
        public var stored: Range<Int>
        public var bytes: [UInt8]
    }

    /// The chunks of a run of stored chunks, decompressed and checked: a header of an unknown version or scheme,
    /// a length past the run or past Xet's 128 KiB chunk limit, or bytes that do not decompress to the length the
    /// header gives are refused. So are more than `maximumChunks` chunks, or chunks adding up to more than
    /// `maximumBytes`: both are checked before a chunk is decompressed, so a small run cannot make the reader hold
    /// gigabytes (a 541-byte LZ4 frame may say 128 KiB).
    public static func records(
        _ run: some Collection<UInt8>, maximumChunks: Int = XetFileIndex.maximumXorbChunks,
        maximumBytes: Int = XetFileIndex.maximumXorbBytes
    ) throws -> [Record] {
        let bytes = Array(run)
        var records: [Record] = []
        var total = 0
        var at = 0
        while at < bytes.count {
            let start = at
            guard records.count < maximumChunks else {
                throw Malformed(description: "more than \(maximumChunks) chunks")
            }
            guard bytes.count - at >= headerLength else { throw Malformed(description: "a chunk header is cut off") }
            let version = bytes[at]
            guard version == 0 else { throw Malformed(description: "a chunk header of version \(version)") }
            let stored = Int(bytes[at + 1]) | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]) << 16
            let size = Int(bytes[at + 5]) | Int(bytes[at + 6]) << 8 | Int(bytes[at + 7]) << 16
            guard let scheme = Scheme(rawValue: bytes[at + 4]) else {
                throw Malformed(description: "a chunk stored with unknown scheme \(bytes[at + 4])")
            }
            guard size <= XetChunker.maximumSize, stored <= 2 * XetChunker.maximumSize else {
                throw Malformed(description: "a chunk of \(size) bytes (\(stored) stored), past Xet's limit")
            }
            total += size
            guard total <= maximumBytes else {
                throw Malformed(description: "chunks adding up to more than \(maximumBytes) bytes")
            }
            at += headerLength
            guard bytes.count - at >= stored else { throw Malformed(description: "a chunk's bytes are cut off") }
            let body = bytes[at..<(at + stored)]
            at += stored
            let chunk: [UInt8]
            switch scheme {
            case .none:
                guard stored == size else {
                    throw Malformed(description: "an uncompressed chunk of \(stored) bytes that says \(size)")
                }
                chunk = Array(body)
            case .lz4:
                chunk = try decompressed(body, size: size)
            case .byteGrouping4LZ4:
                chunk = ByteGrouping.ungroup(try decompressed(body, size: size))
            }
            records.append(Record(stored: start..<at, bytes: chunk))
        }
        return records
    }

    private static func decompressed(_ body: ArraySlice<UInt8>, size: Int) throws -> [UInt8] {
        do {
            return try LZ4Frame.decompress(body, size: size)
        } catch let error as LZ4Block.Malformed {
            throw Malformed(description: "a chunk's LZ4 frame: \(error.description)")
        }
    }
}
