import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

/// The per-host limit (`ModelManager.Configuration.maxConnectionsPerHost`): two pulls from one host together stay
/// under it, counted where it matters, at the server; and a request gives its permit back however it ends.
@Suite struct HostConnectionLimitTests {
    static let one = SampleData.bytes(count: 4 << 20, seed: 41)
    static let two = SampleData.bytes(count: 4 << 20, seed: 42)
    static let layout: [String: [UInt8]] = ["acme/one/model.gguf": one, "acme/two/model.gguf": two]

    /// Pulls `acme/one` and `acme/two` at once, through two managers built from one configuration, from a CDN that
    /// sends each body at 4 MiB/s; returns the most bodies the CDN was sending at the same time.
    static func peakOfTwoPulls(perHost: Int, perPull: Int) async throws -> Int {
        try await HubFixture.with(layout, cdn: [one, two]) { hub in
            let cdn = try #require(hub.cdn)
            cdn.inject(.throttle(bytesPerSecond: 4 << 20), times: 10_000)
            var configuration = ModelManager.Configuration(endpoint: hub.mirror.baseURL, cache: hub.cache)
            configuration.engine = HubFixture.immediateConfiguration
            // Ranges of 512 KiB from the first connection on: each file would use every connection it may.
            configuration.engine.segmentSize = 512 << 10
            configuration.engine.minimumSizeForRanges = 512 << 10
            configuration.engine.initialConnections = perPull
            configuration.maxConnectionsPerPull = perPull
            configuration.maxConnectionsPerHost = perHost
            let first = try ModelManager(configuration: configuration)
            let second = try ModelManager(configuration: configuration)
            async let a = first.download(try RepoID("acme/one")).result()
            async let b = second.download(try RepoID("acme/two")).result()
            let (pulledOne, pulledTwo) = try await (a, b)
            #expect(try Data(contentsOf: pulledOne.folder.appendingPathComponent("model.gguf")) == Data(one))
            #expect(try Data(contentsOf: pulledTwo.folder.appendingPathComponent("model.gguf")) == Data(two))
            return cdn.peakBodiesInFlight
        }
    }

    @Test func twoPullsFromOneHostStayUnderItsLimit() async throws {
        // Counted at the server, where a body ends when its last byte is written: before the client has read it
        // and given its permit back, so a new body never overlaps an old one there. (A body the client drops
        // early would; these ranges are short and fast, so none is split and dropped.)
        let limited = try await Self.peakOfTwoPulls(perHost: 3, perPull: 4)
        #expect(limited <= 3, "the CDN sent \(limited) bodies at once with a limit of 3 per host")
        // The same pulls without the limit: more at once, so the bound above is the limit's doing.
        let unlimited = try await Self.peakOfTwoPulls(perHost: 16, perPull: 4)
        #expect(unlimited > 3, "without the limit the CDN sent only \(unlimited) bodies at once")
    }

    /// A transport whose every response has a body of three chunks (or fails after one, when `failing`).
    struct ThreeChunks: HTTPTransport {
        var failing = false
        func send(_ request: TransportRequest) async throws -> TransportResponse {
            let failing = self.failing
            let sent = Mutex(0)
            return TransportResponse(
                status: 200, headers: [],
                body: TransportBody(makeNext: {
                    {
                        let count = sent.withLock { count in
                            defer { count += 1 }
                            return count
                        }
                        if failing && count == 1 { throw ModelDepotError(.network, "reset") }
                        return count < 3 ? BodyChunk([1, 2, 3]) : nil
                    }
                }))
        }
    }

    @Test func aRequestGivesItsPermitBackAtTheEndOnAnErrorAndWhenDropped() async throws {
        let url = URL(string: "http://mirror.example:8080/a")!
        let limit = HostConnectionLimit(limit: 2)
        let transport = HostLimitedTransport(ThreeChunks(), limit: limit)

        var read = try await transport.send(TransportRequest(url: url))
        #expect(limit.free(for: url) == 1, "held while the body is unread")
        // Another origin has permits of its own; the same host on another port is another origin.
        #expect(limit.free(for: URL(string: "http://mirror.example:8081/a")!) == 2)
        #expect(
            limit.free(for: URL(string: "HTTP://MIRROR.example:8080/b")!) == 1,
            "scheme and host are compared without case")
        _ = try await read.body.collect(limit: 100, from: url)
        #expect(limit.free(for: url) == 2, "given back at the body's end")
        read = try await transport.send(TransportRequest(url: url))
        #expect(limit.free(for: url) == 1)

        do {
            let dropped = try await transport.send(TransportRequest(url: url))
            #expect(limit.free(for: url) == 0)
            var iterator = dropped.body.makeAsyncIterator()
            _ = try await iterator.next()
        }
        #expect(limit.free(for: url) == 1, "given back when the body is dropped half read")

