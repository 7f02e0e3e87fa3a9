/// A Xet hash: 32 bytes, shown as Xet shows it (Xet documentation, "Hashing"; xet-core's `DataHash::hex`): the
/// four little-endian 64-bit words each printed as 16 hex digits, so the bytes of each word appear reversed.
public struct XetHash: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        precondition(bytes.count == 32, "a Xet hash is 32 bytes")
        self.bytes = bytes
    }

    /// Parses the hex form ``description`` gives; nil when it is not 64 hex digits.
    public init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        for word in 0..<4 {
            for byte in 0..<8 {
                // Digit pair `byte` of word `word` is its byte 7 - byte.
                let at = word * 16 + byte * 2
                guard let high = Self.nibble(digits[at]), let low = Self.nibble(digits[at + 1]) else { return nil }
                bytes[word * 8 + 7 - byte] = high << 4 | low
            }
        }
        self.bytes = bytes
    }

    /// All zeros: the hash of an empty file.
    public static let zero = XetHash(bytes: [UInt8](repeating: 0, count: 32))

    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for word in 0..<4 {
            for byte in (0..<8).reversed() {
                let value = bytes[word * 8 + byte]
                text += [digits[Int(value >> 4)], digits[Int(value & 15)]]
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The last word, little-endian: what the aggregation's `hash % 4` reads.
    var lastWord: UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[24 + $1]) << (8 * UInt64($1)) }
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension XetHash {
    /// The key of chunk hashes ("Hashing", chunk hashes: DATA_KEY).
    public static let dataKey: [UInt8] = [
        102, 151, 245, 119, 91, 149, 80, 222, 49, 53, 203, 172, 165, 151, 24, 28, 157, 228, 33, 16, 155, 235, 43, 88,
        180, 208, 176, 75, 147, 173, 242, 41,
    ]
    /// The key of Merkle tree nodes above the chunks ("Hashing", xorb hashes: INTERNAL_NODE_KEY).
    public static let internalNodeKey: [UInt8] = [
        1, 126, 197, 199, 165, 71, 41, 150, 253, 148, 102, 102, 180, 138, 2, 230, 93, 221, 83, 111, 55, 199, 109, 210,
        248, 99, 82, 230, 74, 83, 113, 63,
    ]

    /// A chunk's hash: BLAKE3 keyed with ``dataKey`` over its bytes.
    public static func chunk(_ bytes: some Collection<UInt8>) -> XetHash {
        XetHash(bytes: BLAKE3.hash(bytes, key: dataKey))
    }

    /// The hash of a Merkle tree over `leaves` (each a hash and the bytes under it), as xorb and file hashes are
    /// made ("Hashing", xorb hashes): nodes of 2 to 9 children, a group ending after a child (from the third on)
    /// whose hash's last word is a multiple of 4, each node the BLAKE3, keyed with ``internalNodeKey``, of its
    /// children's lines `"{hash} : {size}\n"`; level after level until one remains.
    public static func aggregate(_ leaves: [(hash: XetHash, size: UInt64)]) -> XetHash {
        guard !leaves.isEmpty else { return .zero }
        var level = leaves
        while level.count > 1 {
            var next: [(hash: XetHash, size: UInt64)] = []
            var start = 0
            while start < level.count {
                let end = start + cut(level[start...])
                var text: [UInt8] = []
                var total: UInt64 = 0
                for node in level[start..<end] {
                    text += Array("\(node.hash) : \(node.size)\n".utf8)
                    total += node.size
                }
                next.append((XetHash(bytes: BLAKE3.hash(text, key: internalNodeKey)), total))
                start = end
            }
            level = next
        }
        return level[0].hash
    }

    /// How many of `nodes` the next group takes: at least 2 (all when 2 or fewer remain), at most 9, and it ends
    /// after the first node from the third on whose hash is a multiple of 4.
    static func cut(_ nodes: ArraySlice<(hash: XetHash, size: UInt64)>) -> Int {
        guard nodes.count > 2 else { return nodes.count }
        let end = min(9, nodes.count)
        for offset in 2..<end where nodes[nodes.startIndex + offset].hash.lastWord % 4 == 0 {
            return offset + 1
        }
        return end
    }

    /// A xorb's hash: the tree over its chunks.
    public static func xorb(_ chunks: [(hash: XetHash, size: UInt64)]) -> XetHash { aggregate(chunks) }

    /// A file's hash: the tree over its chunks, then keyed BLAKE3 of that with an all-zero key (xet-core's
    /// `file_hash`: an HMAC with no salt). All zeros for an empty file.
    public static func file(_ chunks: [(hash: XetHash, size: UInt64)]) -> XetHash {
        guard !chunks.isEmpty else { return .zero }
        return XetHash(bytes: BLAKE3.hash(aggregate(chunks).bytes, key: [UInt8](repeating: 0, count: 32)))
    }

    /// The chunks of `bytes` with their hashes, and the file hash over them.
    public static func file(of bytes: [UInt8]) -> (hash: XetHash, chunks: [(hash: XetHash, size: UInt64)]) {
        var start = 0
        let chunks = XetChunker.chunkLengths(bytes).map { length -> (hash: XetHash, size: UInt64) in
            defer { start += length }
            return (chunk(bytes[start..<start + length]), UInt64(length))
        }
        return (file(chunks), chunks)
    }
}
