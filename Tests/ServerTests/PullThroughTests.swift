import Foundation
import Logging
import ModelDepot
import ModelDepotPlatform
import ModelDepotTesting
import Synchronization
import Testing

@testable import ModelDepotServer

/// `serve --upstream`: a mirror that fetches what it lacks from a real upstream on 127.0.0.1 (our own mirror in
/// folder mode, its file bodies capped per response) into its own Hub cache.
@Suite struct PullThroughTests {
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    static let weights = SampleData.bytes(count: 2 << 20, seed: 161)
    static let config = Array(#"{"model_type": "demo"}"#.utf8)
    static let layout: [String: [UInt8]] = [
        "acme/tiny/model.safetensors": weights, "acme/tiny/config.json": config,
    ]

    /// A running server and the task that runs it.
    struct Running {
        let url: URL
        let task: Task<Void, any Error>

        func url(_ path: String) -> URL { URL(string: url.absoluteString + path)! }

        /// Stops the server and waits until it no longer accepts connections.
        func stop() async throws {
            task.cancel()
            _ = try? await task.value
        }
    }

    static func start(_ server: MirrorServer) async throws -> Running {
        let address = Mutex<URL?>(nil)
        let task = Task { try await server.run(host: "127.0.0.1", port: 0) { url in address.withLock { $0 = url } } }
        let started = await waitUntil { address.withLock { $0 } != nil }
        try #require(started, "the server did not start")
        return Running(url: address.withLock { $0 }!, task: task)
    }

    /// A folder upstream over `layout` and a pull-through mirror in front of it; both stop after `body`.
    static func withMirror<T>(
        _ layout: [String: [UInt8]] = layout, upstreamRate: String? = "rate=512KB", upstreamToken: String? = nil,
        mirrorUpstreamToken: String? = nil, mirrorToken: String? = nil, branchTTL: Duration = .seconds(60),
        maxCacheSize: Int64? = nil, clock: any Clock<Duration> = ContinuousClock(),
        prepareUpstream: (TemporaryDirectory) throws -> Void = { _ in },
        _ body: (_ upstream: Running, _ mirror: Running, _ cache: URL) async throws -> T
    ) async throws -> T {
        let folder = try TemporaryDirectory(prefix: "modeldepot-pullthrough")
        defer { folder.remove() }
        for (path, bytes) in layout {
            let url = folder.path("origin/\(path)")
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).writeUnsynced(to: url)
        }
        try prepareUpstream(folder)
        var origin = MirrorServer(
            root: folder.path("origin"), stateFolder: folder.path("origin-state"), token: upstreamToken,
            logger: quiet)
        origin.faults = try upstreamRate.map { try ServedFaults($0) }
        let upstream = try await start(origin)
        defer { upstream.task.cancel() }
        let cache = folder.path("mirror-cache")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        var settings = Upstream(
            endpoint: upstream.url, token: mirrorUpstreamToken, branchTTL: branchTTL, maxCacheSize: maxCacheSize)
        settings.clock = clock
        let server = try MirrorServer(upstream: settings, cache: cache, token: mirrorToken, logger: quiet)
        let mirror = try await start(server)
        defer { mirror.task.cancel() }
        let result = try await body(upstream, mirror, cache)
        // A pull a client gave up on goes on in the background. Stopping the servers under it would cancel
        // their serving tasks with connections accepted and not yet served, which NIO traps on
        // (apple/swift-nio#3481): wait for it to end first.
        _ = await waitUntil {
            (try? await metric("modeldepot_upstream_pulls_in_flight", of: mirror, token: mirrorToken)) == 0
        }
        return result
    }

    static func get(
        _ url: URL, method: String = "GET", headers: [(name: String, value: String)] = []
    ) async throws -> MirrorFixture.Reply {
        let response = try await AsyncHTTPTransport.patient.send(
            TransportRequest(method: method, url: url, headers: headers))
        var body: [UInt8] = []
        for try await buffer in response.body { body += buffer.bytes }
        return MirrorFixture.Reply(status: response.status, headers: response.headers, body: body)
    }

