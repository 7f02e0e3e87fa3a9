import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// GGUF headers an attacker writes: every number is the file's, and the model page reads the header of any
/// downloaded GGUF, so a lie must be refused (`invalidModelFile`) — never a trap, a runaway recursion or a huge
/// allocation.
@Suite struct HostileGGUFTests {
    static func little<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian, Array.init)
    }
    static func text(_ value: String) -> [UInt8] { little(UInt64(value.utf8.count)) + Array(value.utf8) }

    /// A version-3 header with `keys` (already encoded) and `tensors` (already encoded), padded with zeros.
    static func gguf(keys: [[UInt8]], tensors: [[UInt8]] = [], padding: Int = 256) -> [UInt8] {
        Array("GGUF".utf8) + little(UInt32(3)) + little(UInt64(tensors.count)) + little(UInt64(keys.count))
            + keys.flatMap { $0 } + tensors.flatMap { $0 } + [UInt8](repeating: 0, count: padding)
    }

    static let cases: [(String, [UInt8])] = [
        // A string whose length is near 2^64: its skip must not overflow the offset.
        ("a huge string", gguf(keys: [text("general.description") + little(UInt32(8)) + little(UInt64.max - 3)])),
        // An array of u64 whose byte count overflows.
        (
            "an array that overflows",
            gguf(keys: [text("x.y") + little(UInt32(9)) + little(UInt32(10)) + little(UInt64.max / 4)])
        ),
        // Arrays of arrays of arrays…: each level recursed before.
        (
            "nested arrays",
            gguf(keys: [text("x.y") + Array((0..<20_000).map { _ in little(UInt32(9)) + little(UInt64(1)) }.joined())])
        ),
        // An alignment of 2^64 - 1.
        ("an absurd alignment", gguf(keys: [text("general.alignment") + little(UInt32(10)) + little(UInt64.max)])),
        // A tensor whose dimensions multiply past 2^64, and one whose offset plus size does.
        (
            "dimensions that overflow",
            gguf(
                keys: [],
                tensors: [
                    text("t") + little(UInt32(2)) + little(UInt64.max / 2) + little(UInt64(4)) + little(UInt32(0))
                        + little(UInt64(0))
                ])
        ),
        (
            "an offset that overflows",
            gguf(
                keys: [],
                tensors: [
                    text("t") + little(UInt32(1)) + little(UInt64(16)) + little(UInt32(0)) + little(UInt64.max - 8)
                ])
        ),
        // A key name of a gigabyte (claimed).
        (
            "a huge key",
            Array("GGUF".utf8) + little(UInt32(3)) + little(UInt64(0)) + little(UInt64(1)) + little(UInt64(1 << 30))
                + [UInt8](repeating: 65, count: 64)
        ),
    ]

    @Test(arguments: cases.map(\.0))
    func isRefusedNotTrapped(_ name: String) throws {
        let bytes = try #require(Self.cases.first { $0.0 == name }?.1)
        let folder = try TemporaryDirectory(prefix: "modeldepot-hostile-gguf")
        defer { folder.remove() }
        let file = folder.path("model.gguf")
        try Data(bytes).write(to: file)
        #expect(throws: ModelDepotError.self, "\(name)") { try GGUFHeader.read(path: file.path) }
    }

    /// Counts that are negative, or an empty per-layer array, give no KV-cache estimate rather than a wrong one.
    @Test func negativeOrEmptyCountsGiveNoEstimate() throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-hostile-gguf")
        defer { folder.remove() }
        let common = [
            Self.text("llama.block_count") + Self.little(UInt32(4)) + Self.little(UInt32(2)),
            Self.text("llama.attention.head_count") + Self.little(UInt32(4)) + Self.little(UInt32(4)),
            Self.text("llama.embedding_length") + Self.little(UInt32(4)) + Self.little(UInt32(64)),
        ]
        for (label, kv) in [
            ("negative", Self.text("llama.attention.head_count_kv") + Self.little(UInt32(5)) + Self.little(Int32(-1))),
            (
                "empty array",
                Self.text("llama.attention.head_count_kv") + Self.little(UInt32(9)) + Self.little(UInt32(5))
                    + Self.little(UInt64(0))
            ),
            (
                "negative entry",
                Self.text("llama.attention.head_count_kv") + Self.little(UInt32(9)) + Self.little(UInt32(5))
                    + Self.little(UInt64(2))
                    + Self.little(Int32(2)) + Self.little(Int32(-4))
            ),
        ] {
            let file = folder.path("\(label).gguf")
            try Data(Self.gguf(keys: common + [kv])).write(to: file)
            let header = try GGUFHeader.read(path: file.path)
            #expect(header.headCountKV == nil && header.headCountKVPerLayer == nil, "\(label)")
            // Without a KV-head count llama.cpp uses the head count: 2 × 2 layers × 8 × 4 heads × 16 × 2 bytes.
            #expect(header.kvCacheBytes(context: 8) == 2 * 2 * 8 * 4 * 16 * 2, "\(label)")
        }
    }
}
