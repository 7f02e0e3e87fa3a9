import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ModelDepotScreens
import NIOCore
import Testing

@testable import ModelDepotWeb

/// The web app's routing, through Hummingbird's router without a socket (HummingbirdTesting): the OpenAPI document
/// against the routes the router really has, 405 with `Allow` for a method a path does not take, body limits per
/// route, and the guard in front of all of it.
@Suite struct WebRoutingTests {
    /// The router of an app over `fixture`, and its session cookie. HummingbirdTesting's requests name `localhost`
    /// without a port, on a channel without an address: both count as port 80.
    static func withRouter(
        _ body: @Sendable (Router<WebRequestContext>, _ cookie: String, _ fixture: ScreensFixture) async throws -> Void
    ) async throws {
        try await ScreensFixture.with { fixture in
            var app = WebApp(downloads: fixture.downloads)
            app.transcribe = TranscribePlayground(transcriber: PlaygroundTests.FixedTranscriber(), source: "test")
            let router = app.makeRouter(host: "localhost", pages: try await UIPages.load())
            let cookie = try #require(app.session.exchange(app.session.launchToken))
            try await body(router, "\(UISession.cookieName(port: 80))=\(cookie)", fixture)
        }
    }

    static func headers(_ cookie: String, json: Bool = false) -> HTTPFields {
        var fields: HTTPFields = [.cookie: cookie]
        if json { fields[.contentType] = "application/json" }
        return fields
    }

    /// Every `/api/ui` route the router has is in the OpenAPI document, and the document has no other; each
    /// answers its documented method (not 404, not 405), with JSON.
    @Test func theDocumentListsExactlyTheRoutersRoutes() async throws {
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: WebAppTests.documentURL)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let documented = Set(paths.flatMap { path, operations in operations.keys.map { "\($0) \(path)" } })
        try await Self.withRouter { router, cookie, _ in
            let routed = Set(
                router.routes.filter { $0.path.description.hasPrefix("/api/ui") && $0.method != .head }.map {
                    "\($0.method.rawValue.lowercased()) \(Self.template($0.path))"
                })
            #expect(
                documented == routed,
                "only documented: \(documented.subtracting(routed)); only routed: \(routed.subtracting(documented))")
            let app = Application(router: router)
            try await app.test(.router) { client in
                for operation in documented.sorted() where !operation.hasSuffix("/events") {
                    let parts = operation.split(separator: " ", maxSplits: 1).map(String.init)
                    // A model the catalog does not have: a change to it is refused without doing anything.
                    let path = parts[1].replacingOccurrences(of: "{name}", with: "nope")
                        .replacingOccurrences(of: "{kind}", with: "chat")
                    let method = HTTPRequest.Method(parts[0].uppercased())!
                    let reply = try await client.execute(
                        uri: path, method: method, headers: Self.headers(cookie, json: method != .get),
                        body: method == .get ? nil : ByteBuffer(string: "{}"))
                    #expect(![404, 405].contains(reply.status.code) || path.contains("nope"), "\(operation)")
                    #expect(reply.status.code != 405, "\(operation)")
                    #expect(reply.headers[.contentType]?.hasPrefix("application/json") == true, "\(operation)")
                }
            }
        }
    }

    /// A path that exists asked with another method is 405 naming the methods it takes (the router alone answers
    /// 404); a path that does not exist is 404; a body over its route's limit is 413 with the connection closed,
    /// and the limit is the route's (a recording to transcribe may be far larger than a change).
    @Test func methodsAndBodyLimitsAreTheRoutes() async throws {
        try await Self.withRouter { router, cookie, _ in
            try await Application(router: router).test(.router) { client in
                let get = try await client.execute(
                    uri: "/api/ui/models/embed/download", method: .get, headers: Self.headers(cookie))
                #expect(get.status == .methodNotAllowed && get.headers[.allow] == "POST")
                let delete = try await client.execute(
                    uri: "/api/ui/models", method: .delete, headers: Self.headers(cookie, json: true))
                #expect(delete.status == .methodNotAllowed && delete.headers[.allow] == "GET, HEAD")
                let page = try await client.execute(
                    uri: "/storage", method: .post, headers: Self.headers(cookie, json: true))
                #expect(page.status == .methodNotAllowed)
                let nowhere = try await client.execute(
                    uri: "/api/ui/nowhere", method: .get, headers: Self.headers(cookie))
                #expect(nowhere.status == .notFound && String(buffer: nowhere.body).contains("No such API route"))
                let missingPage = try await client.execute(uri: "/nowhere", method: .get, headers: Self.headers(cookie))
                #expect(
                    missingPage.status == .notFound && missingPage.headers[.contentType]?.hasPrefix("text/html") == true
                )

                let large = ByteBuffer(repeating: UInt8(ascii: " "), count: UIEndpoints.bodyLimit + 1)
                let tooLarge = try await client.execute(
                    uri: "/api/ui/bandwidth", method: .put, headers: Self.headers(cookie, json: true), body: large)
                #expect(tooLarge.status == .contentTooLarge && tooLarge.headers[.connection] == "close")
                // The same body is within the transcribe route's limit: it is read, and refused as not JSON it wants.
                let recording = try await client.execute(
                    uri: "/api/ui/transcribe", method: .post, headers: Self.headers(cookie, json: true), body: large)
                #expect(recording.status == .badRequest, "\(String(buffer: recording.body))")
            }
        }
    }

    /// The guard answers before routing, body or method: no session, a change from another site (another `Host`
    /// is WebAppTests', over a socket: a test request always names `localhost`).
    @Test func theGuardComesFirst() async throws {
        try await Self.withRouter { router, cookie, fixture in
            try await Application(router: router).test(.router) { client in
                let anonymous = try await client.execute(
                    uri: "/api/ui/nowhere", method: .delete)
                #expect(anonymous.status == .unauthorized)
                var crossSite = Self.headers(cookie, json: true)
                crossSite[HTTPField.Name("Sec-Fetch-Site")!] = "cross-site"
                let change = try await client.execute(
                    uri: "/api/ui/models/embed/download", method: .post, headers: crossSite,
                    body: ByteBuffer(string: "{}"))
                #expect(change.status == .forbidden && change.headers[.connection] == "close")
                #expect(await fixture.downloads.manager.downloads.isEmpty, "a refused change started a download")
            }
        }
    }

    /// `/api/ui/models/{name}` as the document writes a router path (`:name` → `{name}`).
    static func template(_ path: RouterPath) -> String {
        path.description.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix(":") ? "{\(segment.dropFirst())}" : String(segment)
        }.joined(separator: "/")
    }
}
