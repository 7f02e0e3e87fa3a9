import Foundation
import Logging
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import Testing

@Suite struct MirrorServerTests {
    static let weights = SampleData.bytes(count: 3 << 20, seed: 41)
    static let config = Array(#"{"architectures": ["Demo"]}"#.utf8)
    static let layout: [String: [UInt8]] = [
        "acme/tiny/model.gguf": weights,
        "acme/tiny/config.json": config,
        "acme/tiny/tokenizer/vocab.txt": Array("a\nb\n".utf8),
        "acme/tiny/.git/config": Array("secret".utf8),
        "other/thing/readme.md": Array("# hi".utf8),
    ]

    @Test func infoListsTheFilesWithADeterministicCommit() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let reply = try await mirror.get("/api/models/acme/tiny")
            #expect(reply.status == 200)
            let info = try #require(reply.json as? [String: Any])
            #expect(info["id"] as? String == "acme/tiny")
            let sha = try #require(info["sha"] as? String)
            #expect(sha.count == 40)
            let siblings = (info["siblings"] as? [[String: Any]])?.compactMap { $0["rfilename"] as? String }
            #expect(siblings == ["config.json", "model.gguf", "tokenizer/vocab.txt"], "hidden files are never listed")
            // Same content, same id; by name or by commit.
            let again = try await mirror.get("/api/models/acme/tiny/revision/main").json as? [String: Any]
            #expect(again?["sha"] as? String == sha)
            let byCommit = try await mirror.get("/api/models/acme/tiny/revision/\(sha)")
            #expect(byCommit.status == 200)
        }
    }

    @Test func blobsTrueAddsSizesAndLFSData() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let info = try #require(try await mirror.get("/api/models/acme/tiny?blobs=true").json as? [String: Any])
            let siblings = try #require(info["siblings"] as? [[String: Any]])
            let gguf = try #require(siblings.first { $0["rfilename"] as? String == "model.gguf" })
            let lfs = try #require(gguf["lfs"] as? [String: Any])
            #expect(lfs["sha256"] as? String == SampleData.sha256(Self.weights))
            #expect(gguf["size"] as? Int == Self.weights.count)
            let config = try #require(siblings.first { $0["rfilename"] as? String == "config.json" })
            #expect(config["lfs"] == nil)
            #expect(config["blobId"] as? String == GitBlob.id(of: Self.config))
        }
    }

    @Test func errorsCarryTheHubsCodes() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let noRepo = try await mirror.get("/api/models/acme/missing")
            #expect(noRepo.status == 404 && noRepo.header("X-Error-Code") == "RepoNotFound")
            #expect((noRepo.json as? [String: Any])?["error"] is String)
            let noRevision = try await mirror.get("/api/models/acme/tiny/revision/v9")
            #expect(noRevision.status == 404 && noRevision.header("X-Error-Code") == "RevisionNotFound")
            let noFile = try await mirror.get("/acme/tiny/resolve/main/nope.bin", method: "HEAD")
            #expect(noFile.status == 404 && noFile.header("X-Error-Code") == "EntryNotFound")
            #expect(noFile.header("X-Repo-Commit")?.count == 40)
        }
    }

    @Test func treeListsFilesAndFolders() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let top = try #require(try await mirror.get("/api/models/acme/tiny/tree/main").json as? [[String: Any]])
            #expect(Set(top.compactMap { $0["path"] as? String }) == ["config.json", "model.gguf", "tokenizer"])
            #expect(top.first { $0["path"] as? String == "tokenizer" }?["type"] as? String == "directory")
            let gguf = try #require(top.first { $0["path"] as? String == "model.gguf" })
            #expect((gguf["lfs"] as? [String: Any])?["oid"] as? String == SampleData.sha256(Self.weights))
            let all = try #require(
                try await mirror.get("/api/models/acme/tiny/tree/main/?recursive=True").json as? [[String: Any]])
            #expect(all.contains { $0["path"] as? String == "tokenizer/vocab.txt" })
            let sub = try #require(
                try await mirror.get("/api/models/acme/tiny/tree/main/tokenizer").json as? [[String: Any]])
            #expect(sub.compactMap { $0["path"] as? String } == ["tokenizer/vocab.txt"])
            let missing = try await mirror.get("/api/models/acme/tiny/tree/main/nothing")
            #expect(missing.header("X-Error-Code") == "EntryNotFound")
        }
    }

    @Test func resolveServesBytesHeadersAndRanges() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let head = try await mirror.get("/acme/tiny/resolve/main/model.gguf", method: "HEAD")
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.header("ETag") == "\"\(SampleData.sha256(Self.weights))\"")
            #expect(head.header("Content-Length") == "\(Self.weights.count)")
            #expect(head.header("Accept-Ranges") == "bytes")
            #expect(head.header("X-Repo-Commit")?.count == 40)
            #expect(head.header("X-Xet-Hash") == nil)
            let config = try await mirror.get("/acme/tiny/resolve/main/config.json")
            #expect(config.body == Self.config)
            #expect(config.header("ETag") == "\"\(GitBlob.id(of: Self.config))\"")
            let whole = try await mirror.get("/acme/tiny/resolve/main/model.gguf")
            #expect(whole.body == Self.weights)
            let ranged = try await mirror.get(
                "/acme/tiny/resolve/main/model.gguf", headers: [("Range", "bytes=100-199")])
            #expect(ranged.status == 206 && ranged.body == Array(Self.weights[100..<200]))
            #expect(ranged.header("Content-Range") == "bytes 100-199/\(Self.weights.count)")
            let clamped = try await mirror.get(
                "/acme/tiny/resolve/main/model.gguf", headers: [("Range", "bytes=3145000-9999999")])
            #expect(clamped.status == 206 && clamped.body == Array(Self.weights[3_145_000...]))
            let suffix = try await mirror.get("/acme/tiny/resolve/main/model.gguf", headers: [("Range", "bytes=-100")])
            #expect(suffix.body == Array(Self.weights.suffix(100)))
            let beyond = try await mirror.get(
                "/acme/tiny/resolve/main/model.gguf", headers: [("Range", "bytes=99999999-")])
            #expect(beyond.status == 416 && beyond.header("Content-Range") == "bytes */\(Self.weights.count)")
        }
    }

    @Test func nothingOutsideTheRootOrHiddenIsServed() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let outside = try TemporaryDirectory()
            defer { outside.remove() }
            try Data("top secret".utf8).write(to: outside.path("secret.txt"))
            try FileManager.default.createSymbolicLink(
                at: mirror.root.path("acme/tiny/escape.txt"), withDestinationURL: outside.path("secret.txt"))
            for path in [
                "/acme/tiny/resolve/main/.git/config", "/acme/tiny/resolve/main/..%2F..%2Fother%2Fthing%2Freadme.md",
                "/acme/tiny/resolve/main/%2E%2E/%2E%2E/other/thing/readme.md", "/acme/tiny/resolve/main/%252e%252e/x",
                "/acme/tiny/resolve/main/escape.txt", "/acme/tiny/resolve/main//etc/passwd",
            ] {
                let reply = try await mirror.get(path)
                #expect(reply.status == 404, "\(path)")
                #expect(!String(decoding: reply.body, as: UTF8.self).contains("top secret"))
                #expect(!String(decoding: reply.body, as: UTF8.self).contains("# hi"))
            }
            let traversalRepo = try await mirror.get("/api/models/acme/..")
            #expect(traversalRepo.status >= 400)
        }
    }

    @Test func aContentChangeGivesANewCommitAndRetiresTheOldOne() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let before = try #require(
                (try await mirror.get("/api/models/acme/tiny").json as? [String: Any])?["sha"] as? String)
            try Data("changed".utf8).write(to: mirror.root.path("acme/tiny/config.json"))
            let after = try #require(
                (try await mirror.get("/api/models/acme/tiny").json as? [String: Any])?["sha"] as? String)
            #expect(after != before)
            let old = try await mirror.get("/api/models/acme/tiny/revision/\(before)")
            #expect(old.header("X-Error-Code") == "RevisionNotFound")
        }
    }

    /// A file request at a commit reuses the last walk instead of walking again, but only while the file is as
    /// that walk saw it: changed bytes are never served under the old commit and etag.
    @Test func fileRequestsAtACommitReuseTheWalkOnlyWhileTheFileIsUnchanged() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let commit = try #require(
                (try await mirror.get("/api/models/acme/tiny").json as? [String: Any])?["sha"] as? String)
            try Data("added after the walk".utf8).write(to: mirror.root.path("acme/tiny/extra.txt"))
            // Unchanged since the walk: served as part of that commit.
            let unchanged = try await mirror.get("/acme/tiny/resolve/\(commit)/config.json")
            #expect(unchanged.status == 200 && unchanged.body == Self.config)
            #expect(unchanged.header("X-Repo-Commit") == commit)
            // Not in that commit: a new walk, whose commit differs, so the old one is gone.
            let added = try await mirror.get("/acme/tiny/resolve/\(commit)/extra.txt")
            #expect(added.header("X-Error-Code") == "RevisionNotFound")
            // Walked again, then changed in place with the same size: the old commit is not answered from memory.
            let current = try #require(
                (try await mirror.get("/api/models/acme/tiny").json as? [String: Any])?["sha"] as? String)
            #expect(try await mirror.get("/acme/tiny/resolve/\(current)/config.json").status == 200)
            var changed = Self.config
            changed[0] ^= 1
            try Data(changed).write(to: mirror.root.path("acme/tiny/config.json"))
            // The same inode and size: only the modification time tells. Set it apart explicitly, since a file
            // system's clock can be coarser than the time between two writes.
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 1_000_000)],
                ofItemAtPath: mirror.root.path("acme/tiny/config.json").path)
            let stale = try await mirror.get("/acme/tiny/resolve/\(current)/config.json")
            #expect(stale.status == 404 && stale.header("X-Error-Code") == "RevisionNotFound")
            #expect(stale.body != changed)
        }
    }

    @Test func searchFindsReposByTextAndAuthor() async throws {
        try await MirrorFixture.with(Self.layout) { mirror in
            let all = try #require(try await mirror.get("/api/models").json as? [[String: Any]])
            #expect(all.compactMap { $0["id"] as? String } == ["acme/tiny", "other/thing"])
            let found = try #require(try await mirror.get("/api/models?search=TIN&limit=5").json as? [[String: Any]])
            #expect(found.compactMap { $0["id"] as? String } == ["acme/tiny"])
            let byAuthor = try #require(try await mirror.get("/api/models?author=other").json as? [[String: Any]])
            #expect(byAuthor.compactMap { $0["id"] as? String } == ["other/thing"])
            let refs = try #require(try await mirror.get("/api/models/acme/tiny/refs").json as? [String: Any])
            #expect((refs["branches"] as? [[String: Any]])?.first?["name"] as? String == "main")
        }
    }

    @Test func theTransferEngineAndConcurrentClientsGetExactBytes() async throws {
        let big = SampleData.bytes(count: 16 << 20, seed: 42)
        try await MirrorFixture.with(["acme/big/weights.safetensors": big]) { mirror in
            let folder = try TemporaryDirectory()
            defer { folder.remove() }
            var configuration = DownloadConfiguration()
            configuration.segmentSize = 1 << 20
            let downloader = Downloader(configuration: configuration)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<32 {
                    group.addTask {
                        let result = try await downloader.download(
                            DownloadRequest(
                                url: mirror.url("/acme/big/resolve/main/weights.safetensors"),
                                destination: folder.path("copy-\(client).bin"), expectedSHA256: SampleData.sha256(big)))
                        #expect(result.size == Int64(big.count))
                    }
                }
                try await group.waitForAll()
            }
        }
    }
}

