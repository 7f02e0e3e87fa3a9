import ModelDepotTesting
import ModelDepotXet
import Testing

/// What needs no oracle: hostile LZ4 blocks refused, byte grouping as the specification lays it out, chunk
/// boundaries that follow the content, and the hash's printed form.
@Suite struct XetUnitTests {
    /// Blocks that lie: each is refused with a reason, never read or written out of bounds.
    @Test(arguments: [
        ("a match before the output's start", [0x10, 65, 0x05, 0x00] as [UInt8], 20),
        ("a zero offset", [0x10, 65, 0x00, 0x00], 20),
        ("literals past the block", [0x50, 65, 66], 5),
        ("literals past the output", [0x30, 65, 66, 67], 2),
        ("a length that runs past the block", [0xF0, 255, 255], 1000),
        ("a match past the output", [0x1F, 65, 0x01, 0x00, 200], 30),
        ("an offset cut off", [0x10, 65, 0x01], 10),
        ("too short for the size", [0x20, 65, 66], 3),
    ])
    func hostileBlocksAreRefused(_ label: String, _ block: [UInt8], _ size: Int) {
        #expect(throws: LZ4Block.Malformed.self, "\(label)") { try LZ4Block.decompress(block, size: size) }
    }

    @Test func anOverlappingMatchRepeatsAPattern() throws {
        // "ab" then a match of 8 at offset 2: "ababababab".
        let block: [UInt8] = [0x24, 97, 98, 0x02, 0x00, 0x00]
        #expect(try LZ4Block.decompress(block, size: 10) == Array("ababababab".utf8))
    }

    @Test func byteGroupingLaysOutLanesAsTheSpecificationSays() {
        #expect(ByteGrouping.group([]) == [])
        #expect(ByteGrouping.group([0, 1, 2, 3, 4, 5, 6, 7]) == [0, 4, 1, 5, 2, 6, 3, 7])
        // 7 bytes: lanes of 2, 2, 2 and 1.
        #expect(ByteGrouping.group([0, 1, 2, 3, 4, 5, 6]) == [0, 4, 1, 5, 2, 6, 3])
        for count in 0..<40 {
            let bytes = (0..<count).map { UInt8($0) }
            #expect(ByteGrouping.ungroup(ByteGrouping.group(bytes)) == bytes, "\(count) bytes")
        }
    }

    /// Boundaries follow the content: bytes put in front of a file move its later boundaries by as much.
    @Test func boundariesFollowTheContent() {
        let body = SampleData.bytes(count: 2 << 20, seed: 77)
        let prefix = SampleData.bytes(count: 5000, seed: 78)
        func ends(_ lengths: [Int]) -> Set<Int> {
            Set(lengths.reduce(into: [Int]()) { $0.append(($0.last ?? 0) + $1) })
        }
        let plain = ends(XetChunker.chunkLengths(body))
        let shifted = Set(ends(XetChunker.chunkLengths(prefix + body)).map { $0 - prefix.count })
        // All but the first few boundaries are the same bytes' boundaries.
        #expect(plain.intersection(shifted).count >= plain.count - 3)
        // Streaming in odd pieces gives the same boundaries as one call.
        var chunker = XetChunker()
        var lengths: [Int] = []
        var start = 0
        for size in [1, 100, 8190, 65536, 3, 131_073] + Array(repeating: 200_000, count: 12) where start < body.count {
            let end = min(body.count, start + size)
            lengths += Array(body[start..<end]).withUnsafeBytes { chunker.feed($0) }
            start = end
        }
        lengths += Array(body[start...]).withUnsafeBytes { chunker.feed($0) }
        if let last = chunker.finish() { lengths.append(last) }
        #expect(lengths == XetChunker.chunkLengths(body))
    }

    @Test func theHashPrintsAndParsesAsXetShowsIt() throws {
        let bytes = (0..<32).map { UInt8($0) }
        let hash = XetHash(bytes: bytes)
        // Each 8-byte word printed as a little-endian number.
        #expect(hash.description.hasPrefix("0706050403020100" + "0f0e0d0c0b0a0908"))
        #expect(XetHash(hex: hash.description) == hash)
        #expect(XetHash(hex: "zz") == nil && XetHash(hex: String(repeating: "g", count: 64)) == nil)
        #expect(XetHash.file([]) == .zero)
    }
}
