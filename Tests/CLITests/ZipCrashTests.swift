import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// ZIPs built to crash the reader: every length and offset is the attacker's, and a trap is a denial of service.
struct ZipCrashTests {
    func le(_ value: UInt64, _ width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// A local header, a central directory of one entry named `name` with `extra`, and end records.
    func zip(name: String = "archive/data.pkl", extra: [UInt8], zip64End: [UInt8]? = nil) -> [UInt8] {
        let nameBytes = Array(name.utf8)
        var bytes = le(0x0403_4B50, 4) + [UInt8](repeating: 0, count: 22) + le(UInt64(nameBytes.count), 2)
        bytes += le(0, 2) + nameBytes
        let directoryOffset = bytes.count
        var directory = le(0x0201_4B50, 4) + [UInt8](repeating: 0, count: 16)
        directory += le(0xFFFF_FFFF, 4) + le(0xFFFF_FFFF, 4)  // compressed size, size
        directory += le(UInt64(nameBytes.count), 2) + le(UInt64(extra.count), 2) + le(0, 2)
        directory += [UInt8](repeating: 0, count: 8) + le(0xFFFF_FFFF, 4) + nameBytes + extra
        bytes += directory
        if let zip64End {
            let record = bytes.count
            bytes += zip64End
            bytes += le(0x0706_4B50, 4) + le(0, 4) + le(UInt64(record), 8) + le(1, 4)
            bytes += le(0x0605_4B50, 4) + le(0, 4) + le(0xFFFF, 2) + le(0xFFFF, 2) + le(0xFFFF_FFFF, 4)
            bytes += le(0xFFFF_FFFF, 4) + le(0, 2)
        } else {
            bytes += le(0x0605_4B50, 4) + le(0, 4) + le(1, 2) + le(1, 2) + le(UInt64(directory.count), 4)
            bytes += le(UInt64(directoryOffset), 4) + le(0, 2)
        }
        return bytes
    }

    func judge(_ bytes: [UInt8]) throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-zip-crash")
        defer { folder.remove() }
        let url = folder.path("model.pt")
        try Data(bytes).write(to: url)
        #expect(throws: ModelDepotError.self) { try PickleFile.inspect(url) }
        _ = PickleFile.sniff(bytes)
    }

    /// ZIP64 sizes and offsets past Int64.max, in an entry's extra field and in the ZIP64 end record.
    @Test func zip64FieldsPastInt64MaxAreRefusedNotTrapped() throws {
        let huge = le(UInt64.max, 8)
        try judge(zip(extra: le(1, 2) + le(24, 2) + huge + huge + huge))
        let record =
            le(0x0606_4B50, 4) + le(44, 8) + le(0, 4) + le(0, 8) + huge + huge + huge
        try judge(zip(extra: [], zip64End: record))
        let nearEnd = le(0x0606_4B50, 4) + le(44, 8) + le(0, 4) + le(0, 8) + le(1, 8) + huge + le(UInt64.max - 8, 8)
        try judge(zip(extra: [], zip64End: nearEnd))
    }

    /// Random and mutated DEFLATE streams: the decoder fails or stops at its limit, and never traps or hangs.
    @Test func inflateSurvivesRandomAndMutatedStreams() {
        var generator = SystemRandomNumberGenerator()
        // A fixed-Huffman block of "abcabcabc…" and a stored block, then mutations of them.
        let seeds: [[UInt8]] = [
            [0x4B, 0x4C, 0x4A, 0x4E, 0x44, 0x42, 0x00, 0x00], [0x01, 0x03, 0x00, 0xFC, 0xFF, 0x61, 0x62, 0x63],
            [0x05, 0xC0, 0x81, 0x00, 0x00, 0x00, 0x00, 0x00, 0x90, 0xFF, 0x6B, 0x01, 0x00],
        ]
        for round in 0..<20_000 {
            var input: [UInt8]
            if round % 2 == 0 {
                input = (0..<Int.random(in: 0...300, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            } else {
                input = seeds[round % seeds.count]
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let at = Int.random(in: 0..<input.count, using: &generator)
                    input[at] ^= UInt8(1) << UInt8.random(in: 0...7, using: &generator)
                }
            }
            let output = try? Inflate.decompress(input, limit: 1 << 16)
            #expect((output?.count ?? 0) <= 1 << 16)
        }
    }
}
