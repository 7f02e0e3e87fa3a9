import Foundation
import Logging
import ModelDepot
import ModelDepotPlatform
import ModelDepotServer
import ModelDepotTesting
import Testing

@testable import ModelDepotServer

/// `GET /api/{type}s/{repo}/bom/{revision}` (issue 66): a cached revision's bill of materials from the mirror,
/// made from the bytes on its disk; never a word about a file outside the repository.
@Suite struct MirrorBillOfMaterialsTests {
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    static func files(_ reply: MirrorFixture.Reply) throws -> [String: [String: Any]] {
        let document = try #require(reply.json as? [String: Any])
        let model = try #require((document["components"] as? [[String: Any]])?.first)
        var files: [String: [String: Any]] = [:]
        for file in (model["components"] as? [[String: Any]]) ?? [] { files[file["name"] as! String] = file }
        return files
    }

    /// The reference validator (cyclonedx-python-lib, strict, schema 1.6) accepts `bill`, when the trust venv is
    /// there (`scripts/test` installs it; the CLI tests require it).
    static func expectValid(_ bill: [UInt8]) async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let python = root.appendingPathComponent(".venv-signing/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else { return }
        let folder = try TemporaryDirectory(prefix: "modeldepot-mirror-bom")
        defer { folder.remove() }
        let file = folder.path("bill.cdx.json")
        try Data(bill).write(to: file)
        let output = folder.path("verdict.txt")
        let check = try ChildProcess(
            executable: python.path,
            arguments: [root.appendingPathComponent("Tests/PythonPeers/bom_peer.py").path, "validate", file.path],
            output: output.path)
        await check.waitForExit()
        #expect(check.succeeded, "\((try? String(contentsOf: output, encoding: .utf8)) ?? "")")
    }

    static func verification(_ file: [String: Any]?) -> String? {
        ((file?["properties"] as? [[String: String]]) ?? []).first { $0["name"] == "modeldepot:verification" }?[
            "value"]
    }

    @Test func aCachedRevisionsBillIsServedAndALinkOutOfTheRepositoryIsNeverRead() async throws {
        let cache = try CacheMirrorTests.makeCache()
        defer { cache.remove() }
        // A chain of 25 links to a file elsewhere: Foundation's resolver stops after 20 and hands the path back
        // unresolved (inside the snapshot), while the kernel follows 40. It must be judged as the kernel resolves it.
        let elsewhere = try TemporaryDirectory(prefix: "modeldepot-bom-elsewhere")
        defer { elsewhere.remove() }
        let secret = Array("a file outside the repository\n".utf8)
        try elsewhere.write(["secret.txt": secret])
        var previous = elsewhere.path("secret.txt").path
        for index in 1...25 {
            let link = elsewhere.path("link-\(index)").path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: previous)
            previous = link
        }
        try FileManager.default.createSymbolicLink(
            atPath: cache.path("models--acme--cached/snapshots/\(CacheMirrorTests.commit)/long").path,
            withDestinationPath: previous)
        let server = MirrorServer(roots: [], caches: [cache.url], stateFolder: cache.path(".state"), logger: Self.quiet)
        try await MirrorFixture.serving(server, root: cache) { mirror in
            let reply = try await mirror.get("/api/models/acme/cached/bom/v1.0")
            #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
            #expect(reply.header("Content-Type") == "application/vnd.cyclonedx+json; version=1.6")
            try await Self.expectValid(reply.body)
            let files = try Self.files(reply)
            #expect(
                (files["model.gguf"]?["hashes"] as? [[String: String]])?.first?["content"]
                    == SampleData.sha256(CacheMirrorTests.weights))
            #expect(Self.verification(files["model.gguf"])?.hasPrefix("verified") == true)
            #expect(Self.verification(files["sub/config.json"])?.hasPrefix("verified: git blob id") == true)
            // The snapshot's link to /etc/hostname: named as failed, its bytes never read.
            #expect(Self.verification(files["escape"]) == "FAILED: its link leads outside the repository; not read")
            #expect(files["escape"]?["hashes"] == nil)
            #expect(Self.verification(files["long"]) == "FAILED: its link leads outside the repository; not read")
            #expect(!String(decoding: reply.body, as: UTF8.self).contains(SampleData.sha256(secret)))
            let outside = try Data(contentsOf: URL(fileURLWithPath: "/etc/hostname"))
            #expect(!String(decoding: reply.body, as: UTF8.self).contains(SampleData.sha256(Array(outside))))

