import Foundation
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import ModelDepotXet
import Synchronization
import Testing

/// Delta pulls through Xet: the mirror indexes a second file of a repository citing the chunks it shares with the
/// first (as hf_xet deduplicates an upload), and a client that pulled the first copies those chunks from its own
/// disk, fetching only what changed. hf_xet reads the deduplicated file from the mirror too.
@Suite struct XetDeltaTests {
    /// With `forgedRecord`, model-a's record on disk is rewritten to name each chunk one index off: every copied
    /// chunk still matches its recorded hash, but the file's hash comes out wrong, and the pull fetches everything
    /// once more instead of failing or keeping a wrong file.
    @Test(arguments: [false, true])
    func aSecondFileSharingChunksMovesOnlyWhatChanged(forgedRecord: Bool) async throws {
        let base = SampleData.bytes(count: 4 << 20, seed: 121)
        var changed = base
        // One 64 KiB "tensor" rewritten in the middle, 200 kB appended.
        changed.replaceSubrange((2 << 20)..<((2 << 20) + 65_536), with: SampleData.bytes(count: 65_536, seed: 122))
        changed += SampleData.bytes(count: 200_000, seed: 123)
        let root = try TemporaryDirectory(prefix: "modeldepot-xet-delta")
        defer { root.remove() }
        try root.write(["acme/delta/model-a.bin": base, "acme/delta/model-b.bin": changed])
        try await MirrorFixture.serving(MirrorFixture.xetMirror(root), root: root) { mirror in
            let cache = HubCache(root: root.path("cache"))
            func pull(_ name: String) async throws -> (Snapshot, SnapshotProgress?) {
                var request = SnapshotRequest(repo: try RepoID("acme/delta"), include: [name])
                request.xet = .always
                let last = Mutex<SnapshotProgress?>(nil)
                let snapshot = try await SnapshotDownloader(hub: HubClient(endpoint: mirror.baseURL), cache: cache)
                    .download(request) { progress in last.withLock { $0 = progress } }
                return (snapshot, last.withLock { $0 })
            }
            // model-b is indexed after model-a: its unchanged chunks cite model-a's xorb.
            try await mirror.waitForXetIndex("acme/delta", "model-a.bin")
            try await mirror.waitForXetIndex("acme/delta", "model-b.bin")
            let (_, first) = try await pull("model-a.bin")
            #expect(first?.xetFiles == 1 && first?.xetBytesFromDisk == 0, "\(String(describing: first))")
            if forgedRecord {
                let records = cache.root.appendingPathComponent("models--acme--delta/.modeldepot/xet")
                let name = try #require(try FileManager.default.contentsOfDirectory(atPath: records.path).first)
                let file = records.appendingPathComponent(name)
                var record = try #require(
                    try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
                record["terms"] = (record["terms"] as? [[String: Any]] ?? []).map { term in
                    var shifted = term
                    shifted["start"] = (term["start"] as? Int ?? 0) + 1
                    return shifted
                }
                try JSONSerialization.data(withJSONObject: record).write(to: file)
            }
            let (snapshot, progress) = try await pull("model-b.bin")
            let second = try #require(progress)
            #expect(second.xetFiles == 1, "model-b came through Xet")
            if forgedRecord {
                #expect(try [UInt8](Data(contentsOf: snapshot.folder.appendingPathComponent("model-b.bin"))) == changed)
                #expect(second.xetBytesFromDisk == 0, "the second try fetched everything")
                return
            }
            #expect(try [UInt8](Data(contentsOf: snapshot.folder.appendingPathComponent("model-b.bin"))) == changed)
            let size = Int64(changed.count)
            #expect(
                second.xetBytesFromDisk > size * 8 / 10, "most came from model-a on disk: \(second.xetBytesFromDisk)")
            #expect(
                second.xetBytesFromNetwork < size / 8,
                "only the changed chunks came over the network: \(second.xetBytesFromNetwork) of \(size)")
            // The speed and the chart count what was received: the chunks copied from model-a are not.
            #expect(
                second.bytesReceived == size - second.xetBytesFromDisk,
                "received \(second.bytesReceived) of \(size), \(second.xetBytesFromDisk) from disk")

            // hf_xet downloads the deduplicated file byte-exact through the mirror.
            let answer = try await PythonInteropTests.runPython(
                script: "xet_client.py",
                ["acme/delta", root.path("python-cache").path, root.path("acme/delta").path, "model-b.bin"],
                endpoint: mirror.baseURL, home: root.path("home"))
            let result = try #require((answer["files"] as? [String: [String: Any]])?["model-b.bin"], "\(answer)")
            #expect(result["sha256"] as? String == SampleData.sha256(changed))
            #expect(result["xet"] as? Bool == true)
        }
    }
}
