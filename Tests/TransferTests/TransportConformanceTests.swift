import Foundation
import ModelDepot
import ModelDepotPlatform
import ModelDepotTesting
import Synchronization
import Testing

@testable import ModelDepotTransfer

/// The two transports the engine runs on: async-http-client (Linux's default) and URLSession (Apple platforms'
/// default; here it runs on swift-corelibs-foundation). Every test of ``TransportConformanceTests`` runs once per
/// transport, so the Apple default is not untested code.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case asyncHTTPClient
    case urlSession

    var testDescription: String { rawValue }

    var transport: any HTTPTransport {
        switch self {
        case .asyncHTTPClient: AsyncHTTPTransport.shared
        case .urlSession: TransportKind.urlSessionTransport
        }
    }

    /// One session for the suite (each test's tasks are its own).
    static let urlSessionTransport = URLSessionTransport()
}

/// What the engine needs of any transport: ranges as asked, redirects and bodies left alone, every fault the
/// engine recovers from surfaced so that it can, errors worded for people, and a large file byte-exact.
///
/// Serialized: its cases (two 256 MiB transfers among them) would otherwise run side by side and starve the suite's
/// timing-sensitive tests of the machine's two cores.
@Suite(.serialized) struct TransportConformanceTests {
    @Test(arguments: TransportKind.allCases)
    func aRangeComesBackAsAsked(_ kind: TransportKind) async throws {
        let fixture = try await DownloadFixture.make(size: 100_000)
        defer { Task { await fixture.cleanUp() } }
        let response = try await kind.transport.send(
            TransportRequest(url: fixture.url, headers: [("Range", "bytes=1000-5999"), ("If-Range", "\"whatever\"")]))
        // An If-Range that does not match the file's ETag asks for the whole file: 200 and every byte.
        #expect(response.status == 200)
        #expect(try await response.body.collect(limit: 1 << 20, from: fixture.url) == fixture.bytes)
        let ranged = try await kind.transport.send(
            TransportRequest(url: fixture.url, headers: [("Range", "bytes=1000-5999")]))
        #expect(ranged.status == 206 && ranged.header("Content-Range") == "bytes 1000-5999/100000")
        #expect(try await ranged.body.collect(limit: 1 << 20, from: fixture.url) == Array(fixture.bytes[1000..<6000]))
        // Nothing but the identity encoding is ever advertised: the engine wants the bytes as stored.
        let asked = try #require(fixture.server.requests.last)
        #expect((asked.header("Accept-Encoding") ?? "identity") == "identity", "\(asked.headers)")
    }

