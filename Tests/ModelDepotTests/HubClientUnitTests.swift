import Foundation
import ModelDepotTesting
import NIOCore
import Testing

@testable import ModelDepot
@testable import ModelDepotCache
@testable import ModelDepotCore
@testable import ModelDepotHub
@testable import ModelDepotTransfer

/// The Hub's error conventions and Python's environment rules, without a server.
@Suite struct HubClientUnitTests {
    static let url = URL(string: "https://hub.example/api/models/acme/tiny/revision/v2")!

    static func response(_ status: Int, _ headers: [(String, String)] = []) -> TransportResponse {
        TransportResponse(status: status, headers: headers.map { (name: $0.0, value: $0.1) }, body: .empty)
    }

    @Test func errorsAreClassifiedByHeaderNotStatus() {
        let error = { (status: Int, headers: [(String, String)], body: String) in
            HubClient.hubError(for: Self.response(status, headers), url: Self.url, body: Array(body.utf8))
        }
        #expect(error(401, [("X-Error-Code", "RepoNotFound")], "").code == .repositoryNotFound)
        #expect(error(403, [("X-Error-Code", "GatedRepo")], "").code == .gatedRepository)
        #expect(error(401, [("X-Error-Code", "GatedRepo")], "").message.contains("accept its terms"))
        let revision = error(404, [("X-Error-Code", "RevisionNotFound")], "")
        #expect(revision.code == .revisionNotFound && revision.message.contains("'v2'"))
        #expect(error(404, [("X-Error-Code", "EntryNotFound")], "").code == .entryNotFound)
        #expect(error(401, [], "").code == .repositoryNotFound)
        #expect(
            error(401, [("X-Error-Message", "Invalid credentials in Authorization header")], "").code == .unauthorized)
        #expect(error(500, [], #"{"error": "boom"}"#).message.contains("boom"))
        let limited = error(429, [("RateLimit", #""api";r=0;t=55"#)], "")
        #expect(limited.code == .rateLimited && limited.retryAfter == .seconds(55))
        #expect(limited.message.contains("55 s"))
        #expect(error(429, [("Retry-After", "7")], "").retryAfter == .seconds(7))
    }

    /// A listing whose reading is stopped by the caller's cancellation (a pause while planning) is a cancellation,
    /// not an answer cut off by the network: the download shows as paused, not failed. Another error while reading
    /// is the network's.
    @Test func aBodyStoppedByCancellationStaysACancellation() async throws {
        let cancelled = TransportBody(makeNext: { { throw CancellationError() } })
        await #expect(throws: CancellationError.self) {
            _ = try await HubClient.collect(cancelled, limit: 1 << 20, url: Self.url)
        }
        struct Reset: Error {}
        let reset = TransportBody(makeNext: { { throw Reset() } })
        let task = Task { try await HubClient.collect(reset, limit: 1 << 20, url: Self.url) }
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        let error = await #expect(throws: ModelDepotError.self) {
            _ = try await HubClient.collect(reset, limit: 1 << 20, url: Self.url)
        }
        #expect(error?.code == .network)
    }

    @Test func linkHeadersGiveTheNextPage() {
        let base = URL(string: "http://h/api/models/a/b/tree/main")!
        #expect(
            HubClient.nextLink(in: #"<http://h/next?cursor=2>; rel="next""#, relativeTo: base)?.absoluteString
                == "http://h/next?cursor=2")
        #expect(HubClient.nextLink(in: #"<http://h/prev>; rel="prev""#, relativeTo: base) == nil)
    }

