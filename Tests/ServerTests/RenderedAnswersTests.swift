import Foundation
import Logging
import ModelDepot
import ModelDepotTesting
import Testing

@testable import ModelDepotServer

/// Answers rendered once per snapshot (info, one-page trees) follow the folder: with walks remembered (a settled
/// clock), a file added or changed shows in the next `/api/models` and tree answer.
@Suite struct RenderedAnswersTests {
    static let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    static func serving<T>(treePageSize: Int = 1000, _ body: (MirrorFixture) async throws -> T) async throws -> T {
        let root = try TemporaryDirectory(prefix: "modeldepot-mirror")
        defer { root.remove() }
        try FileManager.default.createDirectory(at: root.path("acme/tiny/sub"), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: root.path("acme/tiny/config.json"))
        try Data("one".utf8).write(to: root.path("acme/tiny/sub/one.txt"))
        let source = FolderRepositorySource(
            root: root.url, index: HashIndex(storePath: nil), logger: logger,
            wallClock: FolderWalkTests.anHourLater)
        let server = MirrorServer(
            sources: [source], metrics: MirrorMetrics(), token: nil, treePageSize: treePageSize, logger: logger)
        return try await MirrorFixture.serving(server, root: root, body)
    }

    static func names(_ reply: MirrorFixture.Reply, key: String) -> [String] {
        ((reply.json as? [[String: Any]]) ?? ((reply.json as? [String: Any])?["siblings"] as? [[String: Any]]) ?? [])
            .compactMap { $0[key] as? String }
    }

    @Test func infoAndTreeShowAFileAddedOrChangedInTheNextAnswer() async throws {
        try await Self.serving { mirror in
            let info = try await mirror.get("/api/models/acme/tiny")
            #expect(Self.names(info, key: "rfilename") == ["config.json", "sub/one.txt"])
            #expect(try await mirror.get("/api/models/acme/tiny").body == info.body, "the same answer again")
            let tree = try await mirror.get("/api/models/acme/tiny/tree/main")
            #expect(Self.names(tree, key: "path") == ["sub", "config.json"])
            #expect(tree.header("X-Total-Count") == "2")

            try await FolderWalkTests.letTheFileSystemClockTick(mirror.root)
            try Data("new".utf8).write(to: mirror.root.path("acme/tiny/new.txt"))
            let added = try await mirror.get("/api/models/acme/tiny")
            #expect(Self.names(added, key: "rfilename") == ["config.json", "new.txt", "sub/one.txt"])
            #expect(
                (added.json as? [String: Any])?["sha"] as? String != (info.json as? [String: Any])?["sha"] as? String)
            let addedTree = try await mirror.get("/api/models/acme/tiny/tree/main")
            #expect(Self.names(addedTree, key: "path") == ["sub", "config.json", "new.txt"])
            #expect(addedTree.header("X-Total-Count") == "3")

            try await FolderWalkTests.letTheFileSystemClockTick(mirror.root)
            try Data("a longer one".utf8).write(to: mirror.root.path("acme/tiny/sub/one.txt"))
            let changed = try await mirror.get("/api/models/acme/tiny/tree/main/sub")
            let sizes = (changed.json as? [[String: Any]])?.compactMap { $0["size"] as? Int }
            #expect(sizes == [12])
            let blobs = try await mirror.get("/api/models/acme/tiny?blobs=true")
            let siblings = (blobs.json as? [String: Any])?["siblings"] as? [[String: Any]]
            #expect(siblings?.first { $0["rfilename"] as? String == "sub/one.txt" }?["size"] as? Int == 12)
            #expect(try await mirror.get("/api/models/acme/tiny/tree/main/missing").status == 404)
        }
    }

    @Test func aListingLongerThanAPageIsStillPaged() async throws {
        try await Self.serving(treePageSize: 1) { mirror in
            for _ in 0..<2 {
                let first = try await mirror.get("/api/models/acme/tiny/tree/main")
                #expect(Self.names(first, key: "path") == ["sub"])
                #expect(first.header("X-Total-Count") == "2")
                #expect(first.header("Link")?.contains("cursor=1") == true)
            }
        }
    }
}
