import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotTesting
import NIOCore
import Testing

@testable import ModelDepotServer

/// The Hub's URL grammar on the mirror's responder (``HubFastPath`` in front of the router), without a socket
/// (HummingbirdTesting): one- and two-segment repository ids, names that are also keywords or the mirror's own
/// paths, `%2F` inside a segment, 405 with `Allow` and the Hub's 404 for what no route answers.
@Suite struct HubRouterTests {
    static let layout: [String: String] = [
        "acme/tiny/config.json": #"{"a": 1}"#, "acme/tiny/sub/dir/a.txt": "deep\n",
        "acme/tree/config.json": #"{"tree": true}"#, "ui/tiny/config.json": #"{"ui": true}"#,
        "metrics/x/f.txt": "metrics\n", "acme/refs/config.json": #"{"refs": true}"#, "acme/resolve/f.txt": "resolve\n",
    ]

    static func withClient(
        token: String? = nil, mountsUI: Bool = true, _ body: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-router")
        defer { root.remove() }
        try root.write(layout.mapValues { Array($0.utf8) })
        var server = MirrorServer(root: root.url, token: token, logger: PullThroughTests.quiet)
        // A test channel cannot take a file region: bodies go through memory.
        server.sendsFilesWithSendfile = false
        if mountsUI {
            server.mount("/ui") { group in group.get("") { _, _ in "dashboard" } }
        }
        // What `serve` answers with: the fast path in front of the router.
        try await Application(responder: server.makeResponder()).test(.router, body)
    }

    static func text(_ response: TestResponse) -> String { String(buffer: response.body) }

    @Test func repositoryIdsOfOneAndTwoSegmentsAndKeywordNames() async throws {
        try await Self.withClient { client in
            let info = try await client.execute(uri: "/api/models/acme/tiny", method: .get)
            #expect(info.status == .ok && Self.text(info).contains(#""id":"acme/tiny""#), "\(Self.text(info))")
            let atRevision = try await client.execute(uri: "/api/models/acme/tiny/revision/main", method: .get)
            #expect(atRevision.status == .ok)
            // A two-segment id whose name is a keyword that needs more after it is that repository.
            let keyword = try await client.execute(uri: "/api/models/acme/tree", method: .get)
            #expect(keyword.status == .ok && Self.text(keyword).contains(#""id":"acme/tree""#), "\(Self.text(keyword))")
            // A one-segment id reaches the source (which has no such repository): routed, not a stray path.
            let legacy = try await client.execute(uri: "/api/models/gpt2/revision/main", method: .get)
            #expect(legacy.status == .notFound && legacy.headers[HTTPField.Name("X-Error-Code")!] == "RepoNotFound")
            let tree = try await client.execute(uri: "/api/models/acme/tiny/tree/main/sub%2Fdir", method: .get)
            #expect(tree.status == .ok && Self.text(tree).contains("sub/dir/a.txt"), "\(Self.text(tree))")
            let nested = try await client.execute(uri: "/api/models/acme/tiny/tree/main/sub/dir/", method: .get)
            #expect(Self.text(nested) == Self.text(tree))
            let file = try await client.execute(uri: "/acme/tiny/resolve/main/sub/dir/a.txt", method: .get)
            #expect(file.status == .ok && Self.text(file) == "deep\n")
            let encoded = try await client.execute(uri: "/acme/tiny/resolve/main/sub%2Fdir%2Fa.txt", method: .get)
            #expect(encoded.status == .ok && Self.text(encoded) == "deep\n")
            let noFile = try await client.execute(uri: "/acme/tiny/resolve/main", method: .get)
            #expect(noFile.status == .notFound && noFile.headers[HTTPField.Name("X-Error-Code")!] == "NotFound")
        }
    }

