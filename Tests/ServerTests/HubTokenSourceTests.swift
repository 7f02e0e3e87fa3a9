import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// The Hub token from each source, the keychain through a fake store; the token never shows in a description
/// or an error, and only the endpoint gets it.
@Suite struct HubTokenSourceTests {
    static let item = KeychainItem(service: "co.huggingface.hub", account: "me", accessGroup: "TEAM.shared")

    @Test func eachSourceGivesItsToken() throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-token")
        defer { folder.remove() }
        try Data("  file-token\r\n".utf8).write(to: folder.path("token"))
        #expect(try HubTokenSource.file(folder.path("token")).token() == "file-token")
        #expect(try HubTokenSource.file(folder.path("absent")).token() == nil)
        #expect(try HubTokenSource.value("given\n").token() == "given")
        #expect(try HubTokenSource.none.token() == nil)
        let environment = HubEnvironment(variables: ["HF_TOKEN": "env-token", "HF_HOME": folder.url.path])
        #expect(try HubTokenSource.environment(environment).token() == "env-token")
        let store = InMemorySecretStore([Self.item: "keychain-token"])
        #expect(try HubTokenSource.keychain(Self.item, store: store).token() == "keychain-token")
        let otherAccount = KeychainItem(service: "co.huggingface.hub", account: "you")
        #expect(try HubTokenSource.keychain(otherAccount, store: store).token() == nil)
    }

    @Test func aKeychainThatCannotBeReadSaysWhichItemAndNeverTheToken() throws {
        let store = InMemorySecretStore([Self.item: "secret-token"])
        store.fail(with: CancellationError())
        let source = HubTokenSource.keychain(Self.item, store: store)
        let error = #expect(throws: ModelDepotError.self) { try source.token() }
        #expect(error?.code == .unauthorized && error?.message.contains("co.huggingface.hub/me") == true)
        #expect(error.map { !"\($0)".contains("secret-token") } == true)
        for described in [source, .value("secret-token"), .none] {
            #expect(!described.description.contains("secret-token"), "\(described)")
        }
    }

    /// A token from the keychain opens a mirror that needs one; without it the mirror refuses.
    @Test func theKeychainTokenReachesTheEndpoint() async throws {
        try await MirrorFixture.with(["acme/tiny/config.json": Array("{}".utf8)], token: "sesame") { mirror in
            let store = InMemorySecretStore()
            try store.write("sesame", to: Self.item)
            let hub = try HubClient(endpoint: mirror.baseURL, tokenSource: .keychain(Self.item, store: store))
            let info = try await hub.repoInfo(try RepoID("acme/tiny"))
            #expect(info.sha?.count == 40)
            try store.delete(Self.item)
            let anonymous = try HubClient(endpoint: mirror.baseURL, tokenSource: .keychain(Self.item, store: store))
            let refused = await #expect(throws: ModelDepotError.self) {
                _ = try await anonymous.repoInfo(try RepoID("acme/tiny"))
            }
            #expect(
                refused?.code == .unauthorized || refused?.code == .repositoryNotFound, "\(String(describing: refused))"
            )
        }
    }
}
