import Foundation
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import Testing

/// Links are judged by where they really lead: a repository, an organization or a file served by the mirror
/// is always a visible entry inside the root.
@Suite struct MirrorLinkTests {
    static let layout: [String: [UInt8]] = [
        "acme/tiny/config.json": Array("{}".utf8),
        "acme/tiny/.git/config": Array("[remote] url = https://user:gittoken@example.invalid/x".utf8),
        "acme/tiny/.env": Array("API_KEY=envsecret".utf8),
        "acme/tiny/weights/part.bin": Array("weights".utf8),
        "acme/other/readme.md": Array("# other".utf8),
        "README.md": Array("root readme".utf8),
    ]

    @Test func linkedRepositoryAndOrganizationFoldersOutsideTheRootAreNotServed() async throws {
        let outside = try TemporaryDirectory()
        defer { outside.remove() }
        try FileManager.default.createDirectory(at: outside.path("repo"), withIntermediateDirectories: true)
        try Data("outside secret".utf8).write(to: outside.path("repo/secret.txt"))
        try FileManager.default.createDirectory(at: outside.path("org/leak"), withIntermediateDirectories: true)
        try Data("outside secret".utf8).write(to: outside.path("org/leak/secret.txt"))
        try await MirrorFixture.with(Self.layout) { mirror in
            try FileManager.default.createSymbolicLink(
                at: mirror.root.path("acme/evilrepo"), withDestinationURL: outside.path("repo"))
            try FileManager.default.createSymbolicLink(
                at: mirror.root.path("linkorg"), withDestinationURL: outside.path("org"))
            // A link to a folder inside the root stays servable.
            try FileManager.default.createSymbolicLink(
                atPath: mirror.root.path("acme/alias").path, withDestinationPath: "other")

            let listing = try #require(try await mirror.get("/api/models").json as? [[String: Any]])
            let ids = listing.compactMap { $0["id"] as? String }.sorted()
            #expect(ids == ["acme/alias", "acme/other", "acme/tiny"])
            for path in [
                "/api/models/acme/evilrepo", "/acme/evilrepo/resolve/main/secret.txt",
                "/api/models/linkorg/leak", "/linkorg/leak/resolve/main/secret.txt",
            ] {
                let reply = try await mirror.get(path)
                #expect(reply.status == 404, "\(path)")
                #expect(!String(decoding: reply.body, as: UTF8.self).contains("outside secret"), "\(path)")
            }
            let alias = try await mirror.get("/acme/alias/resolve/main/readme.md")
            #expect(alias.status == 200 && alias.body == Array("# other".utf8))
        }
    }

    /// A request for a repository nobody has is a plain 404; only a link whose target is gone is worth a
    /// warning in the log (every such request once logged "a dangling link?").
    @Test func onlyRealDanglingLinksAreLogged() async throws {
        let log = RecordedLog()
        try await MirrorFixture.with(Self.layout, logger: log.logger) { mirror in
            try FileManager.default.createSymbolicLink(
                atPath: mirror.root.path("acme/gone").path, withDestinationPath: "/nonexistent/modeldepot/target")
            for path in ["/api/models/acme/nope", "/acme/nope/resolve/main/x.bin", "/api/models/nobody/nothing"] {
                #expect(try await mirror.get(path).status == 404, "\(path)")
            }
            #expect(try await mirror.get("/acme/tiny/resolve/main/missing.bin").status == 404)
            let warnings = { log.messages.filter { $0.hasPrefix("not serving") } }
            #expect(warnings().isEmpty, "\(warnings())")
            #expect(try await mirror.get("/api/models/acme/gone").status == 404)
            #expect(
                warnings().count == 1 && warnings().first?.contains("is a link to nothing") == true, "\(warnings())")
        }
    }

    @Test func linksToHiddenFilesOrOutsideARepositoryAreNotServed() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let links = [
                "gitcfg.txt": ".git/config", "env.txt": ".env", "index.json": "../../.modeldepot/hash-index.json",
                "gitdir": ".git", "rootreadme.md": "../../README.md", "loop": ".",
                "part.bin": "weights/part.bin",
            ]
            // The state folder exists once the mirror has hashed something.
            _ = try await mirror.get("/api/models/acme/tiny")
            for (name, target) in links {
                try FileManager.default.createSymbolicLink(
                    atPath: mirror.root.path("acme/tiny/\(name)").path, withDestinationPath: target)
            }
            let info = try #require(try await mirror.get("/api/models/acme/tiny").json as? [String: Any])
            let files = (info["siblings"] as? [[String: Any]])?.compactMap { $0["rfilename"] as? String }
            #expect(files == ["config.json", "part.bin", "weights/part.bin"])
            for name in ["gitcfg.txt", "env.txt", "index.json", "gitdir/config", "rootreadme.md", "loop/config.json"] {
                let reply = try await mirror.get("/acme/tiny/resolve/main/\(name)")
                #expect(reply.status == 404, "\(name)")
                let text = String(decoding: reply.body, as: UTF8.self)
                #expect(!text.contains("gittoken") && !text.contains("envsecret") && !text.contains("root readme"))
            }
            #expect(try await mirror.get("/acme/tiny/resolve/main/part.bin").body == Array("weights".utf8))
        }
    }

    @Test func aCacheRepositoryFolderLinkedFromOutsideIsNotServed() async throws {
        let cache = try TemporaryDirectory()
        let outside = try TemporaryDirectory()
        defer {
            cache.remove()
            outside.remove()
        }
        let commit = String(repeating: "a", count: 40)
        let foreign = outside.path("models--evil--repo")
        try FileManager.default.createDirectory(
            at: foreign.appendingPathComponent("snapshots/\(commit)"), withIntermediateDirectories: true)
        try Data("outside secret".utf8).write(to: foreign.appendingPathComponent("snapshots/\(commit)/secret.txt"))
        try FileManager.default.createSymbolicLink(
            at: cache.path("models--evil--repo"), withDestinationURL: foreign)
        let server = MirrorServer(roots: [], caches: [cache.url], stateFolder: cache.path(".state"))
        try await MirrorFixture.serving(server, root: cache) { mirror in
            #expect(try await mirror.get("/api/models/evil/repo").status == 404)
            #expect(try await mirror.get("/evil/repo/resolve/\(commit)/secret.txt").status == 404)
            let listing = try await mirror.get("/api/models").json as? [[String: Any]]
            #expect(listing?.isEmpty == true)
        }
    }
}