    @Test func aListingsNextPageIsFollowedOnlyOnItsOwnServer() async throws {
        let elsewhere = try await ScriptedHTTPServer.start()
        let page = #"[{"type": "file", "oid": "0000000000000000000000000000000000000000", "size": 1, "path": "a"}]"#
        for link in [
            elsewhere.baseURL.absoluteString + "/api/models/acme/tiny/tree/main?cursor=1",
            "http+unix://%2Ftmp%2Fdocker.sock/containers/json", "file:///etc/passwd",
        ] {
            let hub = try await ScriptedHTTPServer.start(replies: [
                .json(page, headers: [("Link", "<\(link)>; rel=\"next\"")])
            ])
            let client = HubClient(endpoint: hub.baseURL)
            await #expect {
                try await client.listFiles(try RepoID("acme/tiny"), revision: "main")
            } throws: { error in
                (error as? ModelDepotError)?.code == .protocolViolation
                    && (error as? ModelDepotError)?.message.contains("refusing to follow it") == true
            }
            #expect(hub.requests.count == 1, "\(link)")
            try await hub.shutdown()
        }
        #expect(elsewhere.requests.isEmpty)
        try await elsewhere.shutdown()
        let base = URL(string: "https://hub.example/api/models/a/b/tree/main")!
        #expect(HubClient.isSameOrigin(URL(string: "https://HUB.example:443/next")!, as: base))
        #expect(!HubClient.isSameOrigin(URL(string: "http://hub.example/next")!, as: base))
        #expect(!HubClient.isSameOrigin(URL(string: "https://hub.example:8443/next")!, as: base))
    }

    @Test func metadataComesFromTheRedirectAndRefusesUnsafeETags() throws {
        let commit = String(repeating: "a", count: 40)
        let sha = String(repeating: "b", count: 64)
        let redirect = Self.response(
            302,
            [
                ("X-Repo-Commit", commit), ("X-Linked-Etag", "\"\(sha)\""), ("X-Linked-Size", "42"),
                ("Content-Length", "0"),
            ])
        let metadata = try HubClient.metadata(
            from: redirect, location: URL(string: "https://cdn/x")!, url: Self.url, isRedirect: true)
        #expect(metadata.etag == sha && metadata.size == 42 && metadata.commit == commit)
        let hostile = Self.response(200, [("X-Repo-Commit", commit), ("ETag", "\"../../etc/passwd\"")])
        #expect(throws: ModelDepotError.self) {
            try HubClient.metadata(from: hostile, location: Self.url, url: Self.url, isRedirect: false)
        }
        let noCommit = Self.response(200, [("ETag", "\"\(sha)\"")])
        #expect(throws: ModelDepotError.self) {
            try HubClient.metadata(from: noCommit, location: Self.url, url: Self.url, isRedirect: false)
        }
    }

    @Test func tokenAndOfflineFollowPythonsRules() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("md-env-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("  hf_file\r\n".utf8).write(to: folder.appendingPathComponent("token"))
        #expect(HubEnvironment(variables: ["HF_HOME": folder.path]).token == "hf_file")
        #expect(HubEnvironment(variables: ["HF_HOME": folder.path, "HF_TOKEN": "hf_env"]).token == "hf_env")
        #expect(
            HubEnvironment(variables: ["HF_HOME": folder.path, "HUGGING_FACE_HUB_TOKEN": "hf_legacy"]).token
                == "hf_legacy")
        #expect(HubEnvironment(variables: ["HF_HOME": folder.path, "HF_TOKEN": ""]).token == nil)
        #expect(
            HubEnvironment(variables: ["HF_HOME": "/nonexistent", "HF_TOKEN_PATH": folder.path + "/token"]).token
                == "hf_file")
        #expect(
            HubEnvironment(variables: ["HF_HOME": folder.path, "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1"]).token == nil)
        #expect(HubEnvironment(variables: ["HF_HUB_OFFLINE": "YES"]).isOffline)
        #expect(HubEnvironment(variables: ["TRANSFORMERS_OFFLINE": "1"]).isOffline)
        #expect(!HubEnvironment(variables: ["HF_HUB_OFFLINE": "0"]).isOffline)
    }

    /// Flags and apps lay typed settings over the variables, read once; nothing is written back as a variable.
    @Test func typedSettingsLayOverTheVariables() throws {
        var environment = HubEnvironment(variables: [
            "HF_ENDPOINT": "https://hub.example//", "MODELDEPOT_MIRRORS": " http://a.example , ,http://b.example",
            "HF_TOKEN": "hf_env", "MODELDEPOT_DISCOVER": "on",
        ])
        #expect(environment.endpoint == "https://hub.example")
        #expect(environment.mirrorURLs == ["http://a.example", "http://b.example"])
        #expect(try environment.mirrors().map(\.endpoint.host) == ["a.example", "b.example"])
        #expect(environment.discoversMirrors && !environment.isOffline && environment.usesImplicitToken)
        environment.endpoint = "http://127.0.0.1:8080/"
        environment.isOffline = true
        environment.mirrorURLs = ["http://c.example"]
        environment.explicitToken = " hf_flag\r\n"
        #expect(environment.endpoint == "http://127.0.0.1:8080")
        #expect(environment.isOffline)
        #expect(try environment.mirrors().map(\.endpoint.host) == ["c.example"])
        #expect(environment.token == "hf_flag")
        #expect(environment.variables["HF_ENDPOINT"] == "https://hub.example//", "the variables stay as read")
        environment.mirrorURLs = ["ftp://nope"]
        #expect(throws: ModelDepotError.self) { try environment.mirrors() }

        // The mirrors' token is a typed setting too: read from MODELDEPOT_MIRROR_TOKEN, or set by an app.
        var mirrored = HubEnvironment(variables: [
            "MODELDEPOT_MIRRORS": "http://lan-mirror:8080", "MODELDEPOT_MIRROR_TOKEN": " lan-secret\n",
        ])
        #expect(mirrored.mirrorToken == "lan-secret")
        #expect(try mirrored.mirrors().map(\.token) == ["lan-secret"])
        var ownHub = HubEnvironment(endpoint: URL(string: "https://own.example/")!)
        ownHub.mirrorURLs = ["http://lan-mirror:8080"]
        #expect(try ownHub.mirrors().map(\.token) == [nil], "an app's own hub reads no mirror token from the process")
        ownHub.mirrorToken = "own-lan"
        #expect(try ownHub.mirrors().map(\.token) == ["own-lan"])
        mirrored.mirrorToken = ""
        #expect(try mirrored.mirrors().map(\.token) == [nil])

        // An app's own hub reads nothing from the process: no implicit token even where HF_TOKEN is set.
        let own = HubEnvironment(endpoint: URL(string: "https://own.example/")!, offline: true)
        #expect(own.endpoint == "https://own.example" && own.isOffline && own.token == nil)
        #expect(own.tokenOrigin == .disabled && own.mirrorURLs.isEmpty)
        #expect(HubEnvironment(endpoint: URL(string: "https://own.example")!, token: "hf_own").token == "hf_own")
    }

    /// A token named for one hub never falls through to the places the implicit token may go: a company hub's
    /// token stays off Hugging Face's router; one for the Hub itself also serves its router.
    @Test func anExplicitTokenStaysWithItsHub() {
        var corporate = HubEnvironment(variables: ["HF_TOKEN": "hf_implicit"], explicitToken: "corp")
        corporate.endpoint = "https://hub.corp.example"
        #expect(corporate.token(for: URL(string: "https://hub.corp.example/api/models")!) == "corp")
        #expect(corporate.token(for: URL(string: "https://router.huggingface.co/v1")!) == nil)
        #expect(corporate.token(for: URL(string: "https://huggingface.co/api/models")!) == nil)
        let hub = HubEnvironment(variables: [:], explicitToken: "hf_mine")
        #expect(hub.token(for: URL(string: "https://router.huggingface.co/v1")!) == "hf_mine")
        #expect(hub.token(for: URL(string: "https://someone.hf.space/v1")!) == nil)
        // A client for another endpoint, told to take the environment's token, gets none of the corporate one.
        let elsewhere = try? HubClient(
            endpoint: URL(string: "https://elsewhere.example")!, tokenSource: .environment(corporate))
        #expect(elsewhere?.authorization(for: URL(string: "https://elsewhere.example/api/models")!).isEmpty == true)
        let home = try? HubClient(
            endpoint: URL(string: "https://hub.corp.example")!, tokenSource: .environment(corporate))
        #expect(home?.authorization(for: URL(string: "https://hub.corp.example/api/models")!).count == 1)
        // Empty is the Hub, as an empty HF_ENDPOINT is.
        var reset = corporate
        reset.endpoint = ""
        #expect(reset.endpoint == "https://huggingface.co")
    }

    @Test func theTokenGoesToTheEndpointOriginOnly() {
        let hub = HubClient(endpoint: URL(string: "https://hub.example/")!, token: "secret")
        #expect(hub.endpoint.absoluteString == "https://hub.example")
        #expect(hub.authorization(for: URL(string: "https://hub.example/a/resolve/main/x")!).count == 1)
        #expect(hub.authorization(for: URL(string: "https://cdn.example/x")!).isEmpty)
        #expect(hub.authorization(for: URL(string: "http://hub.example/x")!).isEmpty)
        #expect(hub.authorization(for: URL(string: "https://hub.example:8443/x")!).isEmpty)
    }
}

