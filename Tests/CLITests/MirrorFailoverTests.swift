import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

/// Clients with mirrors before the Hub (`--mirror`, `MODELDEPOT_MIRRORS`): real `modeldepot serve` processes play
/// the origin and the mirrors, and one is killed with SIGKILL mid-file.
@Suite struct MirrorFailoverTests {
    static let weights = SampleData.bytes(count: 4 << 20, seed: 181)
    static let config = Array(#"{"model_type": "demo"}"#.utf8)

    /// A `modeldepot serve` process and its address.
    struct Server {
        let process: Process
        let out: Pipe
        let err: Pipe
        let url: URL

        static func start(_ arguments: [String]) async throws -> Server {
            let (process, out, err) = try CLIRunner.start(["serve", "--port", "0"] + arguments)
            let line = await CLIRunner.read(out, until: "\n")
            let address = try #require(
                line.split(separator: "\n").first.map { String($0.dropFirst("listening on ".count)) }
                    .flatMap { URL(string: String($0.split(separator: " ")[0])) }, "\(line)")
            return Server(process: process, out: out, err: err, url: address)
        }

        @discardableResult
        func stop(signal: Int32 = SIGTERM) async -> CLIRunner.Output {
            kill(process.processIdentifier, signal)
            return await CLIRunner.wait(process, out, err)
        }

        /// Bytes of files this server has sent, from its `/metrics`.
        func bytesServed(token: String? = nil) async throws -> Int {
            let response = try await AsyncHTTPTransport.patient.send(
                TransportRequest(
                    url: url.appendingPathComponent("metrics"),
                    headers: token.map { [(name: "Authorization", value: "Bearer \($0)")] } ?? []))
            var body: [UInt8] = []
            for try await buffer in response.body { body += buffer.bytes }
            let line = String(decoding: body, as: UTF8.self).split(separator: "\n").first {
                $0.hasPrefix("modeldepot_served_bytes_total ")
            }
            return Double(line?.split(separator: " ").last ?? "").map { Int($0) } ?? -1
        }
    }

    static func makeRoot() throws -> TemporaryDirectory {
        let root = try TemporaryDirectory(prefix: "modeldepot-failover")
        try FileManager.default.createDirectory(at: root.path("repos/acme/tiny"), withIntermediateDirectories: true)
        try Data(weights).write(to: root.path("repos/acme/tiny/model.safetensors"))
        try Data(config).write(to: root.path("repos/acme/tiny/config.json"))
        return root
    }

    /// An origin and a mirror serving the same repositories, the mirror slowly, so it can be killed in the middle
    /// of a file.
    static func originAndSlowMirror(_ root: TemporaryDirectory) async throws -> (origin: Server, mirror: Server) {
        let origin = try await Server.start(["--root", root.path("repos").path])
        do {
            return (origin, try await Server.start(["--root", root.path("repos").path, "--faults", "rate=512KB"]))
        } catch {
            kill(origin.process.processIdentifier, SIGKILL)
            throw error
        }
    }

