import Foundation
import Hummingbird
import Logging
import ModelDepot
import ModelDepotPlatform
import ModelDepotServer
import ModelDepotTesting
import NIOCore
import Synchronization
import Testing

@testable import ModelDepotServer

/// Attacks on the mirror from a web page or a greedy client: DNS rebinding, pulls that cost the upstream far more than
/// the request that started them, and requests whose cost grows with their size.
@Suite struct MirrorHardeningTests {
    static let layout: [String: [UInt8]] = [
        "acme/private/config.json": Array(#"{"secret": true}"#.utf8),
        "acme/private/sub/a.txt": Array("a".utf8),
    ]

    @Test func aPageRebindingItsNameToTheMirrorIsRefused() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let port = mirror.baseURL.port!
            // The browser of someone visiting evil.example, whose DNS now says 127.0.0.1, sends its own name.
            for host in ["evil.example", "evil.example:\(port)", "evil.example.", "127.0.0.1.evil.example"] {
                let listing = try await mirror.get("/api/models", headers: [(name: "Host", value: host)])
                #expect(listing.status == 421, "\(host): \(listing.status)")
                #expect(
                    listing.header("X-Error-Message")?.contains("--allowed-host") == true,
                    "\(host): \(listing.header("X-Error-Message") ?? "")")
                let file = try await mirror.get(
                    "/acme/private/resolve/main/config.json", headers: [(name: "Host", value: host)])
                #expect(file.status == 421 && !String(decoding: file.body, as: UTF8.self).contains("secret"))
            }
            // Names that cannot be rebound, and this machine's own: answered.
            let machine = ProcessInfo.processInfo.hostName.lowercased()
            let label = String(machine.prefix { $0 != "." })
            for host in [
                "127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)", "192.168.1.20:\(port)", "LOCALHOST",
                machine, "\(label).local:\(port)",
            ] {
                let listing = try await mirror.get("/api/models", headers: [(name: "Host", value: host)])
                #expect(listing.status == 200, "\(host): \(listing.status)")
            }
            // The health check stays open to probes whatever name they use.
            #expect(try await mirror.get("/healthz", headers: [(name: "Host", value: "evil.example")]).status == 200)
        }
    }

    @Test func allowedHostsAndTokensOpenOtherNames() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-allowed-host")
        defer { root.remove() }
        for (path, bytes) in Self.layout {
            try FileManager.default.createDirectory(
                at: root.path(path).deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: root.path(path))
        }
        var named = MirrorServer(root: root.url, logger: PullThroughTests.quiet)
        named.allowedHosts = ["models.example.com", "gpu-box"]
        try await MirrorFixture.serving(named, root: root) { mirror throws in
            for host in ["models.example.com", "Models.Example.COM:443", "gpu-box:8080", "evil.example"] {
                let status = try await mirror.get("/api/models", headers: [(name: "Host", value: host)]).status
                #expect(status == (host == "evil.example" ? 421 : 200), "\(host)")
            }
        }
        // With a token, the name does not matter: a rebinding page cannot send the token.
        let guarded = MirrorServer(root: root.url, token: "s3cret", logger: PullThroughTests.quiet)
        try await MirrorFixture.serving(guarded, root: root) { mirror in
            let reply = try await mirror.get(
                "/api/models",
                headers: [(name: "Host", value: "evil.example"), (name: "Authorization", value: "Bearer s3cret")])
            #expect(reply.status == 200)
            let without = try await mirror.get("/api/models", headers: [(name: "Host", value: "evil.example")])
            #expect(without.status == 401)
        }
    }

    /// Review 39: the dashboard (`serve --ui`) was answered before the Host check, so a page rebinding its name to a
    /// token-less mirror read `/ui/api/state` (the repositories, who pulled what, from which address).
    @Test func theDashboardIsClosedToARebindingPageToo() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-rebinding-ui")
        defer { root.remove() }
        let reached = Mutex(0)
        var server = MirrorServer(root: root.url, logger: PullThroughTests.quiet)
        server.mount("/ui") { group in
            for path: RouterPath in ["", "/api/state", "/assets/mirror.js"] {
                group.get(path) { _, _ in
                    reached.withLock { $0 += 1 }
                    return Response(
                        status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "clients: 10.0.0.7")))
                }
            }
        }
        try await MirrorFixture.serving(server, root: root) { mirror in
            for path in ["/ui", "/ui/", "/ui/api/state", "/ui/assets/mirror.js"] {
                let reply = try await mirror.get(path, headers: [(name: "Host", value: "evil.example")])
                #expect(reply.status == 421, "\(path): \(reply.status)")
            }
            #expect(reached.withLock { $0 } == 0, "the dashboard answered a rebinding page")
            #expect(try await mirror.get("/ui/api/state").status == 200)
        }
    }

    @Test func hostNamesAreJudgedAsABrowserSendsThem() {
        let hosts = AllowedHosts(extra: ["proxy.example"], machineName: "GPU-Box.lan")
        for allowed in [
            "127.0.0.1", "10.0.0.7:8080", "[::1]:80", "localhost", "app.localhost:3000", "gpu-box",
            "gpu-box.lan", "gpu-box.local:8080", "proxy.example", nil,
        ] as [String?] {
            #expect(hosts.allows(allowed), "\(allowed ?? "nil")")
        }
        for refused in [
            "evil.example", "127.0.0.1.nip.io", "localhost.evil.example", "gpu-box.evil.example", "256.1.1.1",
            "1.2.3", "127.0.0.1:80:80", "[::1", "proxy.example:abc", "gpu-box.localdomain",
        ] {
            #expect(!hosts.allows(refused), "\(refused)")
        }
    }

    /// The allocation-free reading of `a.b.c.d[:port]` never accepts what the full parse refuses.
    @Test func theIPv4FastPathAcceptsNothingTheFullParseRefuses() {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let pieces = ["0", "1", "2", "5", "9", "25", "255", "256", "300", "007", "1234", "", "a", ":", "."]
        var accepted = 0
        for _ in 0..<50_000 {
            // Three to five dotted parts, mostly numbers, sometimes a port, sometimes a stray piece.
            var text = (0..<(3 + next(3))).map { _ in pieces[next(next(4) == 0 ? pieces.count : 7)] }
                .joined(separator: ".")
            if next(2) == 0 { text += ":" + pieces[next(pieces.count)] }
            guard AllowedHosts.isIPv4Authority(text.utf8) else { continue }
            accepted += 1
            let host = AllowedHosts.hostPart(of: text)
            #expect(host.map(AllowedHosts.isIPLiteral) == true, "'\(text)'")
        }
        #expect(accepted > 100, "the sample reached the fast path only \(accepted) times")
        for refused in ["256.1.1.1", "1.2.3", "1.2.3.4.5", "1..2.3", "1.2.3.4:8:8", ".1.2.3", "1234.1.1.1"] {
            #expect(!AllowedHosts.isIPv4Authority(refused.utf8), "\(refused)")
        }
    }

    @Test func aPathsInfoRequestAsksAboutAtMostAThousandPaths() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let paths = (0..<1001).map { "paths=f\($0)" }.joined(separator: "&")
            let refused = try await mirror.get(
                "/api/models/acme/private/paths-info/main", method: "POST",
                headers: [(name: "Content-Type", value: "application/x-www-form-urlencoded")], body: paths)
            #expect(refused.status == 413, "\(refused.status)")
            #expect(refused.header("X-Error-Message")?.contains("at most 1000 paths") == true)
            let fine = try await mirror.get(
                "/api/models/acme/private/paths-info/main", method: "POST",
                headers: [(name: "Content-Type", value: "application/x-www-form-urlencoded")],
                body: "paths=config.json&paths=sub&paths=nothing")
            let entries = try #require(fine.json as? [[String: Any]])
            #expect(entries.map { $0["path"] as? String } == ["config.json", "sub"])
        }
    }

    // MARK: - Pulls through the mirror

    /// A pull-through mirror whose upstream serves the weights slowly, with `limits`.
    static func withSlowUpstream<T>(
        limits: PullLimits,
        _ body: (_ upstream: PullThroughTests.Running, _ mirror: PullThroughTests.Running, _ cache: URL) async throws ->
            T
    ) async throws -> T {
        let folder = try TemporaryDirectory(prefix: "modeldepot-pull-limits")
        defer { folder.remove() }
        var layout = PullThroughTests.layout
        layout["acme/other/model.safetensors"] = SampleData.bytes(count: 2 << 20, seed: 162)
        layout["acme/third/model.safetensors"] = SampleData.bytes(count: 2 << 20, seed: 163)
        for (path, bytes) in layout {
            try FileManager.default.createDirectory(
                at: folder.path("origin/\(path)").deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: folder.path("origin/\(path)"))
        }
        var origin = MirrorServer(
            root: folder.path("origin"), stateFolder: folder.path("origin-state"), logger: PullThroughTests.quiet)
        origin.faults = try ServedFaults("rate=1MB")
        let upstream = try await PullThroughTests.start(origin)
        defer { upstream.task.cancel() }
        let cache = folder.path("mirror-cache")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        let server = try MirrorServer(
            upstream: Upstream(endpoint: upstream.url, pullLimits: limits), cache: cache,
            logger: PullThroughTests.quiet)
        let mirror = try await PullThroughTests.start(server)
        defer { mirror.task.cancel() }
        let result = try await body(upstream, mirror, cache)
        _ = await waitUntil {
            (try? await PullThroughTests.metric("modeldepot_upstream_pulls_in_flight", of: mirror)) == 0
        }
        return result
    }

    @Test func oneByteAndAHangUpDoNotCostTheWholeFile() async throws {
        try await Self.withSlowUpstream(limits: PullLimits(abandonedGrace: .milliseconds(200))) {
            upstream, mirror, cache in
            let commit = try await PullThroughTests.commit(of: mirror)
            let url = mirror.url("/acme/tiny/resolve/\(commit)/model.safetensors")
            let first = try await PullThroughTests.get(url, headers: [(name: "Range", value: "bytes=0-0")])
            #expect(first.status == 206 && first.body == [PullThroughTests.weights[0]])
            // Nobody follows the pull any more: after the grace period it is cancelled, its bytes kept.
            #expect(
                await waitUntil {
                    (try? await PullThroughTests.metric("modeldepot_upstream_pulls_abandoned_total", of: mirror)) == 1
                })
            #expect(
                await waitUntil {
                    (try? await PullThroughTests.metric("modeldepot_upstream_pulls_in_flight", of: mirror)) == 0
                })
            // Counted as bytes land in the partial blob (the upstream's own counter counts whole responses).
            let pulled = try await PullThroughTests.metric("modeldepot_upstream_bytes_total", of: mirror)
            #expect(
                pulled < PullThroughTests.weights.count,
                "the mirror pulled \(pulled) of \(PullThroughTests.weights.count) bytes for one")
            let partial = cache.appendingPathComponent(
                "models--acme--tiny/blobs/\(SampleData.sha256(PullThroughTests.weights)).incomplete")
            #expect(FileManager.default.fileExists(atPath: partial.path), "the bytes received are kept")
            // The next client resumes the pull and gets the whole, right file.
            let whole = try await PullThroughTests.get(url)
            #expect(whole.status == 200 && whole.body == PullThroughTests.weights)
        }
    }

    /// Review 39: a request for the file's last byte waits for the whole pull (the last byte is released only once
    /// verified) without writing anything, so the mirror never notices its client hung up: one request costs the
    /// whole file, as `Range: bytes=0-0` did before.
    @Test func aLastByteRequestAndAHangUpDoNotCostTheWholeFile() async throws {
        try await Self.withSlowUpstream(limits: PullLimits(abandonedGrace: .milliseconds(200))) { _, mirror, _ in
            let commit = try await PullThroughTests.commit(of: mirror)
            do {
                let client = try LoopbackConnection(port: mirror.url.port!)
                client.transmit(
                    "GET /acme/tiny/resolve/\(commit)/model.safetensors HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=-1\r\n\r\n"
                )
                #expect(
                    await waitUntil {
                        (try? await PullThroughTests.metric("modeldepot_upstream_pulls_in_flight", of: mirror)) == 1
                    })
                try await Task.sleep(for: .milliseconds(100))
            }  // the client hangs up (its socket closes)
            #expect(
                await waitUntil {
                    (try? await PullThroughTests.metric("modeldepot_upstream_pulls_in_flight", of: mirror)) == 0
                })
            let abandoned = try await PullThroughTests.metric("modeldepot_upstream_pulls_abandoned_total", of: mirror)
            let pulled = try await PullThroughTests.metric("modeldepot_upstream_bytes_total", of: mirror)
            #expect(
                abandoned == 1 && pulled < PullThroughTests.weights.count,
                "abandoned \(abandoned); pulled \(pulled) of \(PullThroughTests.weights.count) bytes for one")
        }
    }

    @Test func pullsBeyondTheLimitWaitAndPastTheQueueAreTurnedAway() async throws {
        try await Self.withSlowUpstream(limits: PullLimits(concurrent: 1, queued: 1, abandonedGrace: nil)) {
            _, mirror, _ in
            func url(_ repo: String) async throws -> URL {
                let info = try #require(
                    try await PullThroughTests.get(mirror.url("/api/models/acme/\(repo)")).json as? [String: Any])
                let commit = try #require(info["sha"] as? String)
                return mirror.url("/acme/\(repo)/resolve/\(commit)/model.safetensors")
            }
            let tiny = try await url("tiny")
            let other = try await url("other")
            let third = try await url("third")
            // The first pull runs; the second waits for a turn; a third is told to come back.
            let running = try await AsyncHTTPTransport.patient.send(TransportRequest(url: tiny))
            let waiting = Task { try await PullThroughTests.get(other) }
            #expect(
                await waitUntil {
                    (try? await PullThroughTests.metric("modeldepot_upstream_pulls_in_flight", of: mirror)) == 2
                })
            let refused = try await PullThroughTests.get(third)
            #expect(refused.status == 429, "\(refused.status)")
            #expect(refused.header("Retry-After") == "5")
            var received: [UInt8] = []
            for try await buffer in running.body { received += buffer.bytes }
            #expect(received == PullThroughTests.weights)
            let second = try await waiting.value
            #expect(second.status == 200 && second.body.count == 2 << 20)
            // With the queue free again, the third goes through.
            #expect(try await PullThroughTests.get(third).status == 200)
        }
    }

    @Test func aPullThatSomeoneFollowsIsNeverCancelledAndOneNobodyFollowsIs() async throws {
        let metrics = MirrorMetrics()
        let clock = TestClock()
        let pulls = BlobPulls(
            limits: PullLimits(abandonedGrace: .seconds(30)), clock: clock, metrics: metrics,
            logger: PullThroughTests.quiet)
        let folder = try TemporaryDirectory(prefix: "modeldepot-abandon")
        defer { folder.remove() }
        let release = Mutex(false)
        let pull = try #require(
            try pulls.follow(
                etag: "e", repository: "r", size: 4, partialPath: folder.path("p").path,
                blobPath: folder.path("b").path
            ) { _ in
                while !release.withLock({ $0 }) {
                    try Task.checkCancellation()
                    await Task.yield()
                }
                return 4
            })
        pull.followed(true)
        // The check scheduled when the pull started finds a follower: nothing is cancelled, however long.
        #expect(await waitUntil { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(3600))
        #expect(await waitUntil { clock.sleeperCount == 0 })
        #expect(pull.outcome == nil && !pull.wasAbandoned)
        // The last follower leaves: a grace period later, the pull is cancelled.
        pull.followed(false)
        #expect(await waitUntil { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(29))
        #expect(pull.outcome == nil)
        clock.advance(by: .seconds(1))
        #expect(await waitUntil { pull.outcome != nil })
        #expect(pull.wasAbandoned && metrics.snapshot.pullsAbandoned == 1)
        #expect(await waitUntil { pulls.repositories.isEmpty })
    }

    @Test func oneClientCannotFillTheQueueForEveryoneElse() async throws {
        let pulls = BlobPulls(
            limits: PullLimits(concurrent: 1, queued: 8, abandonedGrace: nil, perClient: 2), metrics: MirrorMetrics(),
            logger: PullThroughTests.quiet)
        let folder = try TemporaryDirectory(prefix: "modeldepot-per-client")
        defer { folder.remove() }
        let release = Mutex(false)
        func start(_ etag: String, by client: String) throws -> BlobPull? {
            try pulls.follow(
                etag: etag, repository: "r", client: client, size: 4, partialPath: folder.path("\(etag).p").path,
                blobPath: folder.path(etag).path
            ) { _ in
                while !release.withLock({ $0 }) {
                    try Task.checkCancellation()
                    await Task.yield()
                }
                return 4
            }
        }
        #expect(try start("a1", by: "10.0.0.1") != nil)
        #expect(try start("a2", by: "10.0.0.1") != nil)
        // A third file from the same address is turned away, with the reason and when to come back.
        #expect {
            try start("a3", by: "10.0.0.1")
        } throws: { error in
            (error as? HubServerError)?.status == 429 && (error as? HubServerError)?.retryAfter == .seconds(5)
                && (error as? HubServerError)?.message.contains("This client has 2 files") == true
        }
        // Another client still gets its turn, and following someone else's pull costs nothing.
        #expect(try start("b1", by: "10.0.0.2") != nil)
        #expect(try start("b1", by: "10.0.0.1") != nil)
        release.withLock { $0 = true }
        #expect(await waitUntil { pulls.repositories.isEmpty })
    }
}
