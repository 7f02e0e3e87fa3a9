import ArgumentParser
import Foundation
import ModelDepotXet

/// The Xet primitives' throughput on one file, in this process (bench/xet.sh runs the references on the same
/// bytes): keyed BLAKE3 over 64 KiB chunks (as chunk hashes are taken), LZ4 decompression of blocks compressed
/// per chunk, content-defined chunking alone, and the whole file hash (chunking, chunk hashes, tree).
struct BenchXetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "xet")

    @Option(help: "The file to measure on.") var file: String
    @Option(help: "A file of LZ4 blocks, each a u32 compressed length, a u32 original length and the block.")
    var blocks: String
    @Option(help: "Runs; the best is reported.") var runs = 3

    struct Result: Encodable {
        var bytes: Int
        var blake3MiBPerSecond: Double
        var lz4MiBPerSecond: Double
        var chunkingMiBPerSecond: Double
        var fileHashMiBPerSecond: Double
        var fileHash: String
    }

    func run() throws {
        let data = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        let packed = Array(try Data(contentsOf: URL(fileURLWithPath: blocks)))
        var framed: [(block: [UInt8], size: Int)] = []
        var at = 0
        func word(_ index: Int) -> Int { (0..<4).reduce(0) { $0 | Int(packed[index + $1]) << (8 * $1) } }
        while at + 8 <= packed.count {
            let length = word(at)
            let size = word(at + 4)
            framed.append((Array(packed[(at + 8)..<(at + 8 + length)]), size))
            at += 8 + length
        }
        let inflated = framed.reduce(0) { $0 + $1.size }
        func best(_ work: () throws -> Void) rethrows -> Double {
            var fastest = Double.infinity
            for _ in 0..<runs {
                let start = ContinuousClock.now
                try work()
                let elapsed = start.duration(to: .now)
                fastest = min(
                    fastest, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            }
            return fastest
        }
        let mebibytes = Double(data.count) / 1_048_576
        let blake3 = best {
            var start = 0
            while start < data.count {
                let end = min(data.count, start + 65536)
                _ = XetHash.chunk(data[start..<end])
                start = end
            }
        }
        let lz4 = try best {
            for (block, size) in framed { _ = try LZ4Block.decompress(block, size: size) }
        }
        let chunking = best { _ = XetChunker.chunkLengths(data) }
        var hash = XetHash.zero
        let fileHash = best { hash = XetHash.file(of: data).hash }
        printJSON(
            Result(
                bytes: data.count, blake3MiBPerSecond: mebibytes / blake3,
                lz4MiBPerSecond: Double(inflated) / 1_048_576 / lz4, chunkingMiBPerSecond: mebibytes / chunking,
                fileHashMiBPerSecond: mebibytes / fileHash, fileHash: hash.description))
    }
}