/// A Hub that accepts connections and never answers costs the retry budget, not attempts × timeouts.
@Suite struct HubClientRetryBudgetTests {
    /// Each request "takes" the transport's read timeout on the test clock, then fails as it would.
    struct SilentTransport: HTTPTransport {
        let clock: ImmediateClock
        func send(_ request: TransportRequest) async throws -> TransportResponse {
            try await clock.sleep(for: .seconds(20))
            throw ModelDepotError(.network, "The server at hub.example stopped sending (read timeout).")
        }
    }

    @Test func aSilentHubIsGivenUpOnWithinTheBudget() async throws {
        let clock = ImmediateClock()
        let hub = HubClient(
            endpoint: URL(string: "https://hub.example")!, transport: SilentTransport(clock: clock), clock: clock,
            retryPolicy: RetryPolicy(maxAttempts: 8), random: { 0.5 })
        let error = await #expect(throws: ModelDepotError.self) {
            try await hub.repoInfo(try RepoID("acme/tiny"))
        }
        #expect(error?.code == .network)
        #expect(error?.message.contains("the retry budget is 90 s") == true, "\(error?.message ?? "")")
        let spent = clock.sleeps.reduce(Duration.zero, +)
        #expect(spent <= .seconds(90), "\(clock.sleeps)")
        #expect(clock.sleeps.filter { $0 == .seconds(20) }.count == 4, "four attempts fit in 90 s")
    }
}

