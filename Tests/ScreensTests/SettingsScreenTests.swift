import Foundation
import Logging
import ModelDepot
import ModelDepotScreens
import ModelDepotServer
import ModelDepotTesting
import Synchronization
import Testing

/// The Settings screen against our own mirror behind a token: its `whoami-v2` accepts the right token and
/// refuses a wrong one; no token and offline mode ask nothing. The token itself never shows.
@Suite struct SettingsScreenTests {
    static let secret = "hf_settings_secret_1234"

    @Test func tokenStatusForAcceptedRefusedAndNoToken() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-settings")
        defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.path("repos"), withIntermediateDirectories: true)
        let server = MirrorServer(
            root: folder.path("repos"), token: Self.secret,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let address = Mutex<URL?>(nil)
        let task = Task { try await server.run(host: "127.0.0.1", port: 0) { url in address.withLock { $0 = url } } }
        defer { task.cancel() }
        try #require(await waitUntil { address.withLock { $0 } != nil }, "the mirror did not start")
        let endpoint = address.withLock { $0 }!

        func screen(token: String?, origin: HubEnvironment.TokenOrigin, offline: Bool = false) async -> SettingsScreen {
            let downloads = ModelDownloads(
                manager: try! ModelManager(
                    configuration: .init(
                        endpoint: endpoint, token: token, offline: offline, cache: HubCache(root: folder.path("cache")))
                ),
                catalog: try! ModelCatalog(models: []))
            return await SettingsScreen.load(downloads, tokenOrigin: origin)
        }

        let accepted = await screen(token: Self.secret, origin: .variable("HF_TOKEN"))
        #expect(accepted.tokenState == "accepted", "\(accepted.tokenStatus)")
        #expect(accepted.tokenSource == "the HF_TOKEN environment variable")
        #expect(accepted.tokenStatus == "Accepted by \(endpoint.absoluteString): signed in as modeldepot-mirror.")
        #expect(accepted.endpoint == endpoint.absoluteString)
        #expect(accepted.mirrorsText == "No mirror: files come from the endpoint.")
        #expect(accepted.network.map(\.label).contains("Connections per file"))

        let tokenFile = folder.path("token")
        let refused = await screen(token: "hf_wrong", origin: .file(tokenFile))
        #expect(refused.tokenState == "refused" && refused.tokenStatus.contains("HTTP 401"), "\(refused.tokenStatus)")
        #expect(refused.tokenSource == "the token file \(tokenFile.path)")

        let none = await screen(token: nil, origin: .none)
        #expect(none.tokenState == "none" && none.tokenSource == "none")
        #expect(none.tokenStatus.hasPrefix("No token: public repositories only."))

        let offline = await screen(token: Self.secret, origin: .variable("HF_TOKEN"), offline: true)
        #expect(offline.tokenState == "offline")

        for shown in [accepted, refused, none, offline] {
            let json = String(decoding: try JSONEncoder().encode(shown), as: UTF8.self)
            #expect(!json.contains(Self.secret) && !json.contains("hf_wrong"), "the token itself never shows")
        }
    }

    /// A Wi-Fi-only policy is shown as not enforced where nothing reports the network (Linux); with a path source
    /// (Apple's `NWPathMonitor`, a scripted one here) it is shown as it is.
    @Test func aPolicyNothingCanEnforceSaysSo() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-settings-policy")
        defer { folder.remove() }
        func networks(conditions: (any NetworkConditions)?) async throws -> String? {
            var configuration = ModelManager.Configuration(
                endpoint: URL(string: "http://127.0.0.1:9")!, offline: true, cache: HubCache(root: folder.path("c")))
            configuration.engine.networkPolicy = .unmeteredOnly
            configuration.engine.networkConditions = conditions
            let downloads = ModelDownloads(
                manager: try ModelManager(configuration: configuration), catalog: try ModelCatalog(models: []))
            return await SettingsScreen.load(downloads, tokenOrigin: .none).network.first { $0.label == "Networks" }?
                .value
        }
        let unknown = try #require(try await networks(conditions: nil))
        #expect(unknown.contains("Wi-Fi and wired only") && unknown.contains("not enforced"), "\(unknown)")
        let known = try #require(try await networks(conditions: FixedNetwork()))
        #expect(known.contains("Wi-Fi and wired only") && !known.contains("not enforced"), "\(known)")
    }

    struct FixedNetwork: NetworkConditions {
        func current() async -> NetworkPathStatus { .unmetered }
        func changes() -> AsyncStream<NetworkPathStatus> { AsyncStream { _ in } }
    }

    /// Where the environment's token comes from, in Python's order.
    @Test func tokenOriginFollowsPythonsOrder() throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-token-origin")
        defer { folder.remove() }
        let home = folder.path("home").path
        #expect(HubEnvironment(variables: ["HF_HOME": home]).tokenOrigin == .none)
        try FileManager.default.createDirectory(at: folder.path("home"), withIntermediateDirectories: true)
        try Data("hf_file\n".utf8).write(to: folder.path("home/token"))
        #expect(HubEnvironment(variables: ["HF_HOME": home]).tokenOrigin == .file(folder.path("home/token")))
        #expect(
            HubEnvironment(variables: ["HF_HOME": home, "HUGGING_FACE_HUB_TOKEN": "x"]).tokenOrigin
                == .variable("HUGGING_FACE_HUB_TOKEN"))
        #expect(
            HubEnvironment(variables: ["HF_HOME": home, "HF_TOKEN": "x", "HUGGING_FACE_HUB_TOKEN": "y"]).tokenOrigin
                == .variable("HF_TOKEN"))
        #expect(
            HubEnvironment(variables: ["HF_HOME": home, "HF_TOKEN": "x", "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1"])
                .tokenOrigin == .disabled)
    }
}
