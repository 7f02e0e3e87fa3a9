import Foundation
import ModelDepotTesting
import Testing

@testable import ModelDepotServer

/// A pull-through mirror in front of upstreams that are not the Hub itself (other mirrors, olah): search reaches
/// the upstream, and a hub without `/commits` still gets expanded listings through.
@Suite struct ForeignUpstreamTests {
    static let layout: [String: [UInt8]] = [
        "acme/tiny/config.json": Array(#"{"a": 1}"#.utf8), "acme/other/config.json": Array(#"{"b": 2}"#.utf8),
        "zeta/far/config.json": Array(#"{"c": 3}"#.utf8),
    ]

    @Test func searchIsPassedToTheUpstreamAndKeptBriefly() async throws {
        try await PullThroughTests.withMirror(Self.layout, upstreamRate: nil) { upstream, mirror, _ in
            // Nothing is cached yet: the answer is the upstream's.
            let found = try #require(
                try await PullThroughTests.get(mirror.url("/api/models?search=acme")).json as? [[String: Any]])
            #expect(Set(found.compactMap { $0["id"] as? String }) == ["acme/tiny", "acme/other"], "\(found)")
            let byAuthor = try #require(
                try await PullThroughTests.get(mirror.url("/api/models?author=zeta")).json as? [[String: Any]])
            #expect(byAuthor.compactMap { $0["id"] as? String } == ["zeta/far"])
            // A client's limit is clamped (a negative one crashed the mirror when the upstream answered).
            let negative = try await PullThroughTests.get(mirror.url("/api/models?search=acme&limit=-1"))
            #expect(negative.status == 200 && (negative.json as? [Any])?.count == 1)
            let asked = "modeldepot_requests_total{code=\"200\"}"
            let before = try await PullThroughTests.metric(asked, of: upstream)
            _ = try await PullThroughTests.get(mirror.url("/api/models?search=acme"))
            // Only the metrics request itself: the repeated search was answered from what the mirror kept.
            #expect(try await PullThroughTests.metric(asked, of: upstream) == before + 1)
        }
    }

    @Test func anExpandedListingFromAHubWithoutCommitsDropsLastCommit() async throws {
        let commit = String(repeating: "c", count: 40)
        let upstream = try await ScriptedHTTPServer.start(replies: [
            .json(#"{"id": "acme/tiny", "sha": "\#(commit)"}"#),
            .json(
                #"[{"type": "file", "oid": "1111111111111111111111111111111111111111", "size": 8, "path": "config.json"}]"#
            ),
            .json(#"{"error": "Not Found"}"#, status: 404),
        ])
        let folder = try TemporaryDirectory(prefix: "modeldepot-foreign")
        defer { folder.remove() }
        let server = try MirrorServer(
            upstream: Upstream(endpoint: upstream.baseURL), cache: folder.url, logger: PullThroughTests.quiet)
        let mirror = try await PullThroughTests.start(server)
        let reply = try await PullThroughTests.get(
            mirror.url("/api/models/acme/tiny/tree/main?recursive=true&expand=true"))
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        let entries = try #require(reply.json as? [[String: Any]])
        #expect(entries.map { $0["path"] as? String } == ["config.json"])
        #expect(entries.allSatisfy { $0["lastCommit"] == nil })
        try await mirror.stop()
        try await upstream.shutdown()
    }
}
