import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// A mirror found on the LAN (`HubMirror.Trust.contentOnly`) is anyone's announcement: real `modeldepot serve`
/// processes play the endpoint and a hostile mirror that lists a file of its own and serves wrong bytes of the
/// same size for every real one. None of its bytes, files or commits may reach the cache; with the endpoint out of
/// reach it is used only for a pull a lock holds.
@Suite struct DiscoveredMirrorTrustTests {
    typealias Server = MirrorFailoverTests.Server
    static let weights = MirrorFailoverTests.weights
    static let config = MirrorFailoverTests.config

    /// The commit acme/tiny is at on `origin`.
    static func commit(at origin: Server) async throws -> String {
        try #require(try await HubClient(endpoint: origin.url).repoInfo(try RepoID("acme/tiny")).sha)
    }

    /// A lock of acme/tiny as `origin` lists it.
    static func lock(at origin: Server, cache: URL) async throws -> ModelLock {
        try await ModelManager(
            pull: SnapshotDownloader(hub: HubClient(endpoint: origin.url), cache: HubCache(root: cache))
        )
        .lock([ModelLock.Target(repo: try RepoID("acme/tiny"))])
    }

    /// A hostile mirror for the endpoint's `commit` of acme/tiny: other bytes of the same sizes at every resolve
    /// URL, and its own story at every API route (another commit, a planted file, other digests).
    static func hostileMirror(commit: String, options: FaultServer.Options = .init()) async throws -> FaultServer {
        var config = Self.config
        config[config.count - 2] = UInt8(ascii: "X")
        let forged = SampleData.bytes(count: weights.count, seed: 666)
        let otherCommit = String(repeating: "e", count: 40)
        let tree = """
            [{"type":"file","oid":"\(String(repeating: "1", count: 40))","size":\(forged.count),"path":"model.safetensors",\
            "lfs":{"oid":"\(SampleData.sha256(forged))","size":\(forged.count),"pointerSize":134}},\
            {"type":"file","oid":"\(GitBlob.id(of: config))","size":\(config.count),"path":"config.json"},\
            {"type":"file","oid":"\(String(repeating: "2", count: 40))","size":7,"path":"planted.py"}]
            """
        let info = #"{"id":"acme/tiny","sha":"\#(otherCommit)","siblings":[{"rfilename":"planted.py"}]}"#
        var files: [String: [UInt8]] = [:]
        for revision in [commit, "main", otherCommit] {
            files["/acme/tiny/resolve/\(revision)/model.safetensors"] = forged
            files["/acme/tiny/resolve/\(revision)/config.json"] = config
            files["/acme/tiny/resolve/\(revision)/planted.py"] = Array("planted".utf8)
            files["/api/models/acme/tiny/tree/\(revision)"] = Array(tree.utf8)
            files["/api/models/acme/tiny/revision/\(revision)"] = Array(info.utf8)
        }
        files["/api/models/acme/tiny"] = Array(info.utf8)
        return try await FaultServer.start(files: files, options: options)
    }

    @Test func aDiscoveredMirrorIsAskedOnlyForContentAndItsWrongBytesAreRefused() async throws {
        let root = try MirrorFailoverTests.makeRoot()
        defer { root.remove() }
        let origin = try await Server.start(["--root", root.path("repos").path])
        defer { kill(origin.process.processIdentifier, SIGKILL) }
        let commit = try await Self.commit(at: origin)
        let hostile = try await Self.hostileMirror(commit: commit)

        let cache = HubCache(root: root.path("cache"))
        func pull(_ files: [String]?) async throws -> Snapshot {
            // A client of its own each time: one remembers a mirror that failed it and does not ask again.
            let hub = HubClient(
                endpoint: origin.url, mirrors: [HubMirror(endpoint: hostile.baseURL, trust: .contentOnly)])
            return try await SnapshotDownloader(hub: hub, cache: cache).download(
                SnapshotRequest(repo: try RepoID("acme/tiny"), files: files))
        }
        // The weights alone first, so the mirror is surely asked for them; then the rest.
        _ = try await pull(["model.safetensors"])
        let sentForWeights = hostile.bodyBytesSent
        let snapshot = try await pull(nil)
        try await hostile.shutdown()

        #expect(try Data(contentsOf: snapshot.folder.appendingPathComponent("model.safetensors")) == Data(Self.weights))
        #expect(try Data(contentsOf: snapshot.folder.appendingPathComponent("config.json")) == Data(Self.config))
        #expect(!FileManager.default.fileExists(atPath: snapshot.folder.appendingPathComponent("planted.py").path))
        #expect(snapshot.commit == commit, "the commit is the endpoint's")
        let asked = hostile.requests.map(\.path)
        #expect(asked.allSatisfy { !$0.hasPrefix("/api/") }, "never asked for a listing or info: \(asked)")
        #expect(asked.contains("/acme/tiny/resolve/\(commit)/model.safetensors"), "asked for content: \(asked)")
        #expect(sentForWeights >= Int64(Self.weights.count), "and it sent its wrong bytes")
        let blobs = try FileManager.default.contentsOfDirectory(
            atPath: cache.root.appendingPathComponent("models--acme--tiny/blobs").path)
        #expect(blobs.allSatisfy { !$0.hasSuffix(".incomplete") }, "no partial of the wrong bytes stays: \(blobs)")
    }

