import Foundation
import ModelDepot
import ModelDepotHTTP
import ModelDepotPlatform
import ModelDepotTesting
import Synchronization
import Testing

@testable import ModelDepotServer
@testable import ModelDepotTransfer

/// The mirror speaking https itself (`serve --tls-cert --tls-key`), with a CA and certificate made by `openssl`:
/// our client and curl pull byte-exact files through TLS (which never takes the `sendfile` path), and a reloaded
/// certificate reaches new connections.
@Suite struct MirrorTLSTests {
    static let weights = SampleData.bytes(count: 8 << 20, seed: 61)
    static let layout: [String: [UInt8]] = [
        "acme/secure/model.safetensors": weights, "acme/secure/config.json": Array(#"{"tls": true}"#.utf8),
    ]

    static func pull(_ hub: URL, trusting authority: String, into cache: URL) async throws -> Snapshot {
        var configuration = ModelManager.Configuration(endpoint: hub, cache: HubCache(root: cache))
        configuration.transport = AsyncHTTPTransport(
            network: NetworkSettings(trust: TrustSettings(additional: [.init(path: authority, origin: "--ca-cert")])))
        configuration.apiRetryPolicy = RetryPolicy(maxAttempts: 1)
        configuration.engine.retryPolicy = RetryPolicy(maxAttempts: 1)
        return try await configuration.makePull().download(SnapshotRequest(repo: try RepoID("acme/secure")))
    }

    @Test func theMirrorSpeaksHTTPSAndSendsFilesThroughMemory() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-mirror-tls")
        defer { folder.remove() }
        try folder.write(Self.layout, in: "repos")
        let certificates = try await TestCertificates.make(in: folder.url)
        var server = MirrorServer(root: folder.path("repos"), logger: PullThroughTests.quiet)
        server.tls = try ServerTLS(certificate: certificates.certificate, key: certificates.key)
        try await MirrorFixture.serving(server, root: folder) { mirror in
            #expect(mirror.baseURL.scheme == "https")
            let snapshot = try await Self.pull(mirror.baseURL, trusting: certificates.authority, into: folder.path("c"))
            let weights = try Data(contentsOf: snapshot.folder.appendingPathComponent("model.safetensors"))
            #expect(weights == Data(Self.weights))
            #expect(server.counters.sendfileResponses == 0, "a file went by sendfile through TLS")

            // A page that re-points its own name at the mirror (DNS rebinding) sends its name as HTTP/2's :authority
            // (curl turns a Host header into it): refused before any handler, as over plain HTTP/1.1.
            let foreign = try #require(
                try await Curl.fetch(
                    mirror.baseURL.absoluteString + "/acme/secure/resolve/main/config.json",
                    ["--http2", "-H", "Host: evil.example"], trusting: certificates.authority, in: folder.url))
            #expect(foreign.status == 421 && foreign.version == "2", "\(foreign.status) over HTTP/\(foreign.version)")

            // curl, as a person checks a mirror: HTTP/2 when offered by ALPN, HTTP/1.1 when asked for, whole files
            // and ranges byte-exact either way.
            let file = mirror.baseURL.absoluteString + "/acme/secure/resolve/main/model.safetensors"
            for (flag, expected) in [("--http2", "2"), ("--http1.1", "1.1")] {
                let whole = try await Self.curl(file, flag, trusting: certificates.authority, in: folder)
                #expect(whole.version == expected, "curl \(flag) spoke HTTP/\(whole.version)")
                #expect(whole.body == Data(Self.weights), "curl \(flag): the file differs")
                let part = try await Self.curl(
                    file, flag, "-r", "1000000-2999999", trusting: certificates.authority, in: folder)
                #expect(part.version == expected)
                #expect(part.body == Data(Self.weights[1_000_000..<3_000_000]), "curl \(flag): the range differs")
            }
            #expect(server.counters.sendfileResponses == 0, "a file went by sendfile through TLS")

            // Plain http to the https port is refused, not answered.
            let plain = try? await AsyncHTTPTransport.patient.send(
                TransportRequest(url: URL(string: "http://127.0.0.1:\(mirror.baseURL.port!)/healthz")!))
            #expect(plain == nil, "plain http to the https port was answered: \(plain?.status ?? 0)")
        }
    }

    /// curl with `--cacert authority`: the HTTP version it spoke and the body, of an answer curl's `--fail` takes.
    static func curl(_ url: String, _ arguments: String..., trusting authority: String, in folder: TemporaryDirectory)
        async throws -> (version: String, body: Data)
    {
        let answer = try #require(try await Curl.fetch(url, arguments, trusting: authority, in: folder.url))
        try #require(answer.status < 400, "curl \(arguments): \(answer.status)")
        return (answer.version, answer.body)
    }

    /// Python's huggingface_hub trusting the test CA by `SSL_CERT_FILE` (httpcore reads it), with the tree in
    /// pages of two so it follows `Link` headers, which must name `https`.
    @Test func huggingFaceHubPullsOverHTTPS() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-mirror-tls-python")
        defer { folder.remove() }
        let weights = SampleData.bytes(count: 3 << 20, seed: 62)
        try folder.write(
            [
                "acme/tiny/model.gguf": weights, "acme/tiny/config.json": Array(#"{"model_type": "demo"}"#.utf8),
                "acme/tiny/tokenizer/vocab.txt": Array("a b\n".utf8),
            ], in: "repos")
        let certificates = try await TestCertificates.make(in: folder.url)
        var server = MirrorServer(root: folder.path("repos"), treePageSize: 2, logger: PullThroughTests.quiet)
        server.tls = try ServerTLS(certificate: certificates.certificate, key: certificates.key)
        try await MirrorFixture.serving(server, root: folder) { mirror in
            let cache = folder.path("hub")
            let result = try await PythonInteropTests.runPython(
                script: "hub_client.py", [cache.path], endpoint: mirror.baseURL, home: folder.url,
                environment: ["SSL_CERT_FILE": certificates.authority])
            #expect(result["files"] as? [String] == ["config.json", "model.gguf", "tokenizer/vocab.txt"])
            #expect(result["tree"] as? [String] == ["config.json", "model.gguf", "tokenizer", "tokenizer/vocab.txt"])
            let blob = cache.appendingPathComponent("models--acme--tiny/blobs/\(SampleData.sha256(weights))")
            #expect(try Data(contentsOf: blob) == Data(weights))
        }
    }

    /// A socket that never starts the handshake does not hold its connection slot, nor a stop, for ever: it is
    /// closed after the handshake timeout, and a stop that comes first closes it at once.
    @Test(.timeLimit(.minutes(1))) func aClientThatNeverShakesHandsIsClosed() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-mirror-tls-silent")
        defer { folder.remove() }
        try folder.write(Self.layout, in: "repos")
        let certificates = try await TestCertificates.make(in: folder.url)
        var server = MirrorServer(root: folder.path("repos"), logger: PullThroughTests.quiet)
        server.tls = try ServerTLS(certificate: certificates.certificate, key: certificates.key)
        server.tlsHandshakeTimeout = .milliseconds(300)
        try await MirrorFixture.serving(server, root: folder) { mirror in
            let silent = try LoopbackConnection(port: mirror.baseURL.port!)
            #expect(await silent.firstBytes() == nil, "the silent client was answered, or kept open")
        }

        // With a long handshake timeout, stopping the server closes the pending handshake rather than wait.
        server.tlsHandshakeTimeout = .seconds(3600)
        server.drainTimeout = .seconds(3600)
        let address = Mutex<URL?>(nil)
        let running = Task { try await server.run(port: 0) { url in address.withLock { $0 = url } } }
        try #require(await waitUntil { address.withLock { $0 } != nil })
        let pending = try LoopbackConnection(port: address.withLock { $0 }!.port!)
        // The connection is accepted before the stop (a request on another connection proves the server runs).
        _ = try await Self.pull(
            address.withLock { $0 }!, trusting: certificates.authority, into: folder.path("c"))
        running.cancel()
        try await withTimeLimit(30) { try await running.value }
        #expect(await pending.firstBytes() == nil)
    }

    @Test func aReloadedCertificateReachesNewConnections() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-mirror-reload")
        defer { folder.remove() }
        try folder.write(Self.layout, in: "repos")
        let first = folder.path("first")
        let second = folder.path("second")
        for made in [first, second] {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        }
        let old = try await TestCertificates.make(in: first)
        let new = try await TestCertificates.make(in: second)
        let live = folder.path("live")
        try FileManager.default.createDirectory(at: live, withIntermediateDirectories: true)
        for name in ["server.pem", "server.key"] {
            try FileManager.default.copyItem(
                at: first.appendingPathComponent(name), to: live.appendingPathComponent(name))
        }
        let tls = try ServerTLS(
            certificate: live.appendingPathComponent("server.pem").path,
            key: live.appendingPathComponent("server.key").path)
        var server = MirrorServer(root: folder.path("repos"), logger: PullThroughTests.quiet)
        server.tls = tls
        try await MirrorFixture.serving(server, root: folder) { mirror in
            #expect(
                try await Self.pull(mirror.baseURL, trusting: old.authority, into: folder.path("a")).files.count == 2)

            // A renewal that is not a certificate keeps the one in use.
            try Data("not a certificate\n".utf8).write(to: live.appendingPathComponent("server.pem"))
            #expect(throws: ModelDepotError.self) { try tls.reload() }
            #expect(
                try await Self.pull(mirror.baseURL, trusting: old.authority, into: folder.path("b")).files.count == 2)

            for name in ["server.pem", "server.key"] {
                let target = live.appendingPathComponent(name)
                try? FileManager.default.removeItem(at: target)
                try FileManager.default.copyItem(at: second.appendingPathComponent(name), to: target)
            }
            try tls.reload()
            #expect(
                try await Self.pull(mirror.baseURL, trusting: new.authority, into: folder.path("c")).files.count == 2)
            let refused = await #expect(throws: ModelDepotError.self) {
                try await Self.pull(mirror.baseURL, trusting: old.authority, into: folder.path("d"))
            }
            #expect(refused?.code == .untrustedCertificate)
        }
    }
}