            // A HEAD would hash the model for nothing: not offered. An unknown revision or repository: 404.
            #expect(try await mirror.get("/api/models/acme/cached/bom/v1.0", method: "HEAD").status == 405)
            #expect(try await mirror.get("/api/models/acme/cached/bom/v9").status == 404)
            #expect(try await mirror.get("/api/models/acme/none/bom/main").status == 404)

            // A blob changed on the mirror's disk: the next bill says so.
            let blob = cache.path("models--acme--cached/blobs/\(SampleData.sha256(CacheMirrorTests.weights))")
            var bytes = try Data(contentsOf: blob)
            bytes[0] ^= 1
            try bytes.write(to: blob)
            let changed = try Self.files(try await mirror.get("/api/models/acme/cached/bom/main"))
            #expect(Self.verification(changed["model.gguf"])?.hasPrefix("FAILED: the bytes hash to") == true)
        }
    }

    /// A snapshot folder or `blobs` that is a link: bounds taken after resolving it would move with it, so the bill
    /// is refused and nothing behind the link is read.
    @Test func aRepositoryWhoseFoldersAreLinksHasNoBill() async throws {
        for linked in ["snapshots/\(CacheMirrorTests.commit)", "blobs"] {
            let cache = try CacheMirrorTests.makeCache()
            defer { cache.remove() }
            let elsewhere = try TemporaryDirectory(prefix: "modeldepot-bom-elsewhere")
            defer { elsewhere.remove() }
            let secret = Array("not the repository's\n".utf8)
            try elsewhere.write(["model.gguf": secret, "sub/config.json": secret, "secret.txt": secret])
            let folder = cache.path("models--acme--cached/\(linked)")
            try FileManager.default.moveItem(at: folder, to: cache.path("moved"))
            try FileManager.default.createSymbolicLink(at: folder, withDestinationURL: elsewhere.url)
            let server = MirrorServer(
                roots: [], caches: [cache.url], stateFolder: cache.path(".state"), logger: Self.quiet)
            try await MirrorFixture.serving(server, root: cache) { mirror in
                let reply = try await mirror.get("/api/models/acme/cached/bom/main")
                let text = String(decoding: reply.body, as: UTF8.self)
                #expect(reply.status != 200 && text.contains("is a link"), "\(linked): \(reply.status) \(text)")
                #expect(!text.contains(SampleData.sha256(secret)))
            }
        }
    }

    /// With a folder and a cache served together, the repository in the cache has its bill; the folder's has none.
    @Test func aMirrorOfFoldersAndACacheBillsTheCachedRepositories() async throws {
        let cache = try CacheMirrorTests.makeCache()
        defer { cache.remove() }
        try cache.write(["folder/acme/plain/config.json": Array("{}".utf8)])
        let server = MirrorServer(
            roots: [cache.path("folder")], caches: [cache.url], stateFolder: cache.path(".state"), logger: Self.quiet)
        try await MirrorFixture.serving(server, root: cache) { mirror in
            let cached = try await mirror.get("/api/models/acme/cached/bom/main")
            let plain = try await mirror.get("/api/models/acme/plain/bom/main")
            #expect(cached.status == 200 && plain.status == 404)
        }
    }

    @Test func aFolderMirrorHasNoBillAndOneBillIsMadeAtATime() async throws {
        let root = try TemporaryDirectory(prefix: "modeldepot-bom-folder")
        defer { root.remove() }
        try root.write(["acme/plain/config.json": Array("{}".utf8)])
        try await MirrorFixture.serving(MirrorServer(root: root.url, logger: Self.quiet), root: root) { mirror in
            let reply = try await mirror.get("/api/models/acme/plain/bom/main")
            #expect(reply.status == 404 && String(decoding: reply.body, as: UTF8.self).contains("not from a Hub cache"))
        }
        let gate = BillOfMaterialsGate()
        #expect(gate.tryEnter())
        #expect(!gate.tryEnter())
        gate.leave()
        #expect(gate.tryEnter())
    }
}
