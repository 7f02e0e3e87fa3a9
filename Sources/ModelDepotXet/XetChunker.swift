/// Xet's content-defined chunking (Xet documentation, "Chunking"; xet-core's `Chunker`): a gear hash rolls over the
/// bytes and a chunk ends where its top 16 bits are zero — about every 64 KiB — but never before 8 KiB and always
/// at 128 KiB. The same bytes give the same boundaries wherever they sit in a file, which is what lets two
/// revisions of a model share chunks.
///
/// Streaming: feed pieces of any size in order; the boundaries come back as lengths of finished chunks, and
/// ``finish()`` gives the last one.
public struct XetChunker: Sendable {
    public static let targetSize = 64 << 10
    public static let minimumSize = targetSize / 8
    public static let maximumSize = targetSize * 2
    /// The target's bits, shifted to the top: the low bits of a gear hash depend on few bytes.
    static let mask: UInt64 = UInt64(targetSize - 1) << UInt64(UInt64(targetSize - 1).leadingZeroBitCount)
    /// Bytes before this offset in a chunk need not be hashed: a boundary needs `minimumSize` bytes, and a gear
    /// hash depends only on the last 64 bytes it saw (each step shifts the older ones out).
    static let firstHashed = minimumSize - 64 - 1

    private var hash: UInt64 = 0
    /// Bytes of the chunk under way.
    private var length = 0

    public init() {}

    /// Feeds `bytes`; returns the lengths of the chunks that ended in them (the first may have begun in earlier
    /// pieces).
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> [Int] {
        var ended: [Int] = []
        var index = 0
        let count = bytes.count
        GearTable.values.withUnsafeBufferPointer { table in
            while index < count {
                if length < Self.firstHashed {
                    let skip = min(Self.firstHashed - length, count - index)
                    length += skip
                    index += skip
                    continue
                }
                hash = (hash << 1) &+ table[Int(bytes[index])]
                length += 1
                index += 1
                if (length >= Self.minimumSize && hash & Self.mask == 0) || length == Self.maximumSize {
                    ended.append(length)
                    length = 0
                    hash = 0
                }
            }
        }
        return ended
    }

    /// The length of the last chunk (the bytes after the last boundary), nil when there are none.
    public mutating func finish() -> Int? {
        defer {
            length = 0
            hash = 0
        }
        return length > 0 ? length : nil
    }

    /// The chunk lengths of `bytes`, in order.
    public static func chunkLengths(_ bytes: [UInt8]) -> [Int] {
        var chunker = XetChunker()
        var lengths = bytes.withUnsafeBytes { chunker.feed($0) }
        if let last = chunker.finish() { lengths.append(last) }
        return lengths
    }
}
