import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotTesting
import NIOCore
import NIOEmbedded
import Testing

@testable import ModelDepotServer

/// The fast path (``HubFastPath``) answers exactly as the router does: every path of a small alphabet, and the
/// shapes it must leave to the router, sent to a mirror with and without the fast path in front, give the same
/// status, headers and body — with and without a token, and with a foreign `Host`.
@Suite struct HubFastPathTests {
    /// Every path of one to `length` segments over `alphabet`.
    static func paths(over alphabet: [String], upTo length: Int) -> [String] {
        var all: [String] = []
        var last = [""]
        for _ in 0..<length {
            last = last.flatMap { prefix in alphabet.map { prefix + "/" + $0 } }
            all += last
        }
        return all
    }

    /// Paths the fast path reads, and paths beside them it must leave to the router.
    static let chosen = [
        "/acme/tiny/resolve/main/config.json", "/acme/tiny/resolve/main/sub/dir/a.txt",
        "/acme/tiny/resolve/main/sub%2Fdir%2Fa.txt", "/acme/tiny/resolve/main/sub/dir/", "/acme//tiny/resolve/main/x",
        "/acme/tiny/resolve/main//config.json", "/acme/tiny/resolve/main/../config.json",
        "/acme/tiny/resolve/main/./config.json", "/acme/tiny/resolve/main/sub/../config.json",
        "/acme/tiny/resolve/refs%2Fpr%2F1/config.json", "/acme/tiny/resolve/nope/config.json",
        "/acme/tiny/resolve/0123456789abcdef0123456789abcdef01234567/config.json",
        "/ui/tiny/resolve/main/config.json", "/metrics/x/resolve/main/f.txt", "/healthz/x/resolve/main/f.txt",
        "/acme/resolve/resolve/main/f.txt", "/acme/resolve/main/f.txt", "/datasets/acme/tiny/resolve/main/config.json",
        "/api/models/acme/tiny/resolve/main/config.json", "/v2/acme/tiny/resolve/main/x", "/xet/acme/resolve/main/x",
        "/-acme/tiny/resolve/main/config.json", "/acme/.git/resolve/main/config.json",
        "/acme/tiny/resolve/main/.git/config", "/ACME/tiny/resolve/main/config.json",
        "/a%63me/tiny/resolve/main/config.json",
        "/api/models/acme/tiny", "/api/models/acme/tree", "/api/models/acme/refs", "/api/models/acme/..",
        "/api/models/acme/tiny/", "/api/models/acme%2Ftiny", "/api/datasets/acme/tiny", "/api/spaces/acme/tiny",
        "/api/models/acme/resolve", "/api/models/ui/tiny", "/api/models/acme/xet-read-token",
        "/api/datasets/acme/xet-write-token", "/api/models/acme/bom", "/api/models/acme/paths-info",
        "/acme/tiny/resolve/main/\u{301}config.json", "/acme/tiny/resolve/main/é.json", "/acme/tiny/resolve/mäin/x",
        "/acme/tiny/resolve/main/a;b", "/acme/tiny/resolve/main/a\\b", "/acme/tiny/resolve/main/config.json?x=1",
        "/api/whoami-v2", "/api/models/gpt2/revision/main",
        "/acme/tiny/resolve/main/" + String(repeating: "a", count: 200),
        "/healthz", "/healthz/", "/healthz/x", "/Healthz", "//healthz", "/healthz?probe=1", "/healthz%20",
    ]