    /// A counter from a server's `/metrics`.
    static func metric(_ name: String, of server: Running, token: String? = nil) async throws -> Int {
        let reply = try await get(
            server.url("/metrics"), headers: token.map { [(name: "Authorization", value: "Bearer \($0)")] } ?? [])
        let line = String(decoding: reply.body, as: UTF8.self).split(separator: "\n").first {
            $0.hasPrefix(name + " ")
        }
        return Double(line?.split(separator: " ").last ?? "").map { Int($0) } ?? -1
    }

    static func commit(of mirror: Running) async throws -> String {
        let info = try #require(try await get(mirror.url("/api/models/acme/tiny")).json as? [String: Any])
        return try #require(info["sha"] as? String)
    }

    @Test func clientsAskingForTheSameFileCauseOneUpstreamDownload() async throws {
        try await Self.withMirror { upstream, mirror, cache in
            let commit = try await Self.commit(of: mirror)
            let path = "/acme/tiny/resolve/\(commit)/model.safetensors"
            let bodies = try await withThrowingTaskGroup(of: [UInt8].self) { group in
                for _ in 0..<8 { group.addTask { try await Self.get(mirror.url(path)).body } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(bodies.count == 8)
            #expect(bodies.allSatisfy { $0 == Self.weights }, "every client got the whole, right file")
            let sent = try await Self.metric("modeldepot_served_bytes_total", of: upstream)
            #expect(
                sent >= Self.weights.count && sent < Self.weights.count * 2,
                "the upstream sent the file once (\(sent) bytes for \(Self.weights.count))")
            #expect(try await Self.metric("modeldepot_upstream_pulls_total", of: mirror) == 1)
            let joinedOrHit =
                try await Self.metric("modeldepot_upstream_pulls_joined_total", of: mirror)
                + Self.metric("modeldepot_cache_hits_total", of: mirror)
            #expect(joinedOrHit == 7)

            // The mirror's cache is a Hub cache: blob, snapshot link, ref, recorded tree.
            let repo = cache.appendingPathComponent("models--acme--tiny")
            let sha = SampleData.sha256(Self.weights)
            #expect(try Data(contentsOf: repo.appendingPathComponent("blobs/\(sha)")) == Data(Self.weights))
            #expect(
                try FileManager.default.destinationOfSymbolicLink(
                    atPath: repo.appendingPathComponent("snapshots/\(commit)/model.safetensors").path)
                    == "../../blobs/\(sha)")
            #expect(try String(contentsOf: repo.appendingPathComponent("refs/main"), encoding: .utf8) == commit)
            #expect(FileManager.default.fileExists(atPath: repo.appendingPathComponent("trees/\(commit).json").path))
            let offline = SnapshotDownloader(
                hub: HubClient(endpoint: URL(string: "http://127.0.0.1:9")!, offline: true),
                cache: HubCache(root: cache))
            let snapshot = try offline.cachedSnapshot(
                SnapshotRequest(repo: try RepoID("acme/tiny"), revision: commit, include: ["*.safetensors"]))
            #expect(snapshot.files.map(\.value) == ["model.safetensors"])
        }
    }

    @Test func clientsGetBytesWhileThePullRunsAndTheLastByteOnlyOnceVerified() async throws {
        try await Self.withMirror { _, mirror, cache in
            let commit = try await Self.commit(of: mirror)
            let url = mirror.url("/acme/tiny/resolve/\(commit)/model.safetensors")
            let response = try await AsyncHTTPTransport.patient.send(TransportRequest(url: url))
            #expect(response.status == 200)
            #expect(response.header("Cache-Control") == "no-store", "bytes not yet verified are never cached")
            var iterator = response.body.makeAsyncIterator()
            var received = try #require(try await iterator.next()).bytes
            let inFlight = try await Self.metric("modeldepot_upstream_pulls_in_flight", of: mirror)
            #expect(inFlight == 1, "the first bytes came while the upstream download was still running")

            // A range inside what has arrived is answered at once, while the pull still runs.
            let head = try await Self.get(url, headers: [(name: "Range", value: "bytes=0-99")])
            #expect(head.status == 206)
            #expect(head.body == Array(Self.weights[0..<100]))
            #expect(try await Self.metric("modeldepot_upstream_pulls_in_flight", of: mirror) == 1)

            // The last byte waits for the verdict: when it arrives, the verified blob is in place.
            let blob = cache.appendingPathComponent("models--acme--tiny/blobs/\(SampleData.sha256(Self.weights))")
            let last = try await Self.get(url, headers: [(name: "Range", value: "bytes=\(Self.weights.count - 1)-")])
            #expect(last.body == [Self.weights.last!])
            #expect(FileManager.default.fileExists(atPath: blob.path))

            while let buffer = try await iterator.next() { received += buffer.bytes }
            #expect(received == Self.weights)

            // Verified and in the cache: served from disk, cacheable for good.
            let again = try await Self.get(url)
            #expect(again.body == Self.weights)
            #expect(again.header("Cache-Control") == "public, max-age=31536000, immutable")
            #expect(again.header("ETag") == "\"\(SampleData.sha256(Self.weights))\"")
            #expect(again.header("Accept-Ranges") == "bytes")
            let firstByBranch = try await Self.get(mirror.url("/acme/tiny/resolve/main/config.json"))
            #expect(firstByBranch.body == Self.config)
            let byBranch = try await Self.get(mirror.url("/acme/tiny/resolve/main/config.json"))
            #expect(byBranch.body == Self.config)
            #expect(byBranch.header("Cache-Control") == "public, max-age=60")
        }
    }