@Suite struct MirrorAccessTests {
    @Test func aTokenProtectedMirrorRefusesRequestsWithoutIt() async throws {
        try await MirrorFixture.with(["acme/tiny/a.txt": Array("a".utf8)], token: "s3cret") { mirror in
            let anonymous = try await mirror.get("/api/models/acme/tiny")
            #expect(anonymous.status == 401)
            #expect(anonymous.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            #expect(anonymous.header("X-Error-Message") != nil)
            let wrong = try await mirror.get(
                "/acme/tiny/resolve/main/a.txt", headers: [("Authorization", "Bearer s3cre")])
            #expect(wrong.status == 401)
            let right = try await mirror.get(
                "/acme/tiny/resolve/main/a.txt", headers: [("Authorization", "Bearer s3cret")])
            #expect(right.status == 200 && right.body == Array("a".utf8))
        }
    }

    @Test func bigTreesArePagedWithLinkHeaders() async throws {
        var layout: [String: [UInt8]] = [:]
        for index in 0..<25 { layout["acme/many/file-\(index).txt"] = Array("\(index)".utf8) }
        try await MirrorFixture.with(layout, treePageSize: 10) { mirror in
            var paths: [String] = []
            var next: String? = "/api/models/acme/many/tree/main?recursive=true"
            var pages = 0
            while let path = next {
                let reply = try await mirror.get(path)
                let entries = try #require(reply.json as? [[String: Any]])
                paths += entries.compactMap { $0["path"] as? String }
                pages += 1
                next = reply.header("Link").flatMap { link in
                    guard let open = link.firstIndex(of: "<"), let close = link.firstIndex(of: ">") else { return nil }
                    return URL(string: String(link[link.index(after: open)..<close]))
                        .map { $0.path + ($0.query.map { "?" + $0 } ?? "") }
                }
            }
            #expect(pages == 3)
            #expect(Set(paths).count == 25 && paths.count == 25)
        }
    }
}