    /// Two mirrors over the same files, one answering through the fast path (as `serve` does) and one through the
    /// router alone.
    static func withBoth(
        token: String? = nil,
        _ body: @Sendable (_ fast: any TestClientProtocol, _ router: any TestClientProtocol) async throws -> Void
    ) async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-fastpath")
        defer { root.remove() }
        var layout = HubRouterTests.layout
        layout["acme/tiny/" + String(repeating: "a", count: 200)] = "long\n"
        layout["resolve/tiny/config.json"] = "{}"
        layout["api/models/config.json"] = "{}"
        try root.write(layout.mapValues { Array($0.utf8) })
        let server = mirror(root: root, token: token)
        // Not vacuous: the mirror's routes leave the fast path on, and it reads many of the paths itself.
        let fastPath = try #require(server.makeResponder().fastPath)
        #expect(Self.paths(over: alphabet, upTo: 5).count { fastPath.route(.get, $0) != nil } > 500)
        #expect(Self.chosen.count { fastPath.route(.get, $0) != nil } > 10)
        #expect(fastPath.route(.get, "/healthz") == .health)
        try await Application(responder: server.makeResponder()).test(.router) { fast in
            try await Application(router: server.makeRouter()).test(.router) { router in
                try await body(fast, router)
            }
        }
    }

    static func mirror(root: TemporaryDirectory, token: String?) -> MirrorServer {
        var server = MirrorServer(root: root.url, token: token, logger: PullThroughTests.quiet)
        server.sendsFilesWithSendfile = false
        server.mount("/ui") { group in group.get("") { _, _ in "dashboard" } }
        // Mounted as `serve --xet` mounts its CAS (its index, built in the background, would make answers differ
        // by when they were asked).
        server.mount("/xet") { group in group.get("/v1/xorbs") { _, _ in "xorbs" } }
        return server
    }

    /// A response's fields but its date.
    static func comparable(_ fields: HTTPFields) -> [String] {
        fields.filter { $0.name != .date }.map { "\($0.name): \($0.value)" }
    }

    static func expectSame(
        _ path: String, _ method: HTTPRequest.Method, headers: HTTPFields = [:], _ fast: any TestClientProtocol,
        _ router: any TestClientProtocol
    ) async throws {
        let one = try await fast.execute(uri: path, method: method, headers: headers)
        let other = try await router.execute(uri: path, method: method, headers: headers)
        #expect(one.status == other.status, "\(method) \(path)")
        #expect(comparable(one.headers) == comparable(other.headers), "\(method) \(path)")
        #expect(
            one.body == other.body, "\(method) \(path): \(String(buffer: one.body)) / \(String(buffer: other.body))")
    }

    static let alphabet = ["acme", "tiny", "resolve", "main", "api", "models", "config.json"]

    @Test func everyPathOfASmallAlphabetIsAnsweredAsTheRouterAnswersIt() async throws {
        let paths = Self.paths(over: Self.alphabet, upTo: 5)
        try await Self.withBoth { fast, router in
            for path in paths {
                try await Self.expectSame(path, .get, fast, router)
            }
        }
    }

    @Test func theShapesAroundTheFastPathAreAnsweredAsTheRouterAnswersThem() async throws {
        try await Self.withBoth { fast, router in
            for path in Self.chosen {
                for method in [HTTPRequest.Method.get, .head, .post] {
                    try await Self.expectSame(path, method, fast, router)
                }
            }
        }
    }

    /// A context for calling a responder directly, on a channel with no address.
    static func embeddedContext() -> MirrorRequestContext {
        MirrorRequestContext(
            source: ApplicationRequestContextSource(channel: EmbeddedChannel(), logger: PullThroughTests.quiet))
    }

    /// A GET of `path` naming `host`, for a responder called directly.
    static func request(_ path: String, host: String) -> Request {
        Request(
            head: HTTPRequest(method: .get, scheme: "http", authority: host, path: path),
            body: RequestBody(buffer: ByteBuffer()))
    }

    /// A foreign `Host` (a page that rebinds its name to the mirror) is refused on the fast path as behind the
    /// router: the test client always says `localhost`, so these requests go to the responders directly.
    @Test func aForeignHostIsRefusedOnTheFastPathAsBehindTheRouter() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-fastpath-host")
        defer { root.remove() }
        try root.write(HubRouterTests.layout.mapValues { Array($0.utf8) })
        let server = Self.mirror(root: root, token: nil)
        let fast = server.makeResponder()
        let router = server.makeRouter().buildResponder()
        let context = Self.embeddedContext()
        for path in Self.chosen {
            for host in ["evil.example", "evil.example:8080", "localhost", "127.0.0.1:8080"] {
                let one = try await fast.respond(to: Self.request(path, host: host), context: context)
                let other = try await router.respond(to: Self.request(path, host: host), context: context)
                #expect(one.status == other.status, "\(host) \(path)")
                #expect(Self.comparable(one.headers) == Self.comparable(other.headers), "\(host) \(path)")
                // `/healthz` answers load balancers by any name; the router's trie skips empty segments.
                if host.hasPrefix("evil") {
                    let open = ["/healthz", "/healthz/", "//healthz", "/healthz?probe=1"].contains(path)
                    #expect(one.status.code == (open ? 200 : 421), "\(host) \(path)")
                }
            }
        }
    }

    /// The fast path's answers pass through the access log as the router's do: the dashboard counts the client.
    @Test func theFastPathsAnswersAreCountedAsTheRoutersAre() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-fastpath-log")
        defer { root.remove() }
        try root.write(HubRouterTests.layout.mapValues { Array($0.utf8) })
        let server = Self.mirror(root: root, token: nil)
        let fast = server.makeResponder()
        let context = Self.embeddedContext()
        for path in ["/healthz", "/api/models/acme/tiny", "/acme/tiny/resolve/main/config.json"] {
            #expect(fast.fastPath?.route(.get, path) != nil, "\(path)")
            _ = try await fast.respond(to: Self.request(path, host: "localhost"), context: context)
        }
        // An embedded channel has no address.
        #expect(server.clients.all["unknown"]?.requests == 3)
    }

    @Test func withATokenTheFastPathRefusesAsTheRouterDoes() async throws {
        try await Self.withBoth(token: "s3cret") { fast, router in
            for path in Self.chosen {
                for headers: HTTPFields in [[:], [.authorization: "Bearer s3cret"], [.authorization: "Bearer s3cre"]] {
                    try await Self.expectSame(path, .get, headers: headers, fast, router)
                    try await Self.expectSame(path, .head, headers: headers, fast, router)
                }
            }
        }
    }

    /// What the fast path reads itself, and what it leaves to the router.
    @Test func theFastPathReadsOnlyThePlainShapes() throws {
        let path = try #require(
            HubFastPath(routes: [
                "/:a", "/api/models/:a/:b", "/api/datasets/:a/:b", "/api/models/:a/xet-read-token/:r",
                "/:a/:b/resolve/:r/**", "/:a/resolve/:r/**", "/ui/x",
            ]))
        #expect(
            path.route(.get, "/acme/tiny/resolve/main/sub/a.txt")
                == .resolve(owner: "acme", name: "tiny", revision: "main", path: "sub/a.txt"))
        #expect(path.route(.head, "/api/datasets/acme/tiny") == .info(.dataset, owner: "acme", name: "tiny"))
        #expect(path.route(.get, "/healthz") == nil, "the router has no /healthz")
        let withHealth = try #require(HubFastPath(routes: ["/healthz", "/:a/:b/resolve/:r/**"]))
        #expect(withHealth.route(.get, "/healthz") == .health)
        #expect(withHealth.route(.head, "/healthz") == .health)
        #expect(withHealth.route(.post, "/healthz") == nil)
        for refused in [
            "/acme/tiny/resolve/main", "/acme/tiny/resolve/main/", "/acme/tiny/resolve/main/a%20b",
            "/acme//tiny/resolve/main/a", "/ui/tiny/resolve/main/a", "/api/tiny/resolve/main/a",
            "/acme/resolve/resolve/main/a", "/acme/tiny/tree/main/a", "/api/models/acme/tiny/refs",
            "/api/other/acme/tiny", "acme/tiny/resolve/main/a", "", "/api/models/acme/xet-read-token",
            "/api/spaces/acme/tiny", "/acme/tiny/resolve/main/\u{301}a", "/acme/tiny/resolve/main/é",
        ] {
            #expect(path.route(.get, refused) == nil, "\(refused)")
        }
        #expect(path.route(.post, "/acme/tiny/resolve/main/a") == nil)
        #expect(path.route(.delete, "/api/models/acme/tiny") == nil)
        // A route whose first or second segment is a wildcard turns the fast path off.
        #expect(HubFastPath(routes: ["/*/x"]) == nil)
        #expect(HubFastPath(routes: ["/:a/**"]) == nil)
        #expect(HubFastPath(routes: ["/:a/{b}.json"]) == nil)
        // Another route under two captures: resolves go to the router.
        let other = try #require(HubFastPath(routes: ["/:a/:b/resolve/:r/**", "/:a/:b/tree/:r"]))
        #expect(other.route(.get, "/acme/tiny/resolve/main/a") == nil)
    }
}