    @Test func wrongBytesFromTheUpstreamNeverReachAClientWhole() async throws {
        // The upstream's hash index claims another SHA-256 for the file than its bytes have: it lists one
        // content and sends another, as a corrupted origin or a poisoned proxy would.
        let claimed = SampleData.sha256(SampleData.bytes(count: Self.weights.count, seed: 9))
        try await Self.withMirror(
            upstreamRate: "rate=1MB",
            prepareUpstream: { folder in
                let real = try #require(ServedFolderPath.real(folder.path("origin/acme/tiny/model.safetensors")))
                let status = try #require(FileStatus(path: real))
                let pointer = GitBlob.id(of: Array(GitBlob.lfsPointer(sha256: claimed, size: status.size).utf8))
                let entry: [String: Any] = [
                    "size": status.size, "modifiedNanoseconds": status.modifiedNanoseconds, "inode": status.inode,
                    "gitOID": pointer, "sha256": claimed,
                ]
                try FileManager.default.createDirectory(
                    at: folder.path("origin-state"), withIntermediateDirectories: true)
                try JSONSerialization.data(withJSONObject: [real: entry]).write(
                    to: folder.path("origin-state/hash-index.json"))
            }
        ) { _, mirror, cache in
            let commit = try await Self.commit(of: mirror)
            let url = mirror.url("/acme/tiny/resolve/\(commit)/model.safetensors")
            let outcomes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        do {
                            return try await Self.get(url).body.count
                        } catch {
                            return -1  // cut off mid-body
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 < Self.weights.count }, "no client got the full length: \(outcomes)")
            let repo = cache.appendingPathComponent("models--acme--tiny")
            #expect(!FileManager.default.fileExists(atPath: repo.appendingPathComponent("blobs/\(claimed)").path))
            #expect(
                !FileManager.default.fileExists(
                    atPath: repo.appendingPathComponent("snapshots/\(commit)/model.safetensors").path))
            #expect(try await Self.metric("modeldepot_upstream_pulls_failed_total", of: mirror) >= 1)

