import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// Our DEFLATE decoder against Python's zlib (the encoder `np.savez_compressed` and `zipfile` use): stored, fixed and
/// dynamic Huffman blocks, every compression level, long matches, empty input, and streams cut short.
@Suite struct InflateTests {
    @Test func whatZlibCompressesInflatesToTheSameBytes() async throws {
        let script = """
            import json, random, sys, zlib
            random.seed(7)
            texts = [b"", b"a", b"abc" * 1000, bytes(range(256)) * 40, bytes(random.getrandbits(8) for _ in range(70000)),
                     b"".join(random.choice([b"tensor", b"weight", b"bias", b"\\x00" * 300]) for _ in range(5000))]
            cases = []
            for text in texts:
                for level in (0, 1, 6, 9):
                    for strategy in (zlib.Z_DEFAULT_STRATEGY, zlib.Z_FIXED, zlib.Z_HUFFMAN_ONLY):
                        c = zlib.compressobj(level, zlib.DEFLATED, -15, 9, strategy)
                        cases.append({"plain": text.hex(), "deflated": (c.compress(text) + c.flush()).hex()})
            json.dump(cases, sys.stdout)
            """
        let started = try CLIRunner.startProgram(PythonVenv.python, ["-c", script])
        let made = await CLIRunner.wait(started.0, started.1, started.2)
        try #require(made.status == 0, "\(made.stderr)")
        let cases = try #require(try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [[String: String]])
        #expect(cases.count == 72)
        for (index, sample) in cases.enumerated() {
            let plain = Self.bytes(hex: sample["plain"]!)
            let deflated = Self.bytes(hex: sample["deflated"]!)
            #expect(try Inflate.decompress(deflated) == plain, "case \(index)")
            // A limit returns exactly that prefix, without decoding the rest.
            if plain.count > 100 { #expect(try Inflate.decompress(deflated, limit: 100) == Array(plain.prefix(100))) }
            // Cut short, it says so instead of inventing bytes.
            if deflated.count > 8, plain.count > 1000 {
                #expect(throws: Inflate.Failure.truncated) {
                    try Inflate.decompress(Array(deflated.prefix(deflated.count / 2)))
                }
            }
        }
    }

    static func bytes(hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}