    @Test func aMirrorKilledMidFileHandsOverAndTheFileResumes() async throws {
        let root = try Self.makeRoot()
        defer { root.remove() }
        let (origin, mirror) = try await Self.originAndSlowMirror(root)
        defer { for server in [origin, mirror] { kill(server.process.processIdentifier, SIGKILL) } }
        let mirrorName = "\(mirror.url.host!):\(mirror.url.port!)"
        let originName = "\(origin.url.host!):\(origin.url.port!)"

        let hub = HubClient(endpoint: origin.url, mirrors: [HubMirror(endpoint: mirror.url)])
        let cache = HubCache(root: root.path("cache"))
        let endpoints = Mutex<[String]>([])
        let killed = Mutex(false)
        let pid = mirror.process.processIdentifier
        let snapshot = try await SnapshotDownloader(hub: hub, cache: cache).download(
            SnapshotRequest(repo: try RepoID("acme/tiny"))
        ) { progress in
            if let endpoint = progress.endpoint {
                endpoints.withLock { if $0.last != endpoint { $0.append(endpoint) } }
            }
            if progress.bytesCompleted >= 1 << 20, progress.endpoint == mirrorName {
                killed.withLock { done in
                    if !done { kill(pid, SIGKILL) }
                    done = true
                }
            }
        }
        #expect(killed.withLock { $0 }, "the mirror was killed mid-pull")
        #expect(
            try Data(contentsOf: snapshot.folder.appendingPathComponent("model.safetensors")) == Data(Self.weights))
        #expect(endpoints.withLock { $0 }.contains(mirrorName))
        #expect(endpoints.withLock { $0 }.last == originName, "progress says the origin took over")
        let fromOrigin = try await origin.bytesServed()
        #expect(
            fromOrigin > 0 && fromOrigin < Self.weights.count,
            "the origin sent only what the mirror had not (\(fromOrigin) of \(Self.weights.count) bytes)")
        let commit = try String(
            contentsOf: cache.root.appendingPathComponent("models--acme--tiny/refs/main"), encoding: .utf8)
        #expect(commit == snapshot.commit)
    }

    @Test func aLocalDirectoryPullHandsOverFromAKilledMirror() async throws {
        let root = try Self.makeRoot()
        defer { root.remove() }
        let (origin, mirror) = try await Self.originAndSlowMirror(root)
        defer { for server in [origin, mirror] { kill(server.process.processIdentifier, SIGKILL) } }
        let hub = HubClient(endpoint: origin.url, mirrors: [HubMirror(endpoint: mirror.url)])
        let pid = mirror.process.processIdentifier
        let killed = Mutex(false)
        var request = SnapshotRequest(repo: try RepoID("acme/tiny"))
        request.localDirectory = LocalDirectory(root.path("local"))
        _ = try await SnapshotDownloader(hub: hub, cache: HubCache(root: root.path("unused-cache"))).download(request) {
            progress in
            guard progress.bytesCompleted >= 1 << 20 else { return }
            killed.withLock { done in
                if !done { kill(pid, SIGKILL) }
                done = true
            }
        }
        #expect(killed.withLock { $0 })
        #expect(try Data(contentsOf: root.path("local/model.safetensors")) == Data(Self.weights))
        #expect(try Data(contentsOf: root.path("local/config.json")) == Data(Self.config))
        let fromOrigin = try await origin.bytesServed()
        #expect(
            fromOrigin > 0 && fromOrigin < Self.weights.count,
            "the origin sent only what the mirror had not (\(fromOrigin) of \(Self.weights.count) bytes)")
    }

    @Test func servePullsThroughFromItsUpstream() async throws {
        let root = try Self.makeRoot()
        defer { root.remove() }
        let origin = try await Server.start(["--root", root.path("repos").path])
        defer { kill(origin.process.processIdentifier, SIGKILL) }
        let mirror = try await Server.start([
            "--upstream", origin.url.absoluteString, "--cache-dir", root.path("mirror-cache").path, "--max-size", "1GB",
        ])
        defer { kill(mirror.process.processIdentifier, SIGKILL) }
        let output = try await CLIRunner.run([
            "pull", "acme/tiny", "--endpoint", mirror.url.absoluteString, "--cache-dir", root.path("cache").path,
        ])
        #expect(output.status == 0, "\(output.stderr)")
        let folder = try #require(output.lastLine)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/model.safetensors")) == Data(Self.weights))
        #expect(try await origin.bytesServed() == Self.weights.count + Self.config.count)
        // The mirror's cache is one `ls` reads.
        let listing = try await CLIRunner.run(["ls", "--cache-dir", root.path("mirror-cache").path, "--json"])
        #expect(listing.stdout.contains("acme/tiny"), "\(listing.stdout)")
        let stopped = await mirror.stop()
        #expect(stopped.status == 0, "SIGTERM stops the mirror cleanly: \(stopped.stderr)")
        #expect(stopped.stderr.contains("/acme/tiny/resolve/"), "one access-log line per request")
    }

    /// The engine's messages reach the mirror's log: an upstream that answers a file with a 503 once is retried,
    /// and the log says so.
    @Test func aPullThroughRetryIsInTheMirrorsLog() async throws {
        let root = try Self.makeRoot()
        defer { root.remove() }
        // Large enough for ranges past the first (faults spare a request for the first byte); zeros, made at once.
        try FileManager.default.createDirectory(at: root.path("repos/acme/big"), withIntermediateDirectories: true)
        let big = root.path("repos/acme/big/model.bin")
        _ = FileManager.default.createFile(atPath: big.path, contents: nil)
        let handle = try FileHandle(forWritingTo: big)
        try handle.truncate(atOffset: 24 << 20)
        try handle.close()
        let origin = try await Server.start(["--root", root.path("repos").path, "--faults", "status503=1x"])
        defer { kill(origin.process.processIdentifier, SIGKILL) }
        let mirror = try await Server.start([
            "--upstream", origin.url.absoluteString, "--cache-dir", root.path("mirror-cache").path,
        ])
        defer { kill(mirror.process.processIdentifier, SIGKILL) }
        let output = try await CLIRunner.run([
            "pull", "acme/big", "--endpoint", mirror.url.absoluteString, "--cache-dir", root.path("cache").path,
        ])
        #expect(output.status == 0, "\(output.stderr)")
        let stopped = await mirror.stop()
        #expect(stopped.stderr.contains("[ModelDepotTransfer] retrying"), "\(stopped.stderr)")
        // The command line logs it under --verbose only.
        for verbose in [false, true] {
            let faulty = try await Server.start(["--root", root.path("repos").path, "--faults", "status503=1x"])
            defer { kill(faulty.process.processIdentifier, SIGKILL) }
            let direct = try await CLIRunner.run(
                [
                    "pull", "acme/big", "--endpoint", faulty.url.absoluteString, "--cache-dir",
                    root.path("direct-\(verbose)").path,
                ] + (verbose ? ["--verbose"] : []))
            #expect(direct.status == 0, "\(direct.stderr)")
            // The progress line says "retrying in 0.2 s" either way; the engine's own log line only under --verbose.
            #expect(
                direct.stderr.contains("[ModelDepotTransfer] retrying") == verbose,
                "--verbose \(verbose): \(direct.stderr)")
        }
    }

    @Test func serveRefusesUpstreamSettingsThatDoNotFit() async throws {
        let refusedToken = try await CLIRunner.run([
            "serve", "--upstream", "http://127.0.0.1:9", "--upstream-token-file", "/etc/hostname",
        ])
        #expect(refusedToken.status == 64)
        #expect(refusedToken.stderr.contains("--upstream-token-file needs --token-file"), "\(refusedToken.stderr)")
        let notAURL = try await CLIRunner.run(["serve", "--upstream", "ftp://hub"])
        #expect(notAURL.stderr.contains("--upstream 'ftp://hub' is not a Hub URL"), "\(notAURL.stderr)")
        let sizeAlone = try await CLIRunner.run(["serve", "--root", "/tmp", "--max-size", "1GB"])
        #expect(sizeAlone.stderr.contains("--max-size is for --upstream"), "\(sizeAlone.stderr)")
    }

    @Test func theHubTokenNeverGoesToAMirrorAndAMirrorWithoutTheRepositoryFallsBack() async throws {
        let root = try Self.makeRoot()
        defer { root.remove() }
        try Data("hub-secret".utf8).write(to: root.path("hub-token"))
        try FileManager.default.createDirectory(at: root.path("empty"), withIntermediateDirectories: true)
        let origin = try await Server.start([
            "--root", root.path("repos").path, "--token-file", root.path("hub-token").path,
        ])
        defer { kill(origin.process.processIdentifier, SIGKILL) }
        // A mirror without the repository (404), then one that would accept the Hub's token if it were sent.
        let empty = try await Server.start(["--root", root.path("empty").path])
        defer { kill(empty.process.processIdentifier, SIGKILL) }
        let greedy = try await Server.start([
            "--root", root.path("repos").path, "--token-file", root.path("hub-token").path,
        ])
        defer { kill(greedy.process.processIdentifier, SIGKILL) }

        let output = try await CLIRunner.run(
            [
                "pull", "acme/tiny", "--endpoint", origin.url.absoluteString, "--token", "hub-secret",
                "--mirror", empty.url.absoluteString, "--mirror", greedy.url.absoluteString, "--cache-dir",
                root.path("cache").path, "--json", "--verbose",
            ], environment: ["MODELDEPOT_MIRROR_TOKEN": ""])
        #expect(output.status == 0, "\(output.stderr)")
        // --verbose: the engine says when a mirror hands over, naming it.
        #expect(output.stderr.contains("a mirror failed; the next one takes over"), "\(output.stderr)")
        #expect(output.stderr.contains("mirror=\(empty.url.absoluteString)"), "\(output.stderr)")
        #expect(try await greedy.bytesServed(token: "hub-secret") == 0, "the mirror never got the Hub's token")
        #expect(try await origin.bytesServed(token: "hub-secret") == Self.weights.count + Self.config.count)

        // With its own token the mirror serves everything, and the origin nothing more.
        let before = try await origin.bytesServed(token: "hub-secret")
        let again = try await CLIRunner.run(
            [
                "pull", "acme/tiny", "--endpoint", origin.url.absoluteString, "--token", "hub-secret",
                "--mirror", greedy.url.absoluteString, "--cache-dir", root.path("cache-2").path, "--json",
            ], environment: ["MODELDEPOT_MIRROR_TOKEN": "hub-secret"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try await origin.bytesServed(token: "hub-secret") == before)
        #expect(try await greedy.bytesServed(token: "hub-secret") == Self.weights.count + Self.config.count)
        #expect(again.stdout.contains("\"endpoint\""), "progress events name the endpoint in use")

        let refused = try await CLIRunner.run(["pull", "acme/tiny", "--mirror", "ftp://nowhere"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("ftp://nowhere"), "\(refused.stderr)")
    }
}
