import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// A pull refused by a check that runs after its bytes arrived (a signature, a lock) leaves the cache as it was:
/// what `modeldepot path`, `ModelManager` and Python's huggingface_hub load is still the revision that was good.
@Suite struct RefusedPullTests {
    /// What huggingface_hub 2.4.0 loads offline (`HF_HUB_OFFLINE=1`) from `cache`: `config.json` of `repo` at
    /// `revision` (main when nil) and the snapshot folder, or nil when it finds nothing to load.
    static func pythonLoads(_ repo: String, revision: String? = nil, from cache: URL) async throws -> (
        file: URL, snapshot: URL
    )? {
        let python = try CLIRunner.startProgram(
            PythonVenv.python,
            [
                PythonVenv.packageRoot.appendingPathComponent("Tests/PythonPeers/cache_peer.py").path, "load",
                cache.path, repo, "config.json",
            ] + (revision.map { [$0] } ?? [])
        ) { $0.environment = ProcessInfo.processInfo.environment.merging(["HF_HUB_OFFLINE": "1"]) { $1 } }
        let seen = await CLIRunner.wait(python.0, python.1, python.2)
        guard seen.status == 0 else {
            #expect(seen.stderr.contains("LocalEntryNotFoundError"), "\(seen.stderr)")
            return nil
        }
        let paths = try #require(try JSONSerialization.jsonObject(with: Data(seen.stdout.utf8)) as? [String: String])
        return (
            URL(fileURLWithPath: try #require(paths["file"])), URL(fileURLWithPath: try #require(paths["snapshot"]))
        )
    }

    @Test(.enabled(if: SigningVenv.isInstalled, "model-signing is missing (scripts/test installs it)"))
    func aRefusedSignedUpdateLeavesTheGoodRevisionCurrent() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-signed-update")
        defer { folder.remove() }
        let prepared = try await SigningVenv.run(["prepare", folder.url.path])
        try #require(prepared.status == 0, "\(prepared.stderr)")
        let keys = try #require(
            try JSONSerialization.jsonObject(with: Data(prepared.stdout.utf8)) as? [String: String])
        let (mirrorURL, serving) = try await FolderMirror.start(root: folder.path("repos"))
        defer { serving.cancel() }
        let cache = folder.path("cache")
        let pull = [
            "pull", "acme/good", "--require-signature", "--trusted-key", try #require(keys["trusted"]), "--endpoint",
            mirrorURL.absoluteString, "--cache-dir", cache.path,
        ]
        let good = try await CLIRunner.run(pull)
        try #require(good.status == 0, "\(good.stderr)")
        let goodSnapshot = URL(fileURLWithPath: try #require(good.lastLine))
        let goodCommit = goodSnapshot.lastPathComponent
        let goodConfig = try Data(contentsOf: goodSnapshot.appendingPathComponent("config.json"))

        // The publisher's repository changes without a new signature (a compromised upload): main moves to a new
        // commit whose config.json the signature does not cover.
        let served = folder.path("repos/acme/good/config.json")
        try Data(#"{"model_type": "evil"}"#.utf8).write(to: served)
        let update = try await CLIRunner.run(pull)
        #expect(
            update.status == 1 && update.stderr.contains("config.json differs from what was signed"),
            "\(update.stderr)")

        let repository = cache.appendingPathComponent("models--acme--good")
        let ref = try String(contentsOf: repository.appendingPathComponent("refs/main"), encoding: .utf8)
        #expect(ref == goodCommit, "refs/main moved to \(ref)")
        let snapshots = try FileManager.default.contentsOfDirectory(
            atPath: repository.appendingPathComponent("snapshots").path)
        #expect(snapshots == [goodCommit], "the refused commit left a snapshot: \(snapshots)")

        // Everyone who loads main still loads the signed files.
        let path = try await CLIRunner.run(["path", "acme/good", "--cache-dir", cache.path])
        #expect(path.status == 0 && path.lastLine == goodSnapshot.path, "\(path.stdout)\(path.stderr)")
        let models = ModelManager(managingCache: .init(cache: HubCache(root: cache)))
        #expect(models.localPath(try RepoID("acme/good"))?.lastPathComponent == goodCommit)
        let python = try #require(try await Self.pythonLoads("acme/good", from: cache))
        #expect(python.snapshot.lastPathComponent == goodCommit)
        #expect(try Data(contentsOf: python.file) == goodConfig)

        // Signed again by the publisher, the update goes through and becomes current.
        try Data(goodConfig).write(to: served)
        let restored = try await CLIRunner.run(pull)
        #expect(restored.status == 0 && restored.lastLine == goodSnapshot.path, "\(restored.stderr)")
    }

    @Test func aLockPullWhoseCheckFailsLinksNothing() async throws {
        try await HubCommandTests.withHub { endpoint, _, folder in
            let lockFile = folder.path("modeldepot.lock")
            let locked = try await CLIRunner.run(["lock", "acme/tiny", "-o", lockFile.path, "--endpoint", endpoint])
            try #require(locked.status == 0, "\(locked.stderr)")
            // A blob already in the cache under the weights' name, of the right size but other bytes (a disk
            // error, another tool): the pull trusts the cache's blob, and only the check after it sees the lie.
            let cache = folder.path("cache")
            let weights = SampleData.sha256(HubCommandTests.weights)
            let blob = cache.appendingPathComponent("models--acme--tiny/blobs/\(weights)")
            try FileManager.default.createDirectory(
                at: blob.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(repeating: 0x5A, count: HubCommandTests.weights.count).write(to: blob)

            let refused = try await CLIRunner.run([
                "pull", "--locked", lockFile.path, "--endpoint", endpoint, "--cache-dir", cache.path,
            ])
            #expect(
                refused.status == 1 && refused.stderr.contains("After the pull")
                    && refused.stderr.contains("model.gguf") && refused.stderr.contains("Nothing of acme/tiny"),
                "\(refused.stderr)")
            let repository = cache.appendingPathComponent("models--acme--tiny")
            let snapshots =
                (try? FileManager.default.contentsOfDirectory(
                    atPath: repository.appendingPathComponent("snapshots").path)) ?? []
            #expect(snapshots.isEmpty, "the refused lock pull left snapshots \(snapshots)")
            let repositories = try #require(try LockCommandTests.lock(lockFile)["repositories"] as? [[String: Any]])
            let commit = try #require(repositories.first?["commit"] as? String)
            #expect(try await Self.pythonLoads("acme/tiny", revision: commit, from: cache) == nil)

            // With the bad blob gone, the same pull goes through and Python loads it.
            try FileManager.default.removeItem(at: blob)
            let pulled = try await CLIRunner.run([
                "pull", "--locked", lockFile.path, "--endpoint", endpoint, "--cache-dir", cache.path,
            ])
            #expect(pulled.status == 0, "\(pulled.stderr)")
            let python = try #require(try await Self.pythonLoads("acme/tiny", revision: commit, from: cache))
            #expect(
                try Data(contentsOf: python.snapshot.appendingPathComponent("model.gguf"))
                    == Data(HubCommandTests.weights))
        }
    }
}
