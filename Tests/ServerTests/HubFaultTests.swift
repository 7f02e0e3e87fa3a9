import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// Pulls through a CDN that misbehaves, and from a "hub" that sends hostile listings.
@Suite struct HubFaultTests {
    static let weights = SampleData.bytes(count: 6 << 20, seed: 11)
    static let layout: [String: [UInt8]] = [
        "acme/big/model.safetensors": weights, "acme/big/config.json": Array("{}".utf8),
    ]

    func pull(_ hub: HubFixture, clock: ImmediateClock = ImmediateClock()) -> SnapshotDownloader {
        SnapshotDownloader(
            hub: HubClient(
                endpoint: hub.mirror.baseURL, token: hub.token, transport: DefaultTransport.shared, clock: clock),
            cache: hub.cache,
            downloader: Downloader(clock: clock, configuration: HubFixture.immediateConfiguration), clock: clock)
    }

    @Test func tokenGoesToTheHubButNeverToTheCDN() async throws {
        try await HubFixture.with(Self.layout, token: "hf_secret", cdn: [Self.weights]) { hub in
            let cdn = try #require(hub.cdn)
            let snapshot = try await pull(hub).download(SnapshotRequest(repo: try RepoID("acme/big")))
            #expect(snapshot.filesDownloaded == 2)
            let blob = try hub.repository("acme/big").blob(SampleData.sha256(Self.weights))
            #expect(try Data(contentsOf: blob) == Data(Self.weights))
            #expect(!cdn.requests.isEmpty, "the LFS file should have come from the CDN")
            for request in cdn.requests {
                #expect(request.header("Authorization") == nil, "the token leaked to the CDN: \(request.path)")
            }
        }
    }

    @Test func cdnFailuresAreRetriedAndResumed() async throws {
        try await HubFixture.with(Self.layout, cdn: [Self.weights]) { hub in
            let cdn = try #require(hub.cdn)
            cdn.inject(.status(503), times: 2)
            cdn.inject(.reset(afterBytes: 300_000))
            cdn.inject(.status(429, headers: [("Retry-After", "7")]))
            let clock = ImmediateClock()
            let snapshot = try await pull(hub, clock: clock).download(SnapshotRequest(repo: try RepoID("acme/big")))
            #expect(snapshot.filesDownloaded == 2)
            #expect(cdn.pendingFaults == 0)
            #expect(
                clock.sleeps.contains { (.seconds(7)...(.milliseconds(7700))).contains($0) },
                "Retry-After was not honoured: \(clock.sleeps)")
            let file = snapshot.url(of: try RepoFilePath("model.safetensors"))
            #expect(try Data(contentsOf: file) == Data(Self.weights))
            // Bytes re-sent after the reset stay small: ranges resume, they do not restart.
            #expect(cdn.bodyBytesSent < Int64(Self.weights.count) + (1 << 20))
        }
    }

    @Test func corruptBytesAreNeverLinked() async throws {
        try await HubFixture.with(Self.layout, cdn: [Self.weights]) { hub in
            let cdn = try #require(hub.cdn)
            cdn.inject(.corrupt(atBodyOffset: 1000))
            let request = SnapshotRequest(repo: try RepoID("acme/big"))
            let error = await #expect(throws: ModelDepotError.self) { try await pull(hub).download(request) }
            #expect(error?.code == .checksumMismatch)
            #expect(error?.message.hasPrefix("model.safetensors:") == true)
            let repo = try hub.repository("acme/big")
            let sha = SampleData.sha256(Self.weights)
            #expect(!FileManager.default.fileExists(atPath: repo.blob(sha).path))
            #expect(!FileManager.default.fileExists(atPath: repo.partialBlob(sha).path))
            let commit = try #require(repo.commit(forRevision: "main"))
            #expect(!repo.hasFile(try RepoFilePath("model.safetensors"), commit: commit))

            // The next pull fetches it again and succeeds.
            let snapshot = try await pull(hub).download(request)
            #expect(try Data(contentsOf: snapshot.url(of: RepoFilePath("model.safetensors"))) == Data(Self.weights))
        }
    }

    @Test func twoPullsAtOnceDownloadEachFileOnce() async throws {
        try await HubFixture.with(Self.layout, cdn: [Self.weights]) { hub in
            let cdn = try #require(hub.cdn)
            cdn.inject(.throttle(bytesPerSecond: 8 << 20), times: 100)
            let request = SnapshotRequest(repo: try RepoID("acme/big"))
            // Real clocks: the second pull waits on the first one's lock file.
            let endpoint = hub.mirror.baseURL
            let cache = hub.cache
            let make: @Sendable () -> SnapshotDownloader = {
                SnapshotDownloader(hub: HubClient(endpoint: endpoint), cache: cache)
            }
            async let first = make().download(request)
            async let second = make().download(request)
            let (a, b) = try await (first, second)
            #expect(a.folder == b.folder)
            // Each file came once, to one pull or the other: whichever took a file's lock first fetched it, and the
            // other found it done (which pull gets which file is a race; a full run once split them).
            let total = Self.layout.filter { $0.key.hasPrefix("acme/big/") }.values.reduce(0) { $0 + Int64($1.count) }
            #expect(
                a.bytesDownloaded + b.bytesDownloaded == total,
                "\(a.bytesDownloaded) and \(b.bytesDownloaded) of \(total)")
            #expect(cdn.bodyBytesSent < Int64(Self.weights.count) * 2)
        }
    }

    @Test func hostilePathsInAListingAreRefused() async throws {
        let commit = String(repeating: "ab", count: 20)
        let info = Array(#"{"id": "evil/repo", "sha": "\#(commit)"}"#.utf8)
        for hostile in ["../../escape.txt", "/etc/passwd", "ok/../../escape.txt", "bad\nname.txt"] {
            let escaped = hostile.replacingOccurrences(of: "\n", with: "\\n")
            let tree = Array(
                #"[{"type": "file", "oid": "\#(String(repeating: "cd", count: 20))", "size": 3, "path": "\#(escaped)"}]"#
                    .utf8)
            let server = try await FaultServer.start(files: [
                "/api/models/evil/repo/revision/main": info, "/api/models/evil/repo/tree/\(commit)": tree,
            ])
            let folder = try TemporaryDirectory(prefix: "modeldepot-hostile")
            defer { folder.remove() }
            let pull = SnapshotDownloader(
                hub: HubClient(endpoint: server.baseURL, transport: DefaultTransport.shared, clock: ImmediateClock()),
                cache: HubCache(root: folder.path("cache")), clock: ImmediateClock())
            let error = await #expect(throws: ModelDepotError.self) {
                try await pull.download(SnapshotRequest(repo: try RepoID("evil/repo")))
            }
            #expect(error?.code == .protocolViolation, "\(hostile)")
            #expect(!FileManager.default.fileExists(atPath: folder.path("escape.txt").path))
            #expect(server.requests.allSatisfy { !$0.path.contains("resolve") })
            try await server.shutdown()
        }
    }
}