@Suite struct DatasetMirrorTests {
    @Test func datasetRootsAreServedUnderTheDatasetPrefixes() async throws {
        let models = try TemporaryDirectory()
        let datasets = try TemporaryDirectory()
        defer {
            models.remove()
            datasets.remove()
        }
        let rows = Array("a,b\n1,2\n".utf8)
        try FileManager.default.createDirectory(at: datasets.path("acme/table"), withIntermediateDirectories: true)
        try Data(rows).write(to: datasets.path("acme/table/data.csv"))
        let server = MirrorServer(
            roots: [models.url], datasetRoots: [datasets.url], caches: [],
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await MirrorFixture.serving(server, root: models) { mirror in
            let info = try #require(try await mirror.get("/api/datasets/acme/table").json as? [String: Any])
            #expect(info["id"] as? String == "acme/table")
            let file = try await mirror.get("/datasets/acme/table/resolve/main/data.csv")
            #expect(file.status == 200 && file.body == rows)
            let listed = try #require(try await mirror.get("/api/datasets").json as? [[String: Any]])
            #expect(listed.compactMap { $0["id"] as? String } == ["acme/table"])
            let notAModel = try await mirror.get("/api/models/acme/table")
            #expect(notAModel.header("X-Error-Code") == "RepoNotFound")
        }
    }
}