    @Test func aDiscoveredMirrorsCutShortBytesWithoutValidatorsAreNeverResumedElsewhere() async throws {
        let root = try MirrorFailoverTests.makeRoot()
        defer { root.remove() }
        let origin = try await Server.start(["--root", root.path("repos").path])
        defer { kill(origin.process.processIdentifier, SIGKILL) }
        let commit = try await Self.commit(at: origin)
        // No ETag or Last-Modified to conflict with, and every answer cut off halfway: what a resume would accept.
        var options = FaultServer.Options()
        options.sendsValidators = false
        let hostile = try await Self.hostileMirror(commit: commit, options: options)
        hostile.inject(.reset(afterBytes: Self.weights.count / 2), times: 100)

        let hub = HubClient(
            endpoint: origin.url, mirrors: [HubMirror(endpoint: hostile.baseURL, trust: .contentOnly)])
        let snapshot = try await SnapshotDownloader(hub: hub, cache: HubCache(root: root.path("cache"))).download(
            SnapshotRequest(repo: try RepoID("acme/tiny"), files: ["model.safetensors"]))
        try await hostile.shutdown()
        #expect(try Data(contentsOf: snapshot.folder.appendingPathComponent("model.safetensors")) == Data(Self.weights))
        #expect(hostile.bodyBytesSent >= Int64(Self.weights.count / 2), "the hostile mirror's half was received")
    }

    @Test func aDiscoveredMirrorsRedirectIsNotFollowed() async throws {
        let root = try MirrorFailoverTests.makeRoot()
        defer { root.remove() }
        let origin = try await Server.start(["--root", root.path("repos").path])
        defer { kill(origin.process.processIdentifier, SIGKILL) }
        let commit = try await Self.commit(at: origin)
        // A service on this machine the announcer wants the client to reach for it.
        let service = try await FaultServer.start(files: ["/internal": Array("secret".utf8)])
        let hostile = try await Self.hostileMirror(commit: commit)
        hostile.inject(.redirect(to: service.url("/internal").absoluteString), times: 100)

        let hub = HubClient(
            endpoint: origin.url, mirrors: [HubMirror(endpoint: hostile.baseURL, trust: .contentOnly)])
        let snapshot = try await SnapshotDownloader(hub: hub, cache: HubCache(root: root.path("cache"))).download(
            SnapshotRequest(repo: try RepoID("acme/tiny")))
        try await hostile.shutdown()
        try await service.shutdown()
        #expect(try Data(contentsOf: snapshot.folder.appendingPathComponent("model.safetensors")) == Data(Self.weights))
        #expect(hostile.requests.contains { $0.path.contains("/resolve/") }, "the mirror was asked")
        #expect(service.requests.isEmpty, "its redirect was not followed: \(service.requests.map(\.path))")
    }

