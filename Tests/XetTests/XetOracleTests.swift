import Foundation
import ModelDepotTesting
import ModelDepotXet
import Testing

/// ModelDepot's Xet primitives against the references, on generated inputs with sizes around every boundary:
/// BLAKE3 plain and keyed against PyPI blake3 (C); LZ4 blocks that PyPI lz4 (C) compressed, in both its modes, and
/// LZ4 frames (linked and independent blocks, checksums, the content size), decompressed byte-exact; and whole files chunked and hashed against hf_xet's `hash_files` — the file hash covers
/// every chunk's boundary, hash and size, so equal file hashes mean the chunking and hashing are Xet's.
@Suite struct XetOracleTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let python = packageRoot.appendingPathComponent(".venv-xet/bin/python")

    /// Bytes that compress and repeat: numbered lines with a varying word, as text and tokenizer files are.
    static func text(_ count: Int, seed: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var line = seed
        while bytes.count < count {
            bytes += Array("line \(line): the model's weights \(line % 7 == 0 ? "changed" : "stay") here\n".utf8)
            line += 1
        }
        return Array(bytes.prefix(count))
    }

    /// Floats, as safetensors holds them: what byte grouping is for.
    static func floats(_ count: Int) -> [UInt8] {
        (0..<(count / 4 + 1)).flatMap { index -> [UInt8] in
            let value = Float(sin(Double(index) / 50)) * 0.02
            return withUnsafeBytes(of: value.bitPattern.littleEndian, Array.init)
        }.prefix(count).map { $0 }
    }

    @Test func primitivesAgreeWithTheReferences() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.python.path),
            "needs .venv-xet with blake3 1.0.11, lz4 4.4.4 and hf-xet 1.8.0 (scripts/test installs them)")
        let folder = try TemporaryDirectory(prefix: "modeldepot-xet-oracle")
        defer { folder.remove() }
        var inputs: [String: [UInt8]] = [:]
        func add(_ name: String, _ bytes: [UInt8]) -> String {
            let path = folder.path(name).path
            inputs[path] = bytes
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
            return path
        }
        // BLAKE3: around its 64-byte blocks, 1024-byte chunks and the tree's levels.
        let hashSizes = [
            0, 1, 63, 64, 65, 127, 128, 1023, 1024, 1025, 2047, 2048, 2049, 3072, 3073, 4096, 4097, 8191, 8192, 8193,
            16384, 31 * 1024 + 5, 65536, 100_003, 1 << 20, (1 << 20) + 1,
        ]
        let blake3Files = hashSizes.map { add("blake3-\($0)", SampleData.bytes(count: $0, seed: UInt64($0) + 1)) }
        // LZ4: random (literals only), text (matches, overlapping ones), floats, zeros (long runs).
        var lz4Files: [String] = []
        for size in [1, 4, 12, 13, 64, 65_535, 65_536, 65_537, 200_000] {
            lz4Files.append(add("lz4-random-\(size)", SampleData.bytes(count: size, seed: UInt64(size) * 3)))
            lz4Files.append(add("lz4-text-\(size)", Self.text(size, seed: size)))
            lz4Files.append(add("lz4-floats-\(size)", Self.floats(size)))
            lz4Files.append(add("lz4-zeros-\(size)", [UInt8](repeating: 0, count: size)))
        }
        // Files through Xet: empty, single chunks, at the minimum and maximum chunk, many chunks (a tree of several
        // levels), text whose lines repeat, zeros (every chunk cut at the maximum).
        let xetFiles = [
            add("xet-empty", []), add("xet-1", [42]), add("xet-8191", SampleData.bytes(count: 8191, seed: 5)),
            add("xet-8192", SampleData.bytes(count: 8192, seed: 6)),
            add("xet-65536", SampleData.bytes(count: 65536, seed: 7)),
            add("xet-131072", SampleData.bytes(count: 131_072, seed: 8)),
            add("xet-131073", SampleData.bytes(count: 131_073, seed: 9)),
            add("xet-random-3m", SampleData.bytes(count: 3 << 20, seed: 10)),
            add("xet-random-9m", SampleData.bytes(count: (9 << 20) + 12345, seed: 11)),
            add("xet-text-2m", Self.text(2 << 20, seed: 1)), add("xet-zeros-1m", [UInt8](repeating: 0, count: 1 << 20)),
            add("xet-floats-4m", Self.floats(4 << 20)),
        ]
        let key = XetHash.dataKey.map { String(format: "%02x", $0) }.joined()
        let manifest = folder.path("manifest.json")
        try JSONSerialization.data(withJSONObject: [
            "blake3": blake3Files, "lz4": lz4Files, "xet": xetFiles, "key": key,
        ])
        .write(to: manifest)
        let oracle = try PeerProcess(
            Self.python,
            [Self.packageRoot.appendingPathComponent("Tests/PythonPeers/xet_oracle.py").path, manifest.path],
            in: folder.url, log: folder.path("oracle.log"))
        let finished = await oracle.waitForExit()
        let said = oracle.output
        try #require(finished, "\(said)")
        let answers = try #require(
            said.split(separator: "\n").last.flatMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: [String: String]]
            }, "\(said)")

        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        for path in blake3Files {
            let bytes = try #require(inputs[path])
            #expect(hex(BLAKE3.hash(bytes)) == answers["blake3"]?[path], "BLAKE3 of \(bytes.count) bytes")
            #expect(
                hex(BLAKE3.hash(bytes, key: XetHash.dataKey)) == answers["blake3_keyed"]?[path],
                "keyed BLAKE3 of \(bytes.count) bytes")
        }
        // Streaming in odd pieces gives the same digest as one call.
        let long = try #require(inputs[blake3Files.last!])
        var pieces = BLAKE3(key: XetHash.dataKey)
        var start = 0
        for size in [1, 63, 64, 1000, 1025, 7, 70_000] + Array(repeating: 100_000, count: 11) where start < long.count {
            let end = min(long.count, start + size)
            pieces.update(Array(long[start..<end]))
            start = end
        }
        pieces.update(Array(long[start...]))
        #expect(hex(pieces.finalize()) == answers["blake3_keyed"]?[blake3Files.last!])

        for label in ["lz4", "lz4_high"] {
            for path in lz4Files {
                let original = try #require(inputs[path])
                let block = try Data(contentsOf: URL(fileURLWithPath: try #require(answers[label]?[path])))
                #expect(
                    try LZ4Block.decompress(Array(block), size: original.count) == original,
                    "\(label) \((path as NSString).lastPathComponent)")
            }
        }
        for label in ["frame_linked", "frame_independent", "frame_checksums", "frame_high"] {
            for path in lz4Files {
                let original = try #require(inputs[path])
                let frame = try Data(contentsOf: URL(fileURLWithPath: try #require(answers[label]?[path])))
                #expect(
                    try LZ4Frame.decompress(Array(frame), size: original.count) == original,
                    "\(label) \((path as NSString).lastPathComponent)")
            }
        }

        for path in xetFiles {
            let bytes = try #require(inputs[path])
            let ours = XetHash.file(of: bytes)
            #expect(
                ours.hash.description == answers["xet"]?[path],
                "\((path as NSString).lastPathComponent): \(ours.chunks.count) chunks")
            // Every chunk is within Xet's bounds, the last one excepted below the minimum.
            for (index, chunk) in ours.chunks.enumerated() {
                #expect(chunk.size <= UInt64(XetChunker.maximumSize))
                #expect(chunk.size >= UInt64(XetChunker.minimumSize) || index == ours.chunks.count - 1)
            }
        }
    }
}