    /// A repository whose name is a keyword of the API is read as the two-segment id, however the path goes on
    /// (the router tries literal segments first and never comes back to the other reading).
    @Test func repositoriesNamedLikeKeywordsKeepTheirRoutes() async throws {
        try await Self.withClient { client in
            let atRevision = try await client.execute(uri: "/api/models/acme/tree/revision/main", method: .get)
            #expect(atRevision.status == .ok && Self.text(atRevision).contains(#""id":"acme/tree""#))
            let tree = try await client.execute(uri: "/api/models/acme/tree/tree/main", method: .get)
            #expect(tree.status == .ok && Self.text(tree).contains("config.json"), "\(Self.text(tree))")
            let paths = try await client.execute(
                uri: "/api/models/acme/tree/paths-info/main", method: .post,
                headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"paths": ["config.json"]}"#))
            #expect(paths.status == .ok && Self.text(paths).contains("config.json"), "\(Self.text(paths))")
            let refsInfo = try await client.execute(uri: "/api/models/acme/refs", method: .get)
            #expect(refsInfo.status == .ok && Self.text(refsInfo).contains(#""id":"acme/refs""#))
            let refs = try await client.execute(uri: "/api/models/acme/refs/refs", method: .get)
            #expect(refs.status == .ok && Self.text(refs).contains("branches"), "\(Self.text(refs))")
            let resolved = try await client.execute(uri: "/acme/resolve/resolve/main/f.txt", method: .get)
            #expect(resolved.status == .ok && Self.text(resolved) == "resolve\n")
        }
    }

    /// Owners named like the mirror's own top-level paths (`/metrics`, the dashboard's `/ui`) still resolve: the
    /// router does not come back to try the owner capture once a literal first segment matched.
    @Test func ownersNamedLikeTheMirrorsPathsResolve() async throws {
        try await Self.withClient { client in
            let ui = try await client.execute(uri: "/ui/tiny/resolve/main/config.json", method: .get)
            #expect(ui.status == .ok && Self.text(ui) == #"{"ui": true}"#, "\(Self.text(ui))")
            #expect(Self.text(try await client.execute(uri: "/ui", method: .get)) == "dashboard")
            let metrics = try await client.execute(uri: "/metrics/x/resolve/main/f.txt", method: .get)
            #expect(metrics.status == .ok && Self.text(metrics) == "metrics\n")
            let counters = try await client.execute(uri: "/metrics", method: .get)
            #expect(counters.status == .ok && Self.text(counters).contains("modeldepot_"))
        }
    }

    @Test func wrongMethodsAndUnknownPathsAnswerAsTheHub() async throws {
        try await Self.withClient { client in
            let post = try await client.execute(uri: "/api/models/acme/tiny", method: .post)
            #expect(post.status == .methodNotAllowed && post.headers[.allow] == "GET, HEAD")
            #expect(post.headers[HTTPField.Name("X-Error-Code")!] == "MethodNotAllowed")
            let get = try await client.execute(uri: "/api/models/acme/tiny/paths-info/main", method: .get)
            #expect(get.status == .methodNotAllowed && get.headers[.allow] == "POST")
            let delete = try await client.execute(uri: "/acme/tiny/resolve/main/config.json", method: .delete)
            #expect(delete.status == .methodNotAllowed && delete.headers[.allow] == "GET, HEAD")
            for path in ["/api/models/acme/tiny/discussions", "/api/nothing", "/a/b/c", "/ui/api/nothing"] {
                let reply = try await client.execute(uri: path, method: .get)
                #expect(reply.status == .notFound, "\(path)")
                #expect(reply.headers[HTTPField.Name("X-Error-Code")!] == "NotFound", "\(path)")
            }
            let notABlob = try await client.execute(uri: "/nothing", method: .get)
            #expect(notABlob.status == .notFound && notABlob.headers[HTTPField.Name("X-Error-Code")!] == "NotFound")
        }
    }

    /// The token guards the Hub's routes and not `/healthz`; a bad repository id is the client's mistake (400).
    @Test func theTokenGuardsTheHubsRoutes() async throws {
        try await Self.withClient(token: "s3cret") { client in
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/api/models/acme/tiny", method: .get).status == .unauthorized)
            #expect(try await client.execute(uri: "/metrics", method: .get).status == .unauthorized)
            // Without the token nothing says which paths or methods exist.
            #expect(try await client.execute(uri: "/api/nothing", method: .get).status == .unauthorized)
            #expect(try await client.execute(uri: "/api/models/acme/tiny", method: .delete).status == .unauthorized)
            let bearer: HTTPFields = [.authorization: "Bearer s3cret"]
            #expect(
                try await client.execute(uri: "/api/models/acme/tiny", method: .get, headers: bearer).status == .ok)
            let bad = try await client.execute(uri: "/api/models/acme/..", method: .get, headers: bearer)
            #expect(bad.status == .badRequest, "\(Self.text(bad))")
        }
    }
}
