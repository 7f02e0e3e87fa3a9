import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

@testable import ModelDepotServer
@testable import ModelDepotTransfer

/// Pulls from an https Hub (nginx terminating TLS with a test CA's certificate, in front of a mirror), directly
/// and through a TLS-inspecting proxy (mitmproxy's `mitmdump`, with a CA of its own): a certificate no trusted
/// authority signed is refused by name and nothing is written; the CA given by `--ca-cert`, `SSL_CERT_FILE` or
/// `SSL_CERT_DIR` is added to the system's store; `insecure` checks nothing.
@Suite(.serialized) struct CertificateTrustTests {
    static let layout = CompanyNetworkTests.layout

    static func withHTTPSHub(
        _ body: (_ hub: URL, _ certificates: TestCertificates, _ folder: TemporaryDirectory) async throws -> Void
    ) async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-tls")
        defer { folder.remove() }
        try folder.write(layout, in: "repos")
        let certificates = try await TestCertificates.make(in: folder.url)
        let mirror = MirrorServer(root: folder.path("repos"), logger: PullThroughTests.quiet)
        try await MirrorFixture.serving(mirror, root: folder) { mirror in
            let front = try await TLSPeer.httpsFront(to: mirror.baseURL, certificates: certificates, in: folder.url)
            let outcome: Result<Void, any Error>
            do {
                outcome = .success(
                    try await body(URL(string: "https://127.0.0.1:\(front.port)")!, certificates, folder))
            } catch { outcome = .failure(error) }
            await front.stop()
            try outcome.get()
        }
    }

    static func pull(_ hub: URL, _ network: NetworkSettings, into cache: URL) async throws -> Snapshot {
        var configuration = ModelManager.Configuration(endpoint: hub, cache: HubCache(root: cache))
        configuration.transport = AsyncHTTPTransport(network: network)
        configuration.apiRetryPolicy = RetryPolicy(maxAttempts: 1)
        configuration.engine.retryPolicy = RetryPolicy(maxAttempts: 1)
        return try await configuration.makePull().download(SnapshotRequest(repo: try RepoID("acme/tiny")))
    }

    static func trusting(_ paths: String..., origin: String = "--ca-cert") -> NetworkSettings {
        NetworkSettings(trust: TrustSettings(additional: paths.map { .init(path: $0, origin: origin) }))
    }

    static func expectRefused(
        _ hub: URL, _ network: NetworkSettings, cache: URL, issuer: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let error = await #expect(throws: ModelDepotError.self, sourceLocation: sourceLocation) {
            try await pull(hub, network, into: cache)
        }
        #expect(error?.code == .untrustedCertificate, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(
            error?.message.contains("127.0.0.1") == true && error?.message.contains("SSL_CERT_FILE") == true,
            sourceLocation: sourceLocation)
        #expect(error?.recoverySuggestion?.contains("--ca-cert") == true, sourceLocation: sourceLocation)
        #expect(
            error?.message.contains("issued by \(issuer)") == true, "\(error?.message ?? "")",
            sourceLocation: sourceLocation)
        #expect(
            !FileManager.default.fileExists(atPath: cache.appendingPathComponent("models--acme--tiny").path),
            "a refused pull wrote into the cache", sourceLocation: sourceLocation)
    }

    @Test func aServerWithItsOwnCAIsRefusedUntilTheCAIsAdded() async throws {
        try await Self.withHTTPSHub { hub, certificates, folder in
            await Self.expectRefused(hub, .direct, cache: folder.path("refused"), issuer: "CN=ModelDepot Test CA")

            let flag = try await Self.pull(hub, Self.trusting(certificates.authority), into: folder.path("flag"))
            let weights = try Data(contentsOf: flag.folder.appendingPathComponent("model.safetensors"))
            #expect(weights == Data(Self.layout["acme/tiny/model.safetensors"]!))

            let variable = try NetworkSettings.fromEnvironment(["SSL_CERT_FILE": certificates.authority])
            #expect(try await Self.pull(hub, variable, into: folder.path("variable")).files.count == 2)

            // A folder of certificates (SSL_CERT_DIR) with other files beside them.
            let directory = folder.path("certs")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                at: URL(fileURLWithPath: certificates.authority), to: directory.appendingPathComponent("company.pem"))
            try Data("not a certificate\n".utf8).write(to: directory.appendingPathComponent("README"))
            let folderVariable = try NetworkSettings.fromEnvironment(["SSL_CERT_DIR": directory.path])
            #expect(try await Self.pull(hub, folderVariable, into: folder.path("folder")).files.count == 2)

            let insecure = NetworkSettings(trust: TrustSettings(insecure: true))
            #expect(try await Self.pull(hub, insecure, into: folder.path("insecure")).files.count == 2)

            // A file that holds no certificate is named, not a TLS failure far from its cause.
            let bogus = folder.path("bogus.pem")
            try Data("-----BEGIN NOTHING-----\n".utf8).write(to: bogus)
            let error = await #expect(throws: ModelDepotError.self) {
                try await Self.pull(
                    hub, Self.trusting(bogus.path, origin: "REQUESTS_CA_BUNDLE"), into: folder.path("b"))
            }
            #expect(error?.message.contains("REQUESTS_CA_BUNDLE") == true && error?.message.contains("PEM") == true)
        }
    }

    @Test func aTLSInspectingProxyNeedsItsCAAndGetsNothingInClearWithout() async throws {
        try await Self.withHTTPSHub { hub, certificates, folder in
            let proxyFolder = folder.path("mitm")
            try FileManager.default.createDirectory(at: proxyFolder, withIntermediateDirectories: true)
            let mitm = try await TLSPeer.inspectingProxy(upstreamAuthority: certificates.authority, in: proxyFolder)
            let outcome: Result<Void, any Error>
            do {
                let proxy = ProxySettings(proxy: try ProxyServer(parsing: "127.0.0.1:\(mitm.port)", setting: "--proxy"))
                // The Hub's own CA is not enough: the proxy presents certificates of its own CA.
                var hubCA = Self.trusting(certificates.authority)
                hubCA.proxies = proxy
                await Self.expectRefused(hub, hubCA, cache: folder.path("refused"), issuer: "CN=mitmproxy, O=mitmproxy")
                var companyCA = Self.trusting(mitm.mitmAuthority, origin: "SSL_CERT_FILE")
                companyCA.proxies = proxy
                let snapshot = try await Self.pull(hub, companyCA, into: folder.path("inspected"))
                let weights = try Data(contentsOf: snapshot.folder.appendingPathComponent("model.safetensors"))
                outcome = .success(#expect(weights == Data(Self.layout["acme/tiny/model.safetensors"]!)))
            } catch { outcome = .failure(error) }
            await mitm.stop()
            try outcome.get()
        }
    }
}
