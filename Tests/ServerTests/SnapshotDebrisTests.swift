import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

/// What an interrupted or refused pull may leave in the cache: nothing a loader or Python's `scan_cache_dir`
/// would take for a file of the model.
@Suite struct SnapshotDebrisTests {
    static let layout: [String: [UInt8]] = [
        "acme/tiny/X.mlmodelc/weights/weight.bin": SampleData.bytes(count: 70_000, seed: 3),
        "acme/tiny/config.json": Array("{}".utf8),
    ]

    @Test func aPullRemovesTemporaryLinksAnOlderVersionLeftAndMakesNoneInTheSnapshot() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let first = try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/tiny")))
            let repo = try hub.repository("acme/tiny")
            // What a kill -9 between `symlink` and `rename` left with earlier versions, and with this one.
            let debris = first.folder.appendingPathComponent("X.mlmodelc/weights/.weight.bin.5cdd3851.link")
            try FileManager.default.createSymbolicLink(
                atPath: debris.path, withDestinationPath: "../../../../blobs/whatever")
            let work = repo.folder.appendingPathComponent(".modeldepot/links")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            // A leftover from an hour ago, and one another process is about to rename (it must stay).
            let stale = work.appendingPathComponent("1f2e.link").path
            try FileManager.default.createSymbolicLink(atPath: stale, withDestinationPath: "x")
            let anHourAgo = timeval(tv_sec: time(nil) - 3600, tv_usec: 0)
            #expect(lutimes(stale, [anHourAgo, anHourAgo]) == 0)
            try FileManager.default.createSymbolicLink(
                atPath: work.appendingPathComponent("77aa.link").path, withDestinationPath: "y")

            let verified = try CacheVerifier(cache: hub.cache).verify(repo)
            #expect(verified.problems.map(\.kind) == [.unlisted])
            #expect(verified.problems.first?.path.value == "X.mlmodelc/weights/.weight.bin.5cdd3851.link")

            let again = try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/tiny")))
            #expect(again.commit == first.commit)
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: debris.path)) == nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == ["77aa.link"])
            #expect(try CacheVerifier(cache: hub.cache).verify(repo).problems.isEmpty)
            let entries = FileManager.default.enumerator(atPath: first.folder.path)?.allObjects as? [String] ?? []
            #expect(
                entries.sorted() == [
                    "X.mlmodelc", "X.mlmodelc/weights", "X.mlmodelc/weights/weight.bin", "config.json",
                ])
        }
    }

    @Test func repairRemovesAFileTheRecordedTreeDoesNotList() async throws {
        try await HubFixture.with(Self.layout) { hub in
            let snapshot = try await hub.downloader().download(SnapshotRequest(repo: try RepoID("acme/tiny")))
            let repo = try hub.repository("acme/tiny")
            let stray = snapshot.folder.appendingPathComponent("notes.txt")
            try Data("by hand".utf8).write(to: stray)
            let verifier = CacheVerifier(cache: hub.cache)
            let problems = try verifier.verify(repo).problems
            #expect(
                problems.map(\.description) == [
                    "unlisted notes.txt @ \(snapshot.commit.prefix(12)): not a file of this commit"
                ])
            _ = try await verifier.repair(repo, problems: problems, using: hub.downloader())
            #expect(!FileManager.default.fileExists(atPath: stray.path))
            #expect(try verifier.verify(repo).problems.isEmpty)
        }
    }

    @Test func aRefusedPullLeavesNothingBehind() async throws {
        let commit = String(repeating: "ab", count: 20)
        let info = Array(#"{"id": "evil/repo", "sha": "\#(commit)"}"#.utf8)
        let tree = Array(
            #"[{"type": "file", "oid": "\#(String(repeating: "cd", count: 20))", "size": 3, "path": "a.txt"}]"#.utf8)
        let server = try await FaultServer.start(files: [
            "/api/models/evil/repo/revision/main": info, "/api/models/evil/repo/revision/..%2F..%2Fx": info,
            "/api/models/evil/repo/tree/\(commit)": tree,
        ])
        defer { Task { try? await server.shutdown() } }
        let folder = try TemporaryDirectory(prefix: "modeldepot-refused")
        defer { folder.remove() }
        let cache = HubCache(root: folder.path("cache"))
        let pull = SnapshotDownloader(
            hub: HubClient(endpoint: server.baseURL, transport: DefaultTransport.shared, clock: ImmediateClock()),
            cache: cache, clock: ImmediateClock())
        for revision in ["../../x", "refs/../../x", ""] {
            let error = await #expect(throws: ModelDepotError.self) {
                try await pull.download(SnapshotRequest(repo: try RepoID("evil/repo"), revision: revision))
            }
            #expect(error?.code == .invalidArgument, "\(revision)")
        }
        // No file matches: refused after listing, before anything is written.
        let error = await #expect(throws: ModelDepotError.self) {
            try await pull.download(SnapshotRequest(repo: try RepoID("evil/repo"), include: ["*.gguf"]))
        }
        #expect(error?.code == .invalidArgument)
        let written = FileManager.default.enumerator(atPath: folder.url.path)?.allObjects as? [String] ?? []
        #expect(written.filter { $0.contains("snapshots") || $0.contains("trees") || $0.contains("refs") }.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.path("x").path))
    }
}

/// A pull that waits on the Hub's API says so in its progress, as its files' downloads do.
@Suite struct SnapshotWaitTests {
    @Test func retriesOfTheHubsAPIShowInTheProgress() async throws {
        let commit = String(repeating: "ab", count: 20)
        let server = try await FaultServer.start(files: [
            "/api/models/acme/x/revision/main": Array(#"{"id": "acme/x", "sha": "\#(commit)"}"#.utf8),
            "/api/models/acme/x/tree/\(commit)": Array("[]".utf8),
        ])
        defer { Task { try? await server.shutdown() } }
        server.inject(.status(503), times: 2)
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let clock = ImmediateClock()
        let pull = SnapshotDownloader(
            hub: HubClient(endpoint: server.baseURL, transport: DefaultTransport.shared, clock: clock),
            cache: HubCache(root: folder.path("cache")),
            clock: clock)
        let events = Mutex<[SnapshotProgress]>([])
        _ = try await pull.download(SnapshotRequest(repo: try RepoID("acme/x"))) { progress in
            events.withLock { $0.append(progress) }
        }
        let waits = events.withLock { $0 }.compactMap(\.waiting).map(\.description)
        #expect(waits.first == "waiting for 127.0.0.1:\(server.baseURL.port!)")
        #expect(waits.contains { $0.hasPrefix("retrying in 0.") && $0.contains("(attempt 2 of 6)") }, "\(waits)")
        #expect(waits.contains { $0.contains("(attempt 3 of 6)") }, "\(waits)")
        #expect(events.withLock { $0.last?.waiting } == nil, "the wait ends when the pull goes on")
    }
}