        let failing = HostLimitedTransport(ThreeChunks(failing: true), limit: limit)
        let broken = try await failing.send(TransportRequest(url: url))
        await #expect(throws: ModelDepotError.self) { _ = try await broken.body.collect(limit: 100, from: url) }
        #expect(limit.free(for: url) == 1, "given back when the body fails, though the response is still held")
        _ = read
    }

    @Test func aWaitingRequestIsCancelledWithItsTask() async throws {
        let url = URL(string: "http://mirror.example/a")!
        let limit = HostConnectionLimit(limit: 1)
        let transport = HostLimitedTransport(ThreeChunks(), limit: limit)
        let held = try await transport.send(TransportRequest(url: url))
        let waiting = Task { try await transport.send(TransportRequest(url: url)) }
        #expect(await waitUntil { limit.waiting(for: url) == 1 }, "the second request waits for the permit")
        waiting.cancel()
        let outcome = await waiting.result
        #expect(throws: ModelDepotError.self) { try outcome.get() }
        #expect(limit.free(for: url) == 0 && limit.waiting(for: url) == 0, "the cancelled request took no permit")
        _ = held
    }

    /// A ranged download reads each range to its last byte and never asks for the body's end: the permit comes
    /// back when the reader goes, or a file of several ranges would keep its first request's permit to the end
    /// (with a limit of 1, forever).
    @Test func aRangedDownloadCompletesWithOnePermit() async throws {
        let bytes = SampleData.bytes(count: 256 << 10, seed: 44)
        let server = try await FaultServer.start(files: ["/file": bytes])
        defer { Task { try? await server.shutdown() } }
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let limit = HostConnectionLimit(limit: 1)
        var configuration = HubFixture.immediateConfiguration
        configuration.segmentSize = 64 << 10
        configuration.minimumSizeForRanges = 64 << 10
        configuration.initialConnections = 4
        configuration.maxConnections = 4
        let downloader = Downloader(
            transport: HostLimitedTransport(DefaultTransport.shared, limit: limit), configuration: configuration)
        let finished = Mutex(false)
        let download = Task {
            defer { finished.withLock { $0 = true } }
            return try await downloader.download(
                DownloadRequest(
                    url: server.url("/file"), destination: folder.path("file"), expectedSHA256: SampleData.sha256(bytes)
                ))
        }
        let ended = await waitUntil(timeout: .seconds(60)) { finished.withLock { $0 } }
        #expect(ended, "the download waited for a permit its own first range kept")
        if !ended { download.cancel() }
        #expect(try await download.value.sha256 == SampleData.sha256(bytes))
        #expect(server.requests.count >= 4, "fetched in ranges")
        #expect(limit.free(for: server.baseURL) == 1)
    }

    /// Waiting for a permit is not a stall: the server has not been asked yet. The watchdog's time passes (a test
    /// clock moved well past the stall timeout) while the only permit is held elsewhere, and the download still
    /// completes once the permit comes back.
    @Test func waitingForAPermitIsNotAStall() async throws {
        let bytes = SampleData.bytes(count: 64 << 10, seed: 45)
        let server = try await FaultServer.start(files: ["/file": bytes])
        defer { Task { try? await server.shutdown() } }
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let limit = HostConnectionLimit(limit: 1)
        let clock = TestClock()
        var configuration = DownloadConfiguration()
        configuration.stallTimeout = .seconds(1)
        configuration.progressInterval = .zero
        let downloader = Downloader(
            transport: HostLimitedTransport(DefaultTransport.shared, limit: limit), clock: clock,
            configuration: configuration)
        let elsewhere = try await limit.permit(for: server.baseURL)
        let download = Task {
            try await downloader.download(
                DownloadRequest(
                    url: server.url("/file"), destination: folder.path("file"), expectedSHA256: SampleData.sha256(bytes)
                ))
        }
        #expect(await waitUntil { limit.waiting(for: server.baseURL) == 1 && clock.sleeperCount > 0 })
        for _ in 0..<5 {
            clock.advance(by: .seconds(2))
            await Task.yield()
        }
        #expect(server.requests.isEmpty, "nothing was sent while the permit was held elsewhere")
        elsewhere.release()
        let finished = await waitUntil(timeout: .seconds(60)) {
            FileManager.default.fileExists(atPath: folder.path("file").path)
        }
        if !finished { download.cancel() }
        #expect(try await download.value.sha256 == SampleData.sha256(bytes))
    }

    /// With one permit per host, a download whose URL redirects twice on the same host still completes: each hop's
    /// response is given back before the next hop is sent.
    @Test func redirectsOnOneHostNeedNoSecondPermit() async throws {
        let bytes = SampleData.bytes(count: 256 << 10, seed: 43)
        let server = try await FaultServer.start(files: ["/file": bytes])
        defer { Task { try? await server.shutdown() } }
        server.inject(.redirect(to: "/hop"), times: 1, when: RequestMatcher { $0.path == "/start" })
        server.inject(.redirect(to: "/file"), times: 1, when: RequestMatcher { $0.path == "/hop" })
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let limit = HostConnectionLimit(limit: 1)
        let downloader = Downloader(
            transport: HostLimitedTransport(DefaultTransport.shared, limit: limit),
            configuration: HubFixture.immediateConfiguration)
        let finished = Mutex(false)
        let download = Task {
            defer { finished.withLock { $0 = true } }
            return try await downloader.download(
                DownloadRequest(
                    url: server.url("/start"), destination: folder.path("file"),
                    expectedSHA256: SampleData.sha256(bytes)))
        }
        let ended = await waitUntil(timeout: .seconds(60)) { finished.withLock { $0 } }
        #expect(ended, "the download waited for a permit its own redirect held")
        if !ended { download.cancel() }
        let result = try await download.value
        #expect(result.sha256 == SampleData.sha256(bytes))
        #expect(server.requests.map(\.path).prefix(3) == ["/start", "/hop", "/file"])
        #expect(limit.free(for: server.baseURL) == 1)
    }
}
