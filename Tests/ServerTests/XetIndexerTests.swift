import Foundation
import ModelDepotServer
import ModelDepotTesting
import Testing

/// `serve --xet` indexes what it serves before anyone asks, and again after a file changes: the first request for
/// a file (and the first after an edit) already carries the file's Xet hash. Only listings are read while waiting,
/// and a listing never starts a build.
@Suite struct XetIndexerTests {
    static func listedXetHash(_ mirror: MirrorFixture, _ name: String) async -> String? {
        let listing = (try? await mirror.get("/api/models/acme/xet/tree/main"))?.json as? [[String: Any]]
        return listing?.first { $0["path"] as? String == name }?["xetHash"] as? String
    }

    @Test func filesAreIndexedBeforeAnyoneAsksAndAgainAfterAChange() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-xet-indexer")
        defer { root.remove() }
        try root.write([
            "acme/xet/weights.bin": SampleData.bytes(count: 300_000, seed: 81),
            "acme/xet/config.json": Array("{\"a\": 1}".utf8),
        ])
        var server = MirrorFixture.xetMirror(root)
        server.xetIndexInterval = .milliseconds(200)
        try await MirrorFixture.serving(server, root: root) { mirror in
            let indexed = await waitUntil(timeout: .seconds(60)) {
                await Self.listedXetHash(mirror, "weights.bin") != nil
            }
            try #require(indexed, "weights.bin was never indexed without being asked for")
            let before = await Self.listedXetHash(mirror, "weights.bin")
            let first = try await mirror.get("/acme/xet/resolve/main/weights.bin", method: "HEAD")
            #expect(first.header("X-Xet-Hash") == before, "the first request finds the index ready")

            try Data(SampleData.bytes(count: 300_000, seed: 82)).write(to: root.path("acme/xet/weights.bin"))
            let reindexed = await waitUntil(timeout: .seconds(60)) {
                let now = await Self.listedXetHash(mirror, "weights.bin")
                return now != nil && now != before
            }
            try #require(reindexed, "the changed file was never indexed again without being asked for")
            let after = await Self.listedXetHash(mirror, "weights.bin")
            let changed = try await mirror.get("/acme/xet/resolve/main/weights.bin", method: "HEAD")
            #expect(changed.header("X-Xet-Hash") == after, "the first request after the change finds its new index")
            let metrics = String(decoding: try await mirror.get("/metrics").body, as: UTF8.self)
            #expect(metrics.contains("modeldepot_xet_files{state=\"indexed\"}"), "\(metrics)")
        }
    }
}
