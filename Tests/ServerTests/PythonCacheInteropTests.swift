import Foundation
import ModelDepot
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
