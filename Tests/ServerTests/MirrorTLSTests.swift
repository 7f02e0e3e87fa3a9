import Foundation
import ModelDepot
import ModelDepotTesting
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
        server.tls = try MirrorTLS(certificate: certificates.certificate, key: certificates.key)
        try await MirrorFixture.serving(server, root: folder) { mirror in
            #expect(mirror.baseURL.scheme == "https")
            let snapshot = try await Self.pull(mirror.baseURL, trusting: certificates.authority, into: folder.path("c"))
            let weights = try Data(contentsOf: snapshot.folder.appendingPathComponent("model.safetensors"))
            #expect(weights == Data(Self.weights))
            #expect(server.counters.sendfileResponses == 0, "a file went by sendfile through TLS")

            // curl, as a person checks a mirror.
            let out = folder.path("curl.out")
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            curl.arguments = [
                "-sS", "--fail", "--cacert", certificates.authority, "-o", out.path,
                mirror.baseURL.absoluteString + "/acme/secure/resolve/main/model.safetensors",
            ]
            #expect(await curl.runToEnd() && curl.terminationStatus == 0)
            #expect(try Data(contentsOf: out) == Data(Self.weights))

            // Plain http to the https port is refused, not answered.
            let plain = try? await AsyncHTTPTransport.patient.send(
                TransportRequest(url: URL(string: "http://127.0.0.1:\(mirror.baseURL.port!)/healthz")!))
            #expect(plain == nil || plain?.status != 200)
        }
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
        let tls = try MirrorTLS(
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