/// Many large files under one connection budget.
@Suite struct ConnectionBudgetTests {
    @Test func aPullOfManyLargeFilesStaysWithinTheBudget() async throws {
        let blobs = (0..<4).map { SampleData.bytes(count: (6 << 20) + $0, seed: UInt64(40 + $0)) }
        var layout: [String: [UInt8]] = [:]
        for (index, bytes) in blobs.enumerated() { layout["acme/shards/model-\(index).safetensors"] = bytes }
        try await HubFixture.with(layout, cdn: blobs) { hub in
            let cdn = try #require(hub.cdn)
            cdn.inject(.throttle(bytesPerSecond: 8 << 20), times: 10_000)
            var configuration = HubFixture.immediateConfiguration
            configuration.maxConnections = 5
            configuration.initialConnections = 4
            configuration.segmentSize = 1 << 20
            let snapshot = try await hub.downloader(configuration: configuration).download(
                SnapshotRequest(repo: try RepoID("acme/shards")))
            #expect(snapshot.filesDownloaded == 4)
            #expect(cdn.peakBodiesInFlight <= 5, "\(cdn.peakBodiesInFlight) bodies at once with a budget of 5")
            #expect(cdn.peakBodiesInFlight >= 2, "files should still download in parallel")
            for (index, bytes) in blobs.enumerated() {
                #expect(
                    try Data(contentsOf: snapshot.url(of: RepoFilePath("model-\(index).safetensors"))) == Data(bytes))
            }
        }
    }
}

/// The Hub API itself failing: retried with backoff on the injected clock.
@Suite struct HubAPIRetryTests {
    @Test func rateLimitedAndFailingListingsAreRetried() async throws {
        let commit = String(repeating: "ab", count: 20)
        let info = Array(#"{"id": "acme/x", "sha": "\#(commit)"}"#.utf8)
        let server = try await FaultServer.start(files: ["/api/models/acme/x/revision/main": info])
        server.inject(.status(429, headers: [("Retry-After", "3")]))
        server.inject(.status(503), times: 2)
        let clock = ImmediateClock()
        let hub = HubClient(endpoint: server.baseURL, transport: DefaultTransport.shared, clock: clock)
        let result = try await hub.repoInfo(try RepoID("acme/x"), revision: "main")
        #expect(result.sha == commit)
        #expect(server.requests.count == 4)
        #expect(
            clock.sleeps.first.map { (.seconds(3)...(.milliseconds(3300))).contains($0) } == true,
            "Retry-After was not honoured: \(clock.sleeps)")

        server.inject(.status(503), times: 100)
        let failing = await #expect(throws: ModelDepotError.self) {
            try await hub.repoInfo(try RepoID("acme/x"), revision: "main")
        }
        #expect(failing?.code == .serverError)
        try await server.shutdown()
    }
}
