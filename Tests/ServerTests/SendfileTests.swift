import Foundation
import Logging
import ModelDepot
import ModelDepotPlatform
import ModelDepotServer
import ModelDepotTesting
import Testing

/// Files at rest leave the mirror by `sendfile` (FileRegionHandler): the same bytes, ranges, preconditions and
/// keep-alive as before, and a file truncated under a transfer ends it instead of stalling it.
@Suite struct SendfileTests {
    static let weights = SampleData.bytes(count: 3 << 20, seed: 7)
    static let layout: [String: [UInt8]] = [
        "acme/tiny/model.bin": weights, "acme/tiny/a.txt": Array("first\n".utf8),
        "acme/tiny/b.txt": Array("second\n".utf8),
    ]

    static func counter(_ name: String, _ mirror: MirrorFixture) async throws -> Int {
        let text = String(decoding: try await mirror.get("/metrics").body, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return Double(line?.split(separator: " ").last ?? "").map { Int($0) } ?? -1
    }

    @Test func wholeFilesAndRangesGoOutBySendfileWithExactBytes() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let path = "/acme/tiny/resolve/main/model.bin"
            let whole = try await mirror.get(path)
            #expect(whole.status == 200)
            #expect(whole.body == Self.weights)
            #expect(whole.header("Content-Length") == "\(Self.weights.count)")
            #expect(whole.header("x-modeldepot-file-region") == nil, "the marker never leaves the server")

            let part = try await mirror.get(path, headers: [(name: "Range", value: "bytes=1000-2999")])
            #expect(part.status == 206)
            #expect(part.body == Array(Self.weights[1000..<3000]))
            let tail = try await mirror.get(path, headers: [(name: "Range", value: "bytes=-10")])
            #expect(tail.body == Array(Self.weights.suffix(10)))

            let head = try await mirror.get(path, method: "HEAD")
            #expect(head.status == 200 && head.body.isEmpty)
            let etag = try #require(whole.header("ETag"))
            let unchanged = try await mirror.get(path, headers: [(name: "If-None-Match", value: etag)])
            #expect(unchanged.status == 304 && unchanged.body.isEmpty)

            #expect(try await Self.counter("modeldepot_sendfile_responses_total", mirror) == 3)
            #expect(try await Self.counter("modeldepot_served_bytes_total", mirror) == Self.weights.count + 2010)
        }
    }

    @Test func pipelinedRequestsOnOneConnectionAreAnsweredInOrder() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let connection = try LoopbackConnection(port: mirror.baseURL.port!)
            connection.transmit(
                "GET /acme/tiny/resolve/main/a.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                    + "GET /acme/tiny/resolve/main/model.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=0-3\r\n\r\n"
                    // Answers with nothing staged between two files: they pass the handler unread.
                    + "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                    + "GET /acme/tiny/resolve/main/model.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=4-7\r\n\r\n"
                    + "GET /acme/tiny/resolve/main/b.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            let received = try #require(await connection.readToEnd(), "the server did not close after the last")
            let text = String(decoding: received, as: UTF8.self)
            let first = try #require(text.range(of: "\r\n\r\nfirst\n"))
            let second = try #require(text.range(of: "HTTP/1.1 206"))
            let third = try #require(text.range(of: "\r\n\r\nsecond\n"))
            let health = try #require(text.range(of: #"{"status":"ok"}"#))
            #expect(first.upperBound <= second.lowerBound && second.upperBound <= health.lowerBound)
            #expect(health.upperBound <= third.lowerBound)
            let firstRange = try #require(received.firstRange(of: Array(Self.weights[0..<4])))
            let secondRange = try #require(received.firstRange(of: Array(Self.weights[4..<8])))
            #expect(firstRange.upperBound <= secondRange.lowerBound, "the ranges' bytes come in order")
            #expect(text.components(separatedBy: "HTTP/1.1 206").count == 3)
        }
    }

    @Test func aFileTruncatedUnderATransferEndsItShort() async throws {
        let big = SampleData.bytes(count: 16 << 20, seed: 3)
        let root = try TemporaryDirectory(prefix: "modeldepot-sendfile")
        defer { root.remove() }
        try FileManager.default.createDirectory(at: root.path("acme/big"), withIntermediateDirectories: true)
        try Data(big).write(to: root.path("acme/big/model.bin"))
        var server = MirrorServer(
            root: root.url, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        // Longer than readToEnd waits: only the size watch can end the transfer in time.
        server.idleTimeout = .seconds(300)
        try await MirrorFixture.serving(server, root: root) { mirror in
            let connection = try LoopbackConnection(port: mirror.baseURL.port!, receiveBuffer: 64 << 10)
            connection.transmit("GET /acme/big/resolve/main/model.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            // One receive of at most 64 KiB: the transfer is under way and stalls on full socket buffers far
            // short of the file's end.
            let started = try #require(await connection.firstBytes(), "the transfer did not start")
            let handle = try FileHandle(forWritingTo: mirror.root.path("acme/big/model.bin"))
            try handle.truncate(atOffset: 1 << 20)
            try handle.close()
            // Without the size watch, sendfile would send nothing more and the connection would hang open.
            let rest = try #require(await connection.readToEnd(), "the connection stays open")
            #expect(started.count + rest.count < big.count, "the client cannot take it for the whole file")
        }
    }
}