    @Test(arguments: TransportKind.allCases)
    func aCompressedBodyArrivesAsSent(_ kind: TransportKind) async throws {
        // gzip of "the same bytes, compressed by the server\n" four times.
        let gzipped: [UInt8] = [
            31, 139, 8, 0, 0, 0, 0, 0, 2, 3, 43, 201, 72, 85, 40, 78, 204, 77, 85, 72, 170, 44, 73, 45, 214, 81, 72,
            206, 207, 45, 40, 74, 45, 46, 78, 77, 1, 138, 40, 148, 128, 100, 83, 139, 202, 82, 139, 184, 74, 6, 78,
            33, 0, 155, 97, 252, 12, 164, 0, 0, 0,
        ]
        let server = try await ScriptedHTTPServer.start(replies: [
            .init(
                headers: [("Content-Encoding", "gzip"), ("Content-Length", "\(gzipped.count)")],
                steps: [.sendBytes(gzipped)])
        ])
        defer { Task { try? await server.shutdown() } }
        let url = server.baseURL.appendingPathComponent("api/answer")
        let response = try await kind.transport.send(
            TransportRequest(url: url, headers: [("Accept-Encoding", "identity")]))
        // The body and its headers agree: async-http-client hands the gzip over as sent; URLSession undoes it on
        // its own (that cannot be turned off) and then drops Content-Encoding. Either way the engine decodes once.
        let body = try await response.body.collect(limit: 1 << 16, from: url)
        let encoding = response.header("Content-Encoding")
        switch kind {
        case .asyncHTTPClient: #expect(encoding == "gzip" && body == gzipped)
        case .urlSession: #expect(encoding == nil && response.header("Content-Length") == nil)
        }
        let plain = try HTTPExchange.decodedBody(body, contentEncoding: encoding, from: url)
        #expect(
            String(decoding: plain, as: UTF8.self)
                == String(repeating: "the same bytes, compressed by the server\n", count: 4))
    }

    @Test(arguments: TransportKind.allCases)
    func redirectsComeBackToTheEngine(_ kind: TransportKind) async throws {
        let fixture = try await DownloadFixture.make(size: 100_000)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.setFile("/moved.bin", fixture.bytes)
        fixture.server.inject(.redirect(to: "/moved.bin"), when: RequestMatcher { $0.path == "/model.bin" })
        let response = try await kind.transport.send(TransportRequest(url: fixture.url))
        #expect(response.status == 302 && response.header("Location") == "/moved.bin")
        #expect(fixture.server.requests.map(\.path) == ["/model.bin"], "the transport followed the redirect itself")
        // The engine follows it.
        fixture.server.inject(.redirect(to: "/moved.bin"), when: RequestMatcher { $0.path == "/model.bin" })
        let result = try await fixture.downloader(transport: kind.transport).download(
            fixture.request(sha256: fixture.sha256))
        #expect(result.sha256 == fixture.sha256)
    }

    @Test(arguments: TransportKind.allCases)
    func aResetMidBodyIsRetried(_ kind: TransportKind) async throws {
        let fixture = try await DownloadFixture.make(size: 3 << 20)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.reset(afterBytes: 100_000))
        let result = try await fixture.downloader(transport: kind.transport).download(
            fixture.request(sha256: fixture.sha256))
        #expect(result.sha256 == fixture.sha256 && fixture.server.pendingFaults == 0)
        #expect(try fixture.destinationBytes() == fixture.bytes)
    }

    @Test(arguments: TransportKind.allCases)
    func aTruncatedBodyIsRetried(_ kind: TransportKind) async throws {
        let fixture = try await DownloadFixture.make(size: 1 << 20)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.truncate(afterBytes: 50_000))
        let result = try await fixture.downloader(transport: kind.transport).download(
            fixture.request(sha256: fixture.sha256))
        #expect(result.sha256 == fixture.sha256 && fixture.server.pendingFaults == 0)
    }

    @Test(arguments: TransportKind.allCases)
    func a503BurstIsRetried(_ kind: TransportKind) async throws {
        let fixture = try await DownloadFixture.make(size: 100_000)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.status(503), times: 3)
        let result = try await fixture.downloader(transport: kind.transport).download(
            fixture.request(sha256: fixture.sha256))
        #expect(result.sha256 == fixture.sha256)
        #expect(fixture.clock.sleeps.count == 3)
    }

    @Test(arguments: TransportKind.allCases)
    func a429WaitsAsTheServerSays(_ kind: TransportKind) async throws {
        let fixture = try await DownloadFixture.make(size: 100_000)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.status(429, headers: [("Retry-After", "7")]))
        _ = try await fixture.downloader(transport: kind.transport).download(fixture.request(sha256: fixture.sha256))
        #expect(
            fixture.clock.sleeps.count == 1 && (.seconds(7)...(.milliseconds(7700))).contains(fixture.clock.sleeps[0]))
        #expect(try fixture.destinationBytes() == fixture.bytes)
    }

    @Test(arguments: TransportKind.allCases)
    func aStalledBodyIsDroppedByTheEngine(_ kind: TransportKind) async throws {
        let fixture = try await DownloadFixture.make(size: 100_000)
        defer { Task { await fixture.cleanUp() } }
        fixture.server.inject(.stall(afterBytes: 10_000))
        let clock = TestClock()
        var configuration = DownloadFixture.configuration()
        configuration.stallTimeout = .seconds(30)
        configuration.retryPolicy = RetryPolicy(maxAttempts: 50, baseDelay: .seconds(1), jitter: 0, budget: nil)
        let downloader = fixture.downloader(configuration, clock: clock, transport: kind.transport)
        let request = fixture.request(sha256: fixture.sha256)
        let download = Task { try await downloader.download(request) }
        // Time moves only once the stalled answer's bytes are out and someone sleeps on the clock; after the
        // retry has been asked for, it is nudged a second at a time so the retry's own watchdog stays quiet.
        let finished = await waitUntil {
            if clock.sleeperCount > 0, fixture.server.bodyBytesSent >= 10_000 {
                clock.advance(by: fixture.server.requests.count == 1 ? .seconds(16) : .seconds(1))
            }
            return FileManager.default.fileExists(atPath: fixture.destination.path)
        }
        #expect(finished, "requests \(fixture.server.requests.count), sent \(fixture.server.bodyBytesSent)")
        guard finished else {
            download.cancel()
            return
        }
        #expect(try await download.value.sha256 == fixture.sha256)
        #expect(fixture.server.requests.count >= 2)
    }

    @Test(arguments: TransportKind.allCases)
    func aRefusedConnectionIsNamed(_ kind: TransportKind) async throws {
        let port = try LoopbackPort.unused()
        let url = URL(string: "http://127.0.0.1:\(port)/model.bin")!
        let error = await #expect(throws: ModelDepotError.self) {
            _ = try await kind.transport.send(TransportRequest(url: url))
        }
        #expect(
            error?.code == .network && error?.message.contains("connection refused") == true,
            "\(String(describing: error))")
        #expect(TransportFailure.isRefusedConnection(try #require(error)))
    }

    /// async-http-client only: Linux's URLSession reads every body to its end whatever the reader does, and keeps
    /// the connection (``aLargeFileArrivesByteExact(_:)`` says what that costs in memory).
    @Test func aBodyLeftUnreadClosesItsConnection() async throws {
        let size = 64 << 20
        let fixture = try await DownloadFixture.make(size: size, seed: 5)
        defer { Task { await fixture.cleanUp() } }
        let transport = AsyncHTTPTransport.shared
        weak let delegate: StreamedResponse?
        let body: BackpressuredBody
        var response: TransportResponse?
        do {
            // As the engine asks for a range: without the socket's idle timer, which would close the connection
            // after 20 s and hide a body left paused for good.
            let sent = try await transport.sendStreamed(TransportRequest(url: fixture.url, callerDetectsStalls: true))
            (delegate, body, response) = (sent.delegate, sent.delegate.body, sent.response)
        }
        var iterator = response?.body.makeAsyncIterator()
        let first = try await iterator?.next()
        #expect((first?.count ?? 0) > 0)
        // The reader is busy elsewhere: the read-ahead fills and the connection stops reading.
        #expect(await waitUntil { body.isPaused }, "\(fixture.server.bodyBytesSent) bytes sent")
        // The engine walks away from the body (an error page quoted, a segment another connection took over): the
        // transport must close the connection, not keep it in its pool half read, or paused, for good; and nothing
        // of the request may stay in memory (async-http-client's callback on a pending read holds the request,
        // which holds the delegate, which holds the read-ahead).
        response = nil
        iterator = nil
        #expect(
            await waitUntil { fixture.server.openConnections == 0 },
            "\(fixture.server.openConnections) connections open, \(fixture.server.bodyBytesSent) bytes sent")
        #expect(await waitUntil { delegate == nil }, "the request, its delegate and its buffers are still in memory")
        // What was read ahead is bounded by the transport's buffer and the sockets', not by the file.
        #expect(fixture.server.bodyBytesSent < Int64(size / 2), "\(fixture.server.bodyBytesSent) bytes sent")
        // The host is reachable at once through the same transport.
        let again = try await transport.send(TransportRequest(url: fixture.url, headers: [("Range", "bytes=0-99")]))
        #expect(again.status == 206)
        #expect(try await again.body.collect(limit: 1 << 10, from: fixture.url) == Array(fixture.bytes[0..<100]))
    }

    @Test(arguments: TransportKind.allCases)
    func aLargeFileArrivesByteExact(_ kind: TransportKind) async throws {
        let fixture = try await DownloadFixture.make(size: 256 << 20, seed: 11)
        defer { Task { await fixture.cleanUp() } }
        var configuration = DownloadConfiguration()
        configuration.stallTimeout = nil
        configuration.maxConnections = 4
        let result = try await fixture.downloader(configuration, transport: kind.transport).download(
            fixture.request(sha256: fixture.sha256))
        #expect(result.sha256 == fixture.sha256 && result.bytesReceived == Int64(256 << 20))
        if kind == .urlSession {
            // Memory: what one response ever held unread is bounded by what the engine asked for in one request
            // (a segment). On Apple platforms a suspended task also stops reading; Linux's URLSession does not.
            #expect(TransportKind.urlSessionTransport.largestBuffer <= Int(configuration.segmentSize) + (1 << 20))
        }
    }
}