@Suite struct HubSecurityScanTests {
    @Test func theHubsScanIsReadWhenGivenAndAbsentOtherwise() async throws {
        let flagged =
            #"{"id": "acme/flagged", "securityRepoStatus": {"scansDone": true, "filesWithIssues": [{"path": "pytorch_model.bin", "level": "unsafe"}]}}"#
        let server = try await FaultServer.start(files: [
            "/api/models/acme/flagged/revision/main": Array(flagged.utf8),
            "/api/models/acme/clean": Array(#"{"id": "acme/clean", "securityRepoStatus": {"scansDone": true}}"#.utf8),
            "/api/models/acme/pending": Array(
                #"{"securityRepoStatus": {"scansDone": false, "filesWithIssues": []}}"#.utf8),
            "/api/models/acme/mirror": Array(#"{"id": "acme/mirror"}"#.utf8),
        ])
        defer { Task { try? await server.shutdown() } }
        let hub = HubClient(endpoint: server.baseURL)
        let scan = try #require(try await hub.securityScan(try RepoID("acme/flagged"), revision: "main"))
        #expect(scan.filesWithIssues == [.init(path: "pytorch_model.bin", level: "unsafe")])
        #expect(scan.summary == "1 file flagged: pytorch_model.bin (unsafe)")
        #expect(try await hub.securityScan(try RepoID("acme/clean"))?.summary == "no issues")
        #expect(try await hub.securityScan(try RepoID("acme/pending"))?.summary == "scans not finished")
        #expect(try await hub.securityScan(try RepoID("acme/mirror")) == nil)
        #expect(server.requests.map(\.path).contains("/api/models/acme/flagged/revision/main"))
    }
}

/// The implicit token (HF_TOKEN, the token file) leaves only over https to the Hub, its router and the
/// configured endpoint, or over http to a configured endpoint on this machine; a token given explicitly
/// (`--token`, `HubClient(token:)`) goes to the configured endpoint as asked.
@Suite struct ImplicitTokenTests {
    static func sent(endpoint: String, to path: String = "/api/models/acme/tiny") throws -> Bool {
        let client = try HubClient(
            environment: HubEnvironment(variables: ["HF_ENDPOINT": endpoint, "HF_TOKEN": "hf_implicit"]))
        return !client.authorization(for: URL(string: endpoint + path)!).isEmpty
    }

    /// Review 39: `isLoopback` dropped the labels that were not numbers and counted the rest, so a DNS name that
    /// merely starts with 127.0.0.1 (`127.0.0.1.attacker.example`, resolving anywhere) was "this machine" and got
    /// the implicit token over plain http.
    @Test func aNameThatOnlyLooksLikeALoopbackAddressIsNotThisMachine() throws {
        for endpoint in [
            "http://127.0.0.1.attacker.example:8080", "http://127.0.0.1.nip.io", "http://127.evil.0.0.1",
            "http://127.0.0.1x", "http://localhost.evil.example",
        ] {
            #expect(URL(string: endpoint)?.isLoopback != true, "\(endpoint)")
            #expect(try !Self.sent(endpoint: endpoint), "\(endpoint)")
        }
        for endpoint in ["http://127.0.0.1:8080", "http://127.1.2.3", "http://localhost", "http://[::1]:80"] {
            #expect(URL(string: endpoint)?.isLoopback == true, "\(endpoint)")
        }
    }

    @Test func anHTTPEndpointOffThisMachineNeverGetsTheImplicitToken() throws {
        // A LAN or internet mirror over plain http: anyone on the path would read the user's Hub token.
        #expect(try !Self.sent(endpoint: "http://mirror.lan:8080"))
        #expect(try !Self.sent(endpoint: "http://192.168.1.20:8080"))
        #expect(try !Self.sent(endpoint: "http://huggingface.co"))
        // https, and loopback http (the traffic never leaves the machine), keep it.
        #expect(try Self.sent(endpoint: "https://huggingface.co"))
        #expect(try Self.sent(endpoint: "https://hub.internal.example"))
        #expect(try Self.sent(endpoint: "http://127.0.0.1:8080"))
        #expect(try Self.sent(endpoint: "http://localhost:8080"))
        #expect(try Self.sent(endpoint: "http://[::1]:8080"))
        // Explicit tokens go where they are sent: --token to the configured endpoint, even over http.
        let explicit = try HubClient(
            environment: HubEnvironment(
                variables: ["HF_ENDPOINT": "http://mirror.lan:8080", "HF_TOKEN": "hf_implicit"],
                explicitToken: "hf_explicit"))
        #expect(
            explicit.authorization(for: URL(string: "http://mirror.lan:8080/x")!).first?.value == "Bearer hf_explicit")
        let app = HubClient(endpoint: URL(string: "http://mirror.lan:8080")!, token: "hf_app")
        #expect(app.authorization(for: URL(string: "http://mirror.lan:8080/x")!).first?.value == "Bearer hf_app")
        // An app that asks for the environment's token gets the same rule.
        let fromEnvironment = try HubClient(
            endpoint: URL(string: "http://mirror.lan:8080")!,
            tokenSource: .environment(HubEnvironment(variables: ["HF_TOKEN": "hf_implicit"])))
        #expect(fromEnvironment.authorization(for: URL(string: "http://mirror.lan:8080/x")!).isEmpty)
    }
}
