import CompressNIO
import Foundation
import ModelDepotCore
import NIOCore
import Testing

@testable import ModelDepotTransfer

/// API answers in a content coding nobody asked for: decoded when they can be, refused clearly when not.
@Suite struct ContentCodingDecodeTests {
    static let url = URL(string: "http://hub.example/api/models/acme/tiny")!
    static let json = Array(#"{"id": "acme/tiny", "siblings": []}"#.utf8)

    static func compressed(_ bytes: [UInt8], _ algorithm: CompressionAlgorithm) throws -> [UInt8] {
        var buffer = ByteBuffer(bytes: bytes)
        return Array(try buffer.compress(with: algorithm).readableBytesView)
    }

    @Test func gzipDeflateAndStackedCodingsDecode() throws {
        for (coding, bytes) in [
            ("gzip", try Self.compressed(Self.json, .gzip())), ("x-gzip", try Self.compressed(Self.json, .gzip())),
            ("deflate", try Self.compressed(Self.json, .zlib())),
            // Some servers send raw deflate under "deflate".
            ("deflate", try Self.compressed(Self.json, .deflate())),
            ("identity", Self.json), (" GZIP ", try Self.compressed(Self.json, .gzip())),
            ("deflate, gzip", try Self.compressed(try Self.compressed(Self.json, .zlib()), .gzip())),
        ] {
            #expect(
                try HTTPExchange.decodedBody(bytes, contentEncoding: coding, from: Self.url) == Self.json, "\(coding)")
        }
        #expect(try HTTPExchange.decodedBody(Self.json, contentEncoding: nil, from: Self.url) == Self.json)
    }

    @Test func whatCannotBeDecodedIsRefusedClearly() throws {
        for (coding, bytes) in [("br", Self.json), ("gzip", Self.json), ("zstd", Self.json)] {
            let error = #expect(throws: ModelDepotError.self) {
                _ = try HTTPExchange.decodedBody(bytes, contentEncoding: coding, from: Self.url)
            }
            #expect(error?.code == .protocolViolation)
            #expect(error?.message.contains(coding) == true)
        }
        // A bomb: more than the limit once inflated.
        let bomb = try Self.compressed([UInt8](repeating: 0, count: HTTPExchange.maximumDecodedBytes + 1), .gzip())
        let error = #expect(throws: ModelDepotError.self) {
            _ = try HTTPExchange.decodedBody(bomb, contentEncoding: "gzip", from: Self.url)
        }
        #expect(error?.message.contains("inflates past") == true)
    }
}
