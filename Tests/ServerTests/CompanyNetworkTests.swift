import Foundation
import Logging
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

@testable import ModelDepotServer
@testable import ModelDepotTransfer

/// Pulls through real forward proxies (Debian's tinyproxy and squid): `CONNECT` for every request, `no_proxy`
/// sending the CDN around the proxy, Basic credentials from the proxy URL, a 407 that says what is missing, and
/// the Hub token never in the proxy's log.
@Suite(.serialized) struct CompanyNetworkTests {
    static let layout: [String: [UInt8]] = [
        "acme/tiny/config.json": Array(#"{"model_type": "demo"}"#.utf8),
        "acme/tiny/model.safetensors": SampleData.bytes(count: 1 << 20, seed: 41),
    ]
    static let hubToken = "hf_companynetworktesttoken"

    /// A Hub (a mirror with a token) at 127.0.0.1 that sends its LFS files to a CDN reached as `localhost`, so
    /// `no_proxy` can tell the two apart.
    static func withHubAndCDN(_ body: (_ hub: URL, _ cdn: URL) async throws -> Void) async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-company")
        defer { root.remove() }
        try root.write(layout)
        try await MirrorFixture.serving(MirrorServer(root: root.url, logger: PullThroughTests.quiet), root: root) {
            cdn in
            let cdnByName = URL(string: "http://localhost:\(cdn.baseURL.port!)")!
            var hub = MirrorServer(
                root: root.url, stateFolder: root.path("hub-state"), token: hubToken, logger: PullThroughTests.quiet)
            hub.lfsRedirectBase = cdnByName
            try await MirrorFixture.serving(hub, root: root) { hub in try await body(hub.baseURL, cdnByName) }
        }
    }

    static func pull(from hub: URL, through network: NetworkSettings, into folder: TemporaryDirectory) async throws
        -> Snapshot
    {
        var configuration = ModelManager.Configuration(
            endpoint: hub, token: hubToken, cache: HubCache(root: folder.path("cache")))
        configuration.transport = AsyncHTTPTransport(network: network)
        configuration.apiRetryPolicy = RetryPolicy(maxAttempts: 1)
        configuration.engine.retryPolicy = RetryPolicy(maxAttempts: 1)
        return try await configuration.makePull().download(SnapshotRequest(repo: try RepoID("acme/tiny")))
    }

    @Test func aPullGoesThroughTheProxyAndNoProxySendsTheCDNAround() async throws {
        try await ProxyPeer.with(.tinyproxy) { proxy in
            try await Self.withHubAndCDN { hub, cdn in
                let folder = try TemporaryDirectory(prefix: "modeldepot-proxied")
                defer { folder.remove() }
                let network = NetworkSettings(
                    proxies: ProxySettings(
                        proxy: try ProxyServer(parsing: proxy.url, setting: "--proxy"), noProxy: NoProxy("localhost")))
                let snapshot = try await Self.pull(from: hub, through: network, into: folder)
                let weights = try Data(contentsOf: snapshot.folder.appendingPathComponent("model.safetensors"))
                #expect(weights == Data(Self.layout["acme/tiny/model.safetensors"]!))
                let log = proxy.accessLog
                #expect(log.contains("CONNECT 127.0.0.1:\(hub.port!)"), "\(log)")
                #expect(!log.contains("localhost"), "the CDN went through the proxy despite no_proxy: \(log)")
                #expect(!log.contains(Self.hubToken))
                _ = cdn
            }
        }
    }

    @Test func aProxyThatWantsCredentialsSaysSoAndTakesThemFromTheURL() async throws {
        try await ProxyPeer.with(.squid, user: "alice", password: "s3cr3t pass") { proxy in
            try await Self.withHubAndCDN { hub, _ in
                let folder = try TemporaryDirectory(prefix: "modeldepot-squid")
                defer { folder.remove() }
                let anonymous = NetworkSettings(
                    proxies: ProxySettings(proxy: try ProxyServer(parsing: proxy.url, setting: "HTTPS_PROXY")))
                let error = await #expect(throws: ModelDepotError.self) {
                    try await Self.pull(from: hub, through: anonymous, into: folder)
                }
                #expect(error?.code == .proxyRefused, "\(String(describing: error))")
                #expect(error?.message.contains("407") == true && error?.message.contains("credentials") == true)
                #expect(
                    !FileManager.default.fileExists(atPath: folder.path("cache/models--acme--tiny/snapshots").path),
                    "a refused pull wrote a snapshot")

                let wrong = NetworkSettings(
                    proxies: ProxySettings(
                        proxy: try ProxyServer(parsing: "http://alice:wrong@127.0.0.1:\(proxy.port)", setting: "x")))
                let refused = await #expect(throws: ModelDepotError.self) {
                    try await Self.pull(from: hub, through: wrong, into: folder)
                }
                #expect(refused?.code == .proxyRefused && refused?.message.contains("wrong") == false)

                let signedIn = NetworkSettings(
                    proxies: ProxySettings(
                        proxy: try ProxyServer(
                            parsing: "http://alice:s3cr3t%20pass@127.0.0.1:\(proxy.port)", setting: "HTTPS_PROXY")))
                let snapshot = try await Self.pull(from: hub, through: signedIn, into: folder)
                #expect(snapshot.files.count == 2)
                let log = proxy.accessLog
                #expect(log.contains("CONNECT 127.0.0.1:\(hub.port!)") && log.contains("alice"), "\(log)")
                #expect(!log.contains(Self.hubToken), "the Hub token reached the proxy's log")
            }
        }
    }
}
