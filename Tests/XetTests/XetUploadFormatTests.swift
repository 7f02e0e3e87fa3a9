import ModelDepotTesting
import ModelDepotXet
import Testing

/// What a CAS reads from clients, attacked: LZ4 frames that lie, shards that are not one, xorbs sent under a hash
/// they do not have. Each is refused with a reason; what is well formed round-trips.
@Suite struct XetUploadFormatTests {
    /// A frame of version 01 with independent blocks of at most 64 KiB, no checksums, no content size (unless
    /// `flags`, `descriptor` and `contentSize` say otherwise), its header checksum right.
    static func frame(
        _ blocks: [[UInt8]], flags: UInt8 = 0x60, descriptor: UInt8 = 0x40, contentSize: UInt64? = nil
    ) -> [UInt8] {
        var header: [UInt8] = [flags, descriptor]
        if let contentSize { header += (0..<8).map { UInt8(truncatingIfNeeded: contentSize >> (8 * UInt64($0))) } }
        var out: [UInt8] = [0x04, 0x22, 0x4d, 0x18] + header + [UInt8(truncatingIfNeeded: XXHash32.hash(header) >> 8)]
        for block in blocks { out += block }
        return out + [0, 0, 0, 0]
    }

    static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    static func blockLength(_ length: Int, stored: Bool = false) -> [UInt8] {
        let word = UInt32(length) | (stored ? 0x8000_0000 : 0)
        return (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) }
    }

    @Test func framesDecodeStoredAndCompressedBlocks() throws {
        let stored = Self.blockLength(3, stored: true) + Array("abc".utf8)
        let compressed: [UInt8] = [0x24, 97, 98, 0x02, 0x00, 0x00]
        let frame = Self.frame([stored, Self.blockLength(compressed.count) + compressed])
        #expect(try LZ4Frame.decompress(frame, size: 13) == Array("abcababababab".utf8))
        // Linked blocks (flags 0x40) let a match reach into the block before; independent ones (0x60) do not.
        let reachBack: [UInt8] = [0x00, 0x03, 0x00]  // No literals, a match of 4 at offset 3.
        let blocks = [stored, Self.blockLength(reachBack.count) + reachBack]
        #expect(try LZ4Frame.decompress(Self.frame(blocks, flags: 0x40), size: 7) == Array("abcabca".utf8))
        #expect(throws: LZ4Block.Malformed.self) { try LZ4Frame.decompress(Self.frame(blocks, flags: 0x60), size: 7) }
    }

    @Test(arguments: [
        ("no magic number", [0x04, 0x22, 0x4d, 0x19, 0x60, 0x40, 0x82, 0, 0, 0, 0] as [UInt8], 0),
        ("a wrong header checksum", Array(frame([]).prefix(6)) + [0x00, 0, 0, 0, 0], 0),
        ("version 2", frame([], flags: 0xA0), 0),
        ("reserved bits", frame([], descriptor: 0x41), 0),
        ("a dictionary", frame([], flags: 0x61), 0),
        ("a block size code of 3", frame([], descriptor: 0x30), 0),
        ("no end mark", Array(frame([]).dropLast(4)), 0),
        ("a block past the frame", frame([blockLength(50, stored: true) + [1, 2, 3]]), 3),
        ("a block over its maximum", frame([blockLength(70_000, stored: true)]), 70_000),
        ("a stored block past the size", frame([blockLength(3, stored: true) + [1, 2, 3]]), 2),
        ("short of the size", frame([blockLength(3, stored: true) + [1, 2, 3]]), 4),
        ("bytes after the end", frame([blockLength(1, stored: true) + [1]]) + [9], 1),
        (
            "a content size that lies",
            [0x04, 0x22, 0x4d, 0x18, 0x68, 0x40, 9, 0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0], 0
        ),
    ])
    func hostileFramesAreRefused(_ label: String, _ frame: [UInt8], _ size: Int) {
        #expect(throws: LZ4Block.Malformed.self, "\(label)") { try LZ4Frame.decompress(frame, size: size) }
    }

    static func xorb(_ chunks: [[UInt8]]) -> (bytes: [UInt8], hash: XetHash) {
        let hash = XetHash.xorb(chunks.map { (XetHash.chunk($0), UInt64($0.count)) })
        return (chunks.flatMap { XorbChunks.stored($0) }, hash)
    }

    @Test func checksumsThatAreRightPass() throws {
        let block = Self.blockLength(1, stored: true) + [7] + Self.le32(XXHash32.hash([7]))
        #expect(try LZ4Frame.decompress(Self.frame([block], flags: 0x70), size: 1) == [7])
        let content = Self.frame([Self.blockLength(1, stored: true) + [7]], flags: 0x64) + Self.le32(XXHash32.hash([7]))
        #expect(try LZ4Frame.decompress(content, size: 1) == [7])
        // xxHash32's published values for the empty input and for "a" (seed 0).
        #expect(XXHash32.hash([]) == 0x02CC_5D05)
        #expect(XXHash32.hash(Array("a".utf8)) == 0x550D_7456)
    }

    /// Small runs that would decompress to gigabytes, or hold millions of chunks, are refused before they do.
    @Test func bombsAreRefusedBeforeTheyGoOff() throws {
        // One literal, then a match of 131,071 bytes at offset 1: 524 bytes that say 128 KiB.
        let block: [UInt8] = [0x1F, 65, 0x01, 0x00] + [UInt8](repeating: 255, count: 513) + [237]
        let frame = Self.frame([Self.blockLength(block.count) + block], descriptor: 0x50)
        #expect(try LZ4Frame.decompress(frame, size: 131_072).count == 131_072)
        let stored = UInt32(frame.count)
        let header: [UInt8] = [
            0, UInt8(stored & 0xff), UInt8(stored >> 8 & 0xff), UInt8(stored >> 16), 1, 0x00, 0x00, 0x02,
        ]
        let bomb = [[UInt8]](repeating: header + frame, count: 600).flatMap { $0 }
        let bombError = #expect(throws: XorbChunks.Malformed.self) { try XorbChunks.records(bomb) }
        #expect(bombError?.description == "chunks adding up to more than 67108864 bytes")
        let dust = [[UInt8]](repeating: XorbChunks.stored([1]), count: 9000).flatMap { $0 }
        let dustError = #expect(throws: XorbChunks.Malformed.self) { try XorbChunks.records(dust) }
        #expect(dustError?.description == "more than 8192 chunks")
    }

    @Test func aXorbIsCheckedAgainstItsHash() throws {
        let chunks = [SampleData.bytes(count: 9000, seed: 1), SampleData.bytes(count: 20_000, seed: 2)]
        let (bytes, hash) = Self.xorb(chunks)
        let layout = try XorbLayout.verifying(bytes, as: hash)
        #expect(layout.chunks.map(\.length) == [9000, 20_000])
        #expect(layout.chunks.map(\.storedStart) == [0, 9008])
        #expect(layout.isConsistent(storedBytes: bytes.count))
        #expect(!layout.isConsistent(storedBytes: bytes.count - 1))
        let other = Self.xorb([chunks[0]]).hash
        #expect(throws: XorbChunks.Malformed.self, "sent under another hash") {
            try XorbLayout.verifying(bytes, as: other)
        }
        #expect(throws: XorbChunks.Malformed.self, "cut off") {
            try XorbLayout.verifying(Array(bytes.dropLast()), as: hash)
        }
        #expect(throws: XorbChunks.Malformed.self, "no chunks") { try XorbLayout.verifying([], as: .zero) }
        var flipped = bytes
        flipped[100] ^= 1
        #expect(throws: XorbChunks.Malformed.self, "a byte changed") { try XorbLayout.verifying(flipped, as: hash) }
    }

    @Test func shardsRoundTripAndLiesAreRefused() throws {
        let (_, xorbHash) = Self.xorb([[1, 2, 3]])
        let shard = XetShard(
            files: [
                .init(
                    hash: XetHash.chunk([7]), segments: [.init(xorb: xorbHash, chunks: 0..<1, unpackedBytes: 3)],
                    verification: [XetHash.chunk([8])], sha256: String(repeating: "ab", count: 32))
            ],
            xorbs: [
                .init(
                    hash: xorbHash, chunks: [.init(hash: XetHash.chunk([1, 2, 3]), start: 0, length: 3)],
                    unpackedBytes: 3)
            ])
        let bytes = shard.serialized()
        #expect(try XetShard(parsing: bytes) == shard)
        #expect(throws: XorbChunks.Malformed.self, "not a shard") {
            try XetShard(parsing: Array(repeating: 0, count: 96))
        }
        #expect(throws: XorbChunks.Malformed.self, "cut off") { try XetShard(parsing: Array(bytes.dropLast(48))) }
        #expect(throws: XorbChunks.Malformed.self, "trailing bytes") { try XetShard(parsing: bytes + [0]) }
        // A count of a billion segments is refused before anything is allocated for them.
        var huge = bytes
        huge[48 + 36] = 0xff
        huge[48 + 37] = 0xff
        huge[48 + 38] = 0xff
        huge[48 + 39] = 0x3f
        #expect(throws: XorbChunks.Malformed.self, "a huge count") { try XetShard(parsing: huge) }
        // An empty chunk range, and a reversed one (start 5, end 2: patched in, as Swift cannot make one).
        var empty = shard
        empty.files[0].segments[0].chunks = 1..<1
        #expect(throws: XorbChunks.Malformed.self, "an empty range") { try XetShard(parsing: empty.serialized()) }
        var reversed = bytes
        reversed.replaceSubrange(136..<144, with: Self.le32(5) + Self.le32(2))
        #expect(throws: XorbChunks.Malformed.self, "a reversed range") { try XetShard(parsing: reversed) }
        var version = bytes
        version[32] = 3
        #expect(throws: XorbChunks.Malformed.self, "version 3") { try XetShard(parsing: version) }
    }
}