    @Test func aLockedPullNeverRecordsADiscoveredMirrorsListing() async throws {
        let root = try MirrorFailoverTests.makeRoot()
        defer { root.remove() }
        let origin = try await Server.start(["--root", root.path("repos").path])
        defer { kill(origin.process.processIdentifier, SIGKILL) }
        let lock = try await Self.lock(at: origin, cache: root.path("unused"))
        let commit = try #require(lock.repositories.first).commit
        // The mirror agrees with the lock on every locked file and serves their real bytes, but lists one more.
        let response = try await AsyncHTTPTransport.patient.send(
            TransportRequest(url: origin.url.appendingPathComponent("api/models/acme/tiny/tree/\(commit)")))
        var body: [UInt8] = []
        for try await buffer in response.body { body += buffer.bytes }
        var tree = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [[String: Any]])
        tree.append(["type": "file", "oid": String(repeating: "2", count: 40), "size": 7, "path": "planted.py"])
        let mirror = try await FaultServer.start(files: [
            "/api/models/acme/tiny/tree/\(commit)": Array(try JSONSerialization.data(withJSONObject: tree)),
            "/acme/tiny/resolve/\(commit)/model.safetensors": Self.weights,
            "/acme/tiny/resolve/\(commit)/config.json": Self.config,
            "/acme/tiny/resolve/\(commit)/planted.py": Array("planted".utf8),
        ])
        let hub = HubClient(
            endpoint: URL(string: "http://127.0.0.1:9")!,
            mirrors: [HubMirror(endpoint: mirror.baseURL, trust: .contentOnly)], transport: DefaultTransport.shared,
            retryPolicy: RetryPolicy(maxAttempts: 1))
        let cache = HubCache(root: root.path("cache"))
        let snapshots = try await ModelManager(pull: SnapshotDownloader(hub: hub, cache: cache)).download(lock: lock)
            .result()
        try await mirror.shutdown()
        let folder = try #require(snapshots.first).folder
        #expect(try Data(contentsOf: folder.appendingPathComponent("model.safetensors")) == Data(Self.weights))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("planted.py").path))
        let trees = cache.root.appendingPathComponent("models--acme--tiny/trees/\(commit).json")
        #expect(!FileManager.default.fileExists(atPath: trees.path), "the mirror's listing is not the commit's tree")
    }

    @Test func withTheEndpointOutOfReachADiscoveredMirrorServesOnlyALockedPull() async throws {
        let root = try MirrorFailoverTests.makeRoot()
        defer { root.remove() }
        let origin = try await Server.start(["--root", root.path("repos").path])
        let good = try await Server.start(["--root", root.path("repos").path])
        defer { for server in [origin, good] { kill(server.process.processIdentifier, SIGKILL) } }
        let lock = try await Self.lock(at: origin, cache: root.path("unused"))

        // Nothing listens on port 9 of this machine: the endpoint is out of reach.
        func manager(_ mirror: URL, cache: String) -> ModelManager {
            let hub = HubClient(
                endpoint: URL(string: "http://127.0.0.1:9")!,
                mirrors: [HubMirror(endpoint: mirror, trust: .contentOnly)], transport: DefaultTransport.shared,
                retryPolicy: RetryPolicy(maxAttempts: 1))
            return ModelManager(pull: SnapshotDownloader(hub: hub, cache: HubCache(root: root.path(cache))))
        }
        let plain = manager(good.url, cache: "plain")
        let error = await #expect(throws: ModelDepotError.self) {
            _ = try await plain.pull.download(SnapshotRequest(repo: try RepoID("acme/tiny")))
        }
        #expect(error?.message.contains("pull --locked") == true, "\(error?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: root.path("plain/models--acme--tiny/snapshots").path))

        let locked = manager(good.url, cache: "locked")
        let task = await locked.download(lock: lock)
        let snapshots = try await task.result()
        let folder = try #require(snapshots.first).folder
        // The lock's task ends counting every repository done.
        #expect(task.latestProgress == LockProgress(repositoriesCompleted: 1, totalRepositories: 1))
        #expect(try Data(contentsOf: folder.appendingPathComponent("model.safetensors")) == Data(Self.weights))

        // A hostile mirror's listing disagrees with the lock: refused before a byte of content, nothing published.
        let hostile = try await Self.hostileMirror(commit: try #require(lock.repositories.first).commit)
        let refused = manager(hostile.baseURL, cache: "refused")
        let refusal = await #expect(throws: ModelDepotError.self) {
            _ = try await refused.download(lock: lock).result()
        }
        try await hostile.shutdown()
        #expect(refusal?.code == .checksumMismatch, "\(refusal?.message ?? "")")
        #expect(hostile.requests.allSatisfy { !$0.path.contains("/resolve/") }, "no content asked")
        #expect(!FileManager.default.fileExists(atPath: root.path("refused/models--acme--tiny/snapshots").path))
    }

    #if os(Linux)
        @Test func withoutADNSSDDaemonDiscoverSaysWhatToStartAndAPullGoesOnWithoutIt() async throws {
            let root = try MirrorFailoverTests.makeRoot()
            defer { root.remove() }
            let origin = try await Server.start(["--root", root.path("repos").path])
            defer { kill(origin.process.processIdentifier, SIGKILL) }
            // No bus there: Avahi's library cannot reach a daemon (on a machine without the library, it is missing).
            let nowhere = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(root.path("no-bus").path)"]
            let discover = try await CLIRunner.run(["discover"], environment: nowhere)
            #expect(discover.status == 1)
            #expect(
                discover.stderr.contains("avahi-daemon") || discover.stderr.contains("libavahi-compat-libdnssd1"),
                "\(discover.stderr)")
            let pull = try await CLIRunner.run(
                [
                    "pull", "acme/tiny", "--endpoint", origin.url.absoluteString, "--cache-dir",
                    root.path("cache").path,
                    "--discover", "--quiet",
                ], environment: nowhere)
            #expect(pull.status == 0, "\(pull.stderr)")
            #expect(pull.stderr.contains("Using the endpoint"), "\(pull.stderr)")
            // A dry run fetches nothing: it does not look.
            let dryRun = try await CLIRunner.run(
                [
                    "pull", "acme/tiny", "--endpoint", origin.url.absoluteString, "--cache-dir",
                    root.path("dry").path, "--discover", "--dry-run",
                ], environment: nowhere)
            #expect(dryRun.status == 0, "\(dryRun.stderr)")
            #expect(!dryRun.stderr.contains("local network"), "\(dryRun.stderr)")
            let advertiseOnLoopback = try await CLIRunner.run(
                ["serve", "--root", root.path("repos").path, "--advertise"], environment: nowhere)
            #expect(advertiseOnLoopback.status != 0)
            #expect(advertiseOnLoopback.stderr.contains("--host 0.0.0.0"), "\(advertiseOnLoopback.stderr)")
        }
    #endif
}
