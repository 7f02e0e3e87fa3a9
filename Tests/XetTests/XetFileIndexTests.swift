import ModelDepotTesting
import ModelDepotXet
import Testing

/// A file's Xet index and the reconstructions a CAS answers from it, without a socket: a client that follows a
/// reconstruction — fetching the stored chunks each fetch names, reading them, taking each term's chunks, skipping
/// the offset into the first — gets exactly the bytes it asked for, for any range; xorbs close at their limit; a
/// stored run that lies is refused.
@Suite struct XetFileIndexTests {
    static let file = SampleData.bytes(count: (5 << 20) + 4321, seed: 91)

    /// What a client does with a reconstruction.
    static func follow(_ plan: XetReconstruction, _ index: XetFileIndex, length: Int) throws -> [UInt8] {
        var fetched: [String: (Range<Int>, [[UInt8]])] = [:]
        for fetch in plan.fetches {
            let xorb = try #require(index.xorbs.first { $0.hash == fetch.xorb })
            // The whole xorb as stored, then the byte range the fetch names: what an HTTP Range request gets.
            let whole = index.stored(0..<(xorb.endChunk - xorb.firstChunk), of: xorb) { offset, count in
                Array(file[Int(offset)..<(Int(offset) + count)])
            }
            let run = Array(whole[fetch.bytes])
            fetched[fetch.xorb] = (fetch.chunks, try XorbChunks.read(run))
        }
        var bytes: [UInt8] = []
        for term in plan.terms {
            let (range, chunks) = try #require(fetched[term.xorb])
            let taken = chunks[
                (term.chunks.lowerBound - range.lowerBound)..<(term.chunks.upperBound - range.lowerBound)]
            let termBytes = taken.flatMap { $0 }
            #expect(termBytes.count == term.unpackedLength)
            bytes += termBytes
        }
        return Array(bytes.dropFirst(Int(plan.offsetIntoFirstRange)).prefix(length))
    }

    @Test func reconstructionsGiveBackTheBytesAsked() throws {
        var builder = XetFileIndex.Builder()
        builder.maximumXorbBytes = 1 << 20
        Self.file.withUnsafeBytes { builder.feed($0) }
        let index = builder.finish()
        #expect(index.xorbs.count >= 5, "xorbs close at their limit")
        #expect(
            index.xorbs.allSatisfy { xorb in
                index.chunks[xorb.firstChunk..<xorb.endChunk].reduce(0) { $0 + $1.length + 8 } <= 1 << 20
            })
        #expect(index.fileHash == XetHash.file(of: Self.file).hash.description)
        let size = Int64(Self.file.count)
        for range in [
            0..<size, 0..<1, 1..<2, 65_000..<300_000, (size - 10)..<size, 1_048_000..<1_049_000, 7..<(size - 7),
        ] {
            let plan = try #require(index.reconstruction(of: range))
            let bytes = try Self.follow(plan, index, length: Int(range.count))
            #expect(bytes == Array(Self.file[Int(range.lowerBound)..<Int(range.upperBound)]), "\(range)")
        }
        #expect(index.reconstruction(of: (size + 1)..<(size + 5)) == nil)
    }

    @Test func anIndexBuiltInPiecesIsTheSame() {
        var builder = XetFileIndex.Builder()
        var start = 0
        for size in [1, 100, 70_000, 3, 131_072, 1_000_000] + Array(repeating: 777_777, count: 8)
        where start < Self.file.count {
            let end = min(Self.file.count, start + size)
            Array(Self.file[start..<end]).withUnsafeBytes { builder.feed($0) }
            start = end
        }
        Array(Self.file[start...]).withUnsafeBytes { builder.feed($0) }
        #expect(builder.finish() == XetFileIndex.build(Self.file))
        #expect(XetFileIndex.build([]).fileHash == XetHash.zero.description)
    }

    @Test(arguments: [
        ("a header cut off", [0, 5, 0, 0] as [UInt8]),
        ("version 1", [1, 1, 0, 0, 0, 1, 0, 0, 42]),
        ("an unknown scheme", [0, 1, 0, 0, 9, 1, 0, 0, 42]),
        ("bytes cut off", [0, 4, 0, 0, 0, 4, 0, 0, 42]),
        ("an uncompressed chunk whose lengths differ", [0, 1, 0, 0, 0, 2, 0, 0, 42]),
        ("a chunk past 128 KiB", [0, 1, 0, 0, 1, 0, 0, 3, 42]),
        ("an LZ4 body that lies", [0, 2, 0, 0, 1, 9, 0, 0, 0x10, 65]),
    ])
    func storedRunsThatLieAreRefused(_ label: String, _ run: [UInt8]) {
        #expect(throws: XorbChunks.Malformed.self, "\(label)") { try XorbChunks.read(run) }
    }
}
