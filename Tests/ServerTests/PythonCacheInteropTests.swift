import Foundation
import ModelDepot
import ModelDepotPlatform
import ModelDepotTesting
import Testing

/// One cache, two tools: Python's `huggingface_hub` reads what ModelDepot wrote and the other way round.
@Suite struct PythonCacheInteropTests {
    static let layout: [String: [UInt8]] = [
        "acme/tiny/model.gguf": SampleData.bytes(count: 2 << 20, seed: 3),
        "acme/tiny/config.json": Array(#"{"a": 1}"#.utf8),
        "acme/tiny/tokenizer/vocab.txt": Array("x y\n".utf8),
        "acme/other/weights.safetensors": SampleData.bytes(count: 1 << 20, seed: 4),
    ]

    @Test func pythonReadsWhatWePulled() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let tiny = try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/tiny")))
            _ = try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/other")))
            let home = try TemporaryDirectory(prefix: "modeldepot-pyhome")
            defer { home.remove() }

            let scan = try await PythonInteropTests.runPython(
                script: "cache_peer.py", ["scan", hub.cache.root.path], endpoint: nil, home: home.url)
            #expect((scan["warnings"] as? [String])?.isEmpty == true, "\(scan["warnings"] ?? "")")
            try Self.expectSameRepos(python: scan, ours: try CacheScanner(cache: hub.cache).scan())

            let load = try await PythonInteropTests.runPython(
                script: "cache_peer.py", ["load", hub.cache.root.path, "acme/tiny", "tokenizer/vocab.txt"],
                endpoint: nil, home: home.url)
            #expect(load["file"] as? String == tiny.url(of: try RepoFilePath("tokenizer/vocab.txt")).path)
            #expect(load["snapshot"] as? String == tiny.folder.path)
        }
    }

    @Test func weReadWhatPythonPulled() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let home = try TemporaryDirectory(prefix: "modeldepot-pyhome")
            defer { home.remove() }
            let pulled = try await PythonInteropTests.runPython(
                script: "cache_peer.py", ["pull", hub.cache.root.path, "acme/tiny"], endpoint: hub.mirror.baseURL,
                home: home.url)
            let snapshotPath = try #require((pulled["snapshots"] as? [String])?.first)
            // A second ref to the same commit, as a tag would be.
            let repo = try hub.repository("acme/tiny")
            let commit = try #require(repo.commit(forRevision: "main"))
            try repo.setRef("v1.0", to: commit)

            let scan = try await PythonInteropTests.runPython(
                script: "cache_peer.py", ["scan", hub.cache.root.path], endpoint: nil, home: home.url)
            let ours = try CacheScanner(cache: hub.cache).scan()
            try Self.expectSameRepos(python: scan, ours: ours)
            #expect(ours.repositories.first?.revisions.first?.refs == ["main", "v1.0"])

            // Offline, our pull finds Python's snapshot; verification passes over Python's blobs.
            let offline = try await hub.downloader(offline: true).download(
                SnapshotRequest(repo: try RepoID("acme/tiny")))
            #expect(offline.folder.path == snapshotPath)
            let outcome = try CacheVerifier(cache: hub.cache).verify(repo)
            #expect(outcome.problems.isEmpty && outcome.verifiedBlobs == 3)
            // Pulling online downloads nothing: Python's blobs are ours.
            let online = try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/tiny")))
            #expect(online.filesDownloaded == 0)
        }
    }

    /// `prune --detached` (ModelManager.pruneDetached): the revision `main` moved away from goes, with its blobs
    /// no other revision uses; so does a partial download abandoned for days. A fresh partial, one whose lock a
    /// process holds, and a pinned repository stay. Python's `scan_cache_dir` then sees the same, clean cache.
    @Test func pruneDetachedLeavesACacheBothToolsAgreeOn() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let tiny = try RepoID("acme/tiny")
            let old = try await hub.downloader().download(SnapshotRequest(repo: tiny))
            try Data(#"{"a": 2}"#.utf8).write(to: hub.mirror.root.path("repos/acme/tiny/config.json"))
            let new = try await hub.downloader().download(SnapshotRequest(repo: tiny))
            #expect(old.commit != new.commit)
            // acme/other pulled by commit id has no ref either; pinned, it stays.
            let otherCommit = try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/other")))
                .commit
            let otherRepository = try hub.repository("acme/other")
            try FileManager.default.removeItem(at: otherRepository.refsFolder.appendingPathComponent("main"))
            try PinStore(cache: hub.cache).pin(try RepoID("acme/other"))
            // Three partial downloads: abandoned two days ago, fresh, and old but locked by a live process.
            let repository = try hub.repository("acme/tiny")
            let twoDaysAgo = Date().addingTimeInterval(-2 * 86_400)
            var partials: [String: URL] = [:]
            for (name, etag) in [("abandoned", "a"), ("fresh", "b"), ("locked", "c")] {
                let url = repository.partialBlob(String(repeating: etag, count: 64))
                try Data(count: 1000).write(to: url)
                if name != "fresh" {
                    try FileManager.default.setAttributes([.modificationDate: twoDaysAgo], ofItemAtPath: url.path)
                }
                partials[name] = url
            }
            let lockURL = repository.lockFile(String(repeating: "c", count: 64))
            try FileManager.default.createDirectory(
                at: lockURL.deletingLastPathComponent(), withIntermediateDirectories: true)
            let held = open(lockURL.path, O_RDWR | O_CREAT, 0o664)
            #expect(held >= 0 && flock(held, LOCK_EX) == 0)
            defer { close(held) }

            let models = ModelManager(managingCache: .init(cache: hub.cache))
            let plan = try await models.pruneDetached(dryRun: true)
            #expect(plan.revisions.map(\.commit) == [old.commit])
            #expect(plan.partialDownloads.map(\.path) == [partials["abandoned"]!.path])
            #expect(plan.partialDownloadsKept == 2 && plan.pinnedSkipped == ["acme/other"])
            #expect(plan.revisions[0].freedBytes == 8, "only the old config.json's blob is the old revision's alone")
            #expect(FileManager.default.fileExists(atPath: repository.snapshotFolder(old.commit).path))

            let done = try await models.pruneDetached()
            #expect(done.revisions == plan.revisions && done.partialDownloads == plan.partialDownloads)
            #expect(!FileManager.default.fileExists(atPath: repository.snapshotFolder(old.commit).path))
            #expect(!FileManager.default.fileExists(atPath: partials["abandoned"]!.path))
            #expect(FileManager.default.fileExists(atPath: partials["fresh"]!.path))
            #expect(FileManager.default.fileExists(atPath: partials["locked"]!.path))
            #expect(FileManager.default.fileExists(atPath: otherRepository.snapshotFolder(otherCommit).path))
            // The new revision is whole: every file still resolves.
            for file in new.files {
                #expect(FileManager.default.fileExists(atPath: new.url(of: file).path), "\(file)")
            }

            let home = try TemporaryDirectory(prefix: "modeldepot-pyhome")
            defer { home.remove() }
            let scan = try await PythonInteropTests.runPython(
                script: "cache_peer.py", ["scan", hub.cache.root.path], endpoint: nil, home: home.url)
            #expect((scan["warnings"] as? [String])?.isEmpty == true, "\(scan["warnings"] ?? "")")
            try Self.expectSameRepos(python: scan, ours: try CacheScanner(cache: hub.cache).scan())
            let pythonTiny = try #require(
                (scan["repos"] as? [[String: Any]])?.first { $0["id"] as? String == "acme/tiny" })
            let revisions = try #require(pythonTiny["revisions"] as? [[String: Any]])
            #expect(revisions.compactMap { $0["commit"] as? String } == [new.commit])
        }
    }

    /// `--local-dir` both ways: a folder either tool filled is up to date for the other (no file fetched again),
    /// with huggingface_hub's metadata files; a file changed by hand is fetched again; the cache stays empty.
    @Test func localDirectoriesAreUpToDateForBothTools() async throws {
        let log = RecordedLog()
        try await HubFixture.with(Self.layout, logger: log.logger) { hub in
            let tiny = try RepoID("acme/tiny")
            let home = try TemporaryDirectory(prefix: "modeldepot-pyhome")
            let ours = try TemporaryDirectory(prefix: "modeldepot-localdir-ours")
            let theirs = try TemporaryDirectory(prefix: "modeldepot-localdir-python")
            defer { [home, ours, theirs].forEach { $0.remove() } }
            func fileGETs(after start: Int) -> [String] {
                log.messages.dropFirst(start).filter { $0.hasPrefix("GET ") && $0.contains("/resolve/") }
            }

            let pulled = try await hub.downloader().download(
                SnapshotRequest(repo: tiny, localDirectory: LocalDirectory(ours.url)))
            #expect(pulled.folder.path == ours.url.standardizedFileURL.path && pulled.filesDownloaded == 3)
            for (path, bytes) in Self.layout where path.hasPrefix("acme/tiny/") {
                let file = ours.url.appendingPathComponent(String(path.dropFirst("acme/tiny/".count)))
                #expect(FileStatus(path: file.path, followingLinks: false)?.kind == .file, "a real file, not a link")
                #expect(try Data(contentsOf: file) == Data(bytes))
            }
            let metadata = try String(
                contentsOf: ours.path(".cache/huggingface/download/tokenizer/vocab.txt.metadata"), encoding: .utf8)
            let lines = metadata.split(separator: "\n")
            #expect(lines.count == 3 && lines[0] == Substring(pulled.commit) && Double(lines[2]) != nil)
            #expect(lines[1] == Substring(GitBlob.id(of: Array("x y\n".utf8))))

            // Python over our folder: nothing fetched.
            var start = log.messages.count
            let python = try await PythonInteropTests.runPython(
                script: "cache_peer.py", ["localdir", ours.url.path, "acme/tiny"], endpoint: hub.mirror.baseURL,
                home: home.url)
            #expect(python["snapshot"] as? String == ours.url.path)
            #expect(fileGETs(after: start).isEmpty, "\(fileGETs(after: start))")

            // Ours over Python's folder: nothing fetched either.
            _ = try await PythonInteropTests.runPython(
                script: "cache_peer.py", ["localdir", theirs.url.path, "acme/tiny"], endpoint: hub.mirror.baseURL,
                home: home.url)
            start = log.messages.count
            let again = try await hub.downloader().download(
                SnapshotRequest(repo: tiny, localDirectory: LocalDirectory(theirs.url)))
            #expect(again.filesDownloaded == 0 && fileGETs(after: start).isEmpty)

            // A file edited after its metadata was written is not trusted: fetched again, replaced.
            let config = theirs.url.appendingPathComponent("config.json")
            try Data(#"{"a": 9}"#.utf8).write(to: config)
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: config.path)
            let repaired = try await hub.downloader().download(
                SnapshotRequest(repo: tiny, localDirectory: LocalDirectory(theirs.url)))
            #expect(repaired.filesDownloaded == 1)
            #expect(try Data(contentsOf: config) == Data(#"{"a": 1}"#.utf8))
            #expect(
                !FileManager.default.fileExists(
                    atPath: hub.cache.root.appendingPathComponent("models--acme--tiny").path))
        }
    }

    /// Same repositories, sizes, file counts, revisions and refs as `scan_cache_dir`; times within a second.
    static func expectSameRepos(python: [String: Any], ours: CacheReport) throws {
        let repos = try #require(python["repos"] as? [[String: Any]])
        #expect(repos.count == ours.repositories.count)
        #expect((python["size"] as? NSNumber)?.int64Value == ours.sizeOnDisk)
        for (theirs, mine) in zip(repos, ours.repositories.sorted { $0.id < $1.id }) {
            #expect(theirs["id"] as? String == mine.id)
            #expect(theirs["type"] as? String == mine.type)
            #expect((theirs["size"] as? NSNumber)?.int64Value == mine.sizeOnDisk)
            #expect(theirs["files"] as? Int == mine.files)
            let accessed = try #require(theirs["lastAccessed"] as? Double)
            #expect(abs(accessed - mine.lastAccessed.timeIntervalSince1970) < 1)
            let modified = try #require(theirs["lastModified"] as? Double)
            #expect(abs(modified - mine.lastModified.timeIntervalSince1970) < 1)
            let revisions = try #require(theirs["revisions"] as? [[String: Any]])
            #expect(revisions.map { $0["commit"] as? String } == mine.revisions.map(\.commit))
            #expect(revisions.map { $0["refs"] as? [String] } == mine.revisions.map(\.refs))
            #expect(revisions.map { ($0["size"] as? NSNumber)?.int64Value } == mine.revisions.map(\.sizeOnDisk))
            #expect(revisions.map { $0["files"] as? Int } == mine.revisions.map(\.files))
        }
    }
}