            // Our own client through the mirror fails with a clear error and leaves no file that looks finished.
            let folder = try TemporaryDirectory(prefix: "modeldepot-pullthrough-client")
            defer { folder.remove() }
            let destination = folder.path("model.safetensors")
            let downloader = Downloader().with { $0.retryPolicy = RetryPolicy(maxAttempts: 2) }
            await #expect(throws: ModelDepotError.self) {
                try await downloader.download(
                    DownloadRequest(url: url, destination: destination, expectedSHA256: claimed))
            }
            #expect(!FileManager.default.fileExists(atPath: destination.path))
        }
    }

    /// A stuck upstream (seen in full runs: a pooled connection to a stopped upstream that takes the request
    /// and never replies) costs a client the stale deadline, not the transport's read timeouts times the retries.
    @Test func anEarlierAnswerIsServedWhenTheUpstreamDoesNotAnswerInTime() async throws {
        let clock = TestClock()
        let waiting = Task {
            try await PullThroughSource.answer(within: .seconds(10), clock: clock) {
                try await Task.sleep(for: .seconds(3600))
                return "late"
            }
        }
        #expect(await waitUntil { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(10))
        #expect(try await waiting.value == nil)
        #expect(try await PullThroughSource.answer(within: .seconds(10), clock: clock) { "in time" } == "in time")
        #expect(try await PullThroughSource.answer(within: nil, clock: clock) { "no deadline" } == "no deadline")
    }

    /// A branch's commit is asked upstream at most once per TTL, on the mirror's clock: a new commit upstream shows
    /// only once the TTL has passed.
    @Test func aBranchIsAskedAgainOnlyAfterItsTTL() async throws {
        let clock = TestClock()
        try await Self.withMirror(upstreamRate: nil, branchTTL: .seconds(60), clock: clock) { upstream, mirror, cache in
            let first = try await Self.commit(of: mirror)
            // A new file makes a new commit of the folder upstream.
            let origin = cache.deletingLastPathComponent().appendingPathComponent("origin")
            try Data("new".utf8).writeUnsynced(to: origin.appendingPathComponent("acme/tiny/added.txt"))
            let upstreamCommit: @Sendable () async -> String? = {
                (try? await Self.get(upstream.url("/api/models/acme/tiny")).json as? [String: Any])?["sha"] as? String
            }
            #expect(await waitUntil { await upstreamCommit() != first })
            let second = try #require(await upstreamCommit())
            // Within the TTL the mirror answers with the commit it asked for.
            #expect(try await Self.commit(of: mirror) == first)
            clock.advance(by: .seconds(59))
            #expect(try await Self.commit(of: mirror) == first)
            clock.advance(by: .seconds(2))
            #expect(try await Self.commit(of: mirror) == second)
        }
    }

    @Test func aCachedBranchIsServedStaleWhileTheUpstreamIsDown() async throws {
        try await Self.withMirror(upstreamRate: nil, branchTTL: .zero) { upstream, mirror, _ in
            let commit = try await Self.commit(of: mirror)
            let fresh = try await Self.get(mirror.url("/acme/tiny/resolve/main/config.json"))
            #expect(fresh.body == Self.config)
            #expect(fresh.header("Warning") == nil)
            try await upstream.stop()

            let info = try await Self.get(mirror.url("/api/models/acme/tiny/revision/main"))
            #expect(info.status == 200)
            #expect((info.json as? [String: Any])?["sha"] as? String == commit)
            #expect(info.header("Warning")?.hasPrefix("110 ") == true, "the answer says it may be stale")
            let file = try await Self.get(mirror.url("/acme/tiny/resolve/main/config.json"))
            #expect(file.body == Self.config)
            #expect(file.header("Warning")?.hasPrefix("110 ") == true)
            #expect(file.header("Cache-Control") == "public, max-age=0")

            // A repository it never saw cannot be answered: a clear 502 (the upstream refused), not a hang or a
            // 404. On a machine so loaded that the mirror's retries outlast its 30 s deadline (seen with every test
            // of the suite started at once), the answer is the deadline's 504, which names the upstream too.
            let response = try await Self.get(mirror.url("/api/models/acme/other"))
            #expect([502, 504].contains(response.status))
            #expect(response.header("X-Error-Message")?.contains("upstream") == true)
        }
    }

    /// The upstream's rate limit is the whole fleet's: a 429 with `RateLimit` is waited for as the upstream says (here
    /// 0 s), the client behind the mirror gets its answer, and `/metrics` counts the wait.
    @Test func theUpstreamsRateLimitIsWaitedForAndCounted() async throws {
        let commit = String(repeating: "c", count: 40)
        let upstream = try await ScriptedHTTPServer.start(replies: [
            .json(
                #"{"error": "slow down"}"#, status: 429,
                headers: [("RateLimit", #""api";r=0;t=0"#), ("RateLimit-Policy", #""fixed window";"api";q=500;w=300"#)]),
            .json(#"{"id": "acme/tiny", "sha": "\#(commit)", "siblings": []}"#),
        ])
        let folder = try TemporaryDirectory(prefix: "modeldepot-ratelimited")
        defer { folder.remove() }
        let server = try MirrorServer(
            upstream: Upstream(
                endpoint: upstream.baseURL, retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))),
            cache: folder.url, logger: Self.quiet)
        let mirror = try await Self.start(server)
        _ = try await Self.get(mirror.url("/api/models/acme/tiny/revision/main"))
        let metrics = try await Self.get(mirror.url("/metrics"))
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains("modeldepot_upstream_rate_limit_waits_total 1"), "\(text)")
        #expect(server.counters.upstreamRateLimitWaits == 1)
        try await mirror.stop()
    }

    /// An upstream whose port takes connections and never answers (a process whose threads are all blocked, or a
    /// black hole on the path) costs a client the mirror's deadline and then a clear 504, not the transport's read
    /// timeouts times the retries (minutes, where clients give up after 10 s).
    @Test func aStuckUpstreamCostsTheDeadlineNotTheRetries() async throws {
        let silent = try await RawReplyServer.start(reply: nil)
        let folder = try TemporaryDirectory(prefix: "modeldepot-stuck")
        defer { folder.remove() }
        let server = try MirrorServer(
            upstream: Upstream(endpoint: silent.baseURL, answerWithin: .milliseconds(300)), cache: folder.url,
            logger: Self.quiet)
        let mirror = try await Self.start(server)
        let reply = try await Self.get(mirror.url("/api/models/acme/tiny/revision/main"))
        #expect(reply.status == 504)
        #expect(reply.header("X-Error-Message")?.contains("did not answer about acme/tiny within") == true)
        #expect(silent.acceptedConnections >= 1, "the mirror asked the silent upstream")
        try await mirror.stop()
        try await silent.shutdown()
    }

    /// An upstream that names the commit at once and then never finishes the file listing (its body stops after a
    /// byte, as a black hole or a slow drip would) costs a client the same deadline and a 504, and the mirror drops
    /// its request upstream rather than leaving it running.
    @Test func aListingThatNeverEndsCostsTheDeadlineToo() async throws {
        let commit = String(repeating: "c", count: 40)
        let upstream = try await ScriptedHTTPServer.start(replies: [
            .json(#"{"id": "acme/tiny", "sha": "\#(commit)"}"#),
            ScriptedHTTPServer.Reply(
                headers: [("Content-Type", "application/json"), ("Content-Length", "1000")], steps: [.send("["), .hang]),
        ])
        let folder = try TemporaryDirectory(prefix: "modeldepot-stuck-listing")
        defer { folder.remove() }
        let server = try MirrorServer(
            upstream: Upstream(endpoint: upstream.baseURL, answerWithin: .milliseconds(300)), cache: folder.url,
            logger: Self.quiet)
        let mirror = try await Self.start(server)
        // Without a deadline on the listing, the mirror waits out the transport's 20 s read timeout per attempt.
        let reply = try await withTimeLimit(15) {
            try await Self.get(mirror.url("/api/models/acme/tiny/revision/main"))
        }
        #expect(reply.status == 504)
        #expect(reply.header("X-Error-Message")?.contains("did not answer") == true)
        // The listing's request was cancelled: its connection closes (the transport keeps no half-read answer).
        try await withTimeLimit(15) { await upstream.waitForClosedConnections(1) }
        try await mirror.stop()
        try await upstream.shutdown()
    }

    @Test func clientsAskingAboutANewRepositoryCauseOneUpstreamCallOfEachKind() async throws {
        try await Self.withMirror(upstreamRate: nil) { upstream, mirror, _ in
            // One answered request first, so the counter exists before it is read.
            _ = try await Self.get(upstream.url("/healthz"))
            let before = try await Self.metric("modeldepot_requests_total{code=\"200\"}", of: upstream)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<16 {
                    group.addTask { try await Self.get(mirror.url("/api/models/acme/tiny/tree/main")).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 16))
            let after = try await Self.metric("modeldepot_requests_total{code=\"200\"}", of: upstream)
            // The first /metrics call is counted by the second.
            #expect(after - before == 3, "one revision, one listing, one /metrics: \(after - before)")
        }
    }

    @Test func upstreamErrorsPassThroughWithTheHubsCodes() async throws {
        try await Self.withMirror(upstreamRate: nil) { _, mirror, _ in
            let missingRepo = try await Self.get(mirror.url("/api/models/acme/missing"))
            #expect(missingRepo.header("X-Error-Code") == "RepoNotFound")
            let missingRevision = try await Self.get(mirror.url("/api/models/acme/tiny/revision/v9"))
            #expect(missingRevision.status == 404)
            #expect(missingRevision.header("X-Error-Code") == "RevisionNotFound")
            let missingFile = try await Self.get(mirror.url("/acme/tiny/resolve/main/nope.bin"), method: "HEAD")
            #expect(missingFile.status == 404)
            #expect(missingFile.header("X-Error-Code") == "EntryNotFound")
            #expect(missingFile.header("Cache-Control") == "no-store")
            let health = try await Self.get(mirror.url("/healthz"))
            #expect(health.status == 200)
        }
    }

    @Test func aHostileUpstreamListingIsRefusedAndNothingIsWritten() async throws {
        let commit = String(repeating: "ab", count: 20)
        let info = ScriptedHTTPServer.Reply.json(#"{"id": "acme/evil", "sha": "\#(commit)"}"#)
        let upstream = try await ScriptedHTTPServer.start(replies: [
            info,
            .json(#"[{"type": "file", "path": "../../outside.txt", "oid": "\#(commit)", "size": 3}]"#),
            // The branch's commit is remembered: the second request asks only for the listing.
            .json(
                #"[{"type": "file", "path": "model.bin", "oid": "\#(commit)", "size": 3, "lfs": {"oid": "../../blob", "size": 3}}]"#
            ),
        ])
        let folder = try TemporaryDirectory(prefix: "modeldepot-hostile-upstream")
        defer { folder.remove() }
        let cache = folder.path("cache")
        let server = try MirrorServer(upstream: Upstream(endpoint: upstream.baseURL), cache: cache, logger: Self.quiet)
        let mirror = try await Self.start(server)
        defer { mirror.task.cancel() }
        for named in ["../../outside.txt", "../../blob"] {
            let reply = try await Self.get(mirror.url("/api/models/acme/evil/tree/main"))
            #expect(
                reply.status == 502, "a listing that names a path or blob outside the cache is the upstream's fault")
            let message = reply.header("X-Error-Message") ?? ""
            #expect(message.contains("upstream") && message.contains(named), "\(message)")
        }
        let written = FileManager.default.enumerator(atPath: folder.url.path)?.allObjects as? [String] ?? []
        #expect(
            !written.contains { $0.contains("trees/") || $0.contains("outside") || $0.hasSuffix("blob") }, "\(written)")
        #expect(
            !FileManager.default.fileExists(
                atPath: folder.url.deletingLastPathComponent().appendingPathComponent("outside.txt").path))
        try await upstream.shutdown()
    }

    @Test func aClientsTokenNeverReachesTheUpstream() async throws {
        let secret = "upstream-secret"
        // No operator token: the client's own token for the upstream must not open it.
        try await Self.withMirror(upstreamRate: nil, upstreamToken: secret) { _, mirror, _ in
            let reply = try await Self.get(
                mirror.url("/api/models/acme/tiny"), headers: [(name: "Authorization", value: "Bearer \(secret)")])
            #expect(reply.status == 401)
            #expect(reply.header("X-Error-Code") == "RepoNotFound")
        }
        // With the operator's token the mirror fetches the repository, and demands its own token from clients.
        try await Self.withMirror(
            upstreamRate: nil, upstreamToken: secret, mirrorUpstreamToken: secret, mirrorToken: "mirror-secret"
        ) { _, mirror, _ in
            let anonymous = try await Self.get(mirror.url("/acme/tiny/resolve/main/config.json"))
            #expect(anonymous.status == 401)
            let withUpstreamToken = try await Self.get(
                mirror.url("/acme/tiny/resolve/main/config.json"),
                headers: [(name: "Authorization", value: "Bearer \(secret)")])
            #expect(withUpstreamToken.status == 401, "the upstream's token is not the mirror's")
            let allowed = try await Self.get(
                mirror.url("/acme/tiny/resolve/main/config.json"),
                headers: [(name: "Authorization", value: "Bearer mirror-secret")])
            #expect(allowed.body == Self.config)
            let again = try await Self.get(
                mirror.url("/acme/tiny/resolve/main/config.json"),
                headers: [(name: "Authorization", value: "Bearer mirror-secret")])
            #expect(again.header("Cache-Control") == "private, max-age=60")
            #expect(
                try await Self.metric("modeldepot_upstream_pulls_total", of: mirror) == -1, "metrics need the token")
            #expect(try await Self.metric("modeldepot_upstream_pulls_total", of: mirror, token: "mirror-secret") == 1)
            #expect(try await Self.get(mirror.url("/healthz")).status == 200, "health checks need no token")
        }
        // An operator token without a client token is refused at start.
        let cache = try TemporaryDirectory(prefix: "modeldepot-pullthrough-refused")
        defer { cache.remove() }
        #expect(throws: ModelDepotError.self) {
            try MirrorServer(
                upstream: Upstream(endpoint: URL(string: "http://127.0.0.1:9")!, token: secret), cache: cache.url,
                logger: Self.quiet)
        }
    }

    @Test func theCacheStaysUnderItsBudgetWhileClientsPull() async throws {
        let first = SampleData.bytes(count: 2 << 20, seed: 171)
        let second = SampleData.bytes(count: 2 << 20, seed: 172)
        let layout = ["acme/first/model.safetensors": first, "acme/second/model.safetensors": second]
        try await Self.withMirror(layout, upstreamRate: "rate=2MB", maxCacheSize: 3 << 20) { _, mirror, cache in
            let firstURL = mirror.url("/acme/first/resolve/main/model.safetensors")
            let secondURL = mirror.url("/acme/second/resolve/main/model.safetensors")
            #expect(try await Self.get(firstURL).body == first)
            let firstFolder = cache.appendingPathComponent("models--acme--first")
            #expect(FileManager.default.fileExists(atPath: firstFolder.path), "under the budget, nothing is evicted")

            // Four clients pull the second model at once; when its pull ends the cache would hold 4 MiB of a
            // 3 MiB budget, so the least recently used repository — not the one being pulled and read — goes.
            let bodies = try await withThrowingTaskGroup(of: [UInt8].self) { group in
                for _ in 0..<4 { group.addTask { try await Self.get(secondURL).body } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(bodies.allSatisfy { $0 == second })
            #expect(!FileManager.default.fileExists(atPath: firstFolder.path))
            #expect(
                try Data(
                    contentsOf: cache.appendingPathComponent("models--acme--second/blobs/\(SampleData.sha256(second))"))
                    == Data(second))
            #expect(try await Self.metric("modeldepot_evictions_total", of: mirror) == 1)

            // The evicted model is fetched again on demand, and the other one makes room in turn.
            #expect(try await Self.get(firstURL).body == first)
            #expect(try await Self.metric("modeldepot_evictions_total", of: mirror) == 2)
            #expect(try await Self.metric("modeldepot_upstream_pulls_total", of: mirror) == 3)
        }
    }

    @Test func huggingFaceHubPullsThroughTheMirror() async throws {
        let layout: [String: [UInt8]] = [
            "acme/tiny/model.gguf": SampleData.bytes(count: 3 << 20, seed: 51),
            "acme/tiny/config.json": Array(#"{"model_type": "demo"}"#.utf8),
            "acme/tiny/tokenizer/vocab.txt": Array("a b\n".utf8),
        ]
        try await Self.withMirror(layout, upstreamRate: "rate=8MB") { _, mirror, cache in
            let home = try TemporaryDirectory(prefix: "modeldepot-pyhome")
            defer { home.remove() }
            let result = try await PythonInteropTests.runPeer(
                endpoint: mirror.url, cache: home.path("hub"), home: home.url)
            #expect(result["files"] as? [String] == ["config.json", "model.gguf", "tokenizer/vocab.txt"])
            #expect(result["missingRepo"] as? String == "RepositoryNotFoundError")
            #expect(result["missingFile"] as? String == "RemoteEntryNotFoundError")
            #expect(result["missingRevision"] as? String == "RevisionNotFoundError")
            let python = home.path("hub/models--acme--tiny/blobs/\(SampleData.sha256(layout["acme/tiny/model.gguf"]!))")
            #expect(try Data(contentsOf: python) == Data(layout["acme/tiny/model.gguf"]!))
            // The mirror kept what it fetched, in the same layout.
            let kept = cache.appendingPathComponent(
                "models--acme--tiny/blobs/\(SampleData.sha256(layout["acme/tiny/model.gguf"]!))")
            #expect(try Data(contentsOf: kept) == Data(layout["acme/tiny/model.gguf"]!))
        }
    }
}

/// `realpath(3)` for tests, as the mirror resolves what it serves.
enum ServedFolderPath {
    static func real(_ url: URL) -> String? {
        guard let resolved = realpath(url.path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
