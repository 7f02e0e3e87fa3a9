import Foundation
import Logging
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import Synchronization
import Testing

/// The hub commands as a user runs them: pull, ls, path, info, verify, rm — and two real processes, and
/// `kill -9` in the middle of a pull.
@Suite struct HubCommandTests {
    static let weights = SampleData.bytes(count: 24 << 20, seed: 5)
    static let files: [String: [UInt8]] = [
        "acme/tiny/model.gguf": weights, "acme/tiny/config.json": Array(#"{"a": 1}"#.utf8),
        "acme/tiny/sub/notes.txt": Array("hello\n".utf8),
    ]
    /// Datasets the mirror serves beside ``files``.
    static let datasets: [String: [UInt8]] = ["acme/corpus/train.txt": Array("one\ntwo\n".utf8)]

    /// A mirror of ``files`` whose LFS content comes from a FaultServer "CDN" on another origin.
    static func withHub(
        throttle: Int? = nil,
        _ body: (_ endpoint: String, _ cdn: FaultServer, _ folder: TemporaryDirectory) async throws -> Void
    ) async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-cli-hub")
        defer { folder.remove() }
        for (path, bytes) in files.map({ ("repos/" + $0, $1) }) + datasets.map({ ("datasets/" + $0, $1) }) {
            let url = folder.path(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        let cdn = try await FaultServer.start(files: ["/" + SampleData.sha256(weights): weights])
        if let throttle { cdn.inject(.throttle(bytesPerSecond: throttle), times: 100_000) }
        var server = MirrorServer(
            roots: [folder.path("repos")], datasetRoots: [folder.path("datasets")], caches: [],
            stateFolder: folder.path("state"),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        server.lfsRedirectBase = URL(string: "http://localhost:\(cdn.baseURL.port!)")
        let address = Mutex<URL?>(nil)
        let task = Task { try await server.run(host: "127.0.0.1", port: 0) { url in address.withLock { $0 = url } } }
        defer { task.cancel() }
        #expect(await waitUntil { address.withLock { $0 } != nil })
        do {
            try await body(address.withLock { $0 }!.absoluteString, cdn, folder)
        } catch {
            try? await cdn.shutdown()
            throw error
        }
        try await cdn.shutdown()
    }

    /// The `status` field of each report `status --json` printed.
    static func statuses(_ output: CLIRunner.Output) throws -> [String] {
        let reports = try #require(try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [[String: Any]])
        return reports.compactMap { $0["status"] as? String }
    }

    @Test func pullListVerifyRepairRemove() async throws {
        try await Self.withHub { endpoint, _, folder in
            let cache = folder.path("cache").path
            let pull = try await CLIRunner.run(["pull", "acme/tiny", "--endpoint", endpoint, "--cache-dir", cache])
            #expect(pull.status == 0, "\(pull.stderr)")
            let snapshot = try #require(pull.lastLine)
            #expect(snapshot.hasPrefix(cache + "/models--acme--tiny/snapshots/"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot + "/model.gguf")) == Data(Self.weights))

            let list = try await CLIRunner.run(["ls", "--cache-dir", cache, "--json"])
            let repos = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
            #expect(repos.count == 1)
            #expect(
                Set(repos[0].keys) == [
                    "id", "type", "sizeOnDisk", "files", "revisions", "lastAccessed", "lastModified",
                ])
            #expect(repos[0]["sizeOnDisk"] as? Int == Self.files.values.reduce(0) { $0 + $1.count })
            #expect(repos[0]["files"] as? Int == 3)

            let path = try await CLIRunner.run(["path", "acme/tiny", "sub/notes.txt", "--cache-dir", cache])
            #expect(path.lastLine == snapshot + "/sub/notes.txt")
            let info = try await CLIRunner.run([
                "info", "acme/tiny", "--endpoint", endpoint, "--cache-dir", cache, "--json",
            ])
            let infoJSON = try #require(
                try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
            #expect(infoJSON["totalSize"] as? Int == Self.files.values.reduce(0) { $0 + $1.count })
            // model.gguf here is random bytes: its entry says why its header cannot be read, with no format fields.
            let infoFiles = try #require(infoJSON["files"] as? [[String: Any]])
            let gguf = try #require(infoFiles.first { $0["path"] as? String == "model.gguf" })
            #expect((gguf["damaged"] as? String)?.contains("GGUF") == true && gguf["format"] == nil, "\(gguf)")

            #expect(try await CLIRunner.run(["verify", "--cache-dir", cache]).status == 0)
            // Flip one byte of the big blob: verify fails and names it; --repair fetches it again.
            let blob = URL(fileURLWithPath: cache + "/models--acme--tiny/blobs/" + SampleData.sha256(Self.weights))
            let handle = try FileHandle(forUpdating: blob)
            try handle.seek(toOffset: 1234)
            try handle.write(contentsOf: Data([0xFF ^ Self.weights[1234]]))
            try handle.close()
            let failing = try await CLIRunner.run(["verify", "acme/tiny", "--cache-dir", cache])
            #expect(failing.status == 1)
            #expect(failing.stdout.contains("corrupt  model.gguf"))
            let repair = try await CLIRunner.run([
                "verify", "acme/tiny", "--repair", "--cache-dir", cache, "--endpoint", endpoint,
            ])
            #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
            #expect(try Data(contentsOf: blob) == Data(Self.weights))

            let refused = try await CLIRunner.run(["rm", "acme/tiny", "--cache-dir", cache])
            #expect(refused.status != 0 && refused.stderr.contains("--yes"))
            let removed = try await CLIRunner.run(["rm", "acme/tiny", "--cache-dir", cache, "--yes"])
            #expect(removed.status == 0)
            #expect(!FileManager.default.fileExists(atPath: cache + "/models--acme--tiny"))
        }
    }

    @Test func offlineAndErrorsExitNonZeroWithAMessage() async throws {
        try await Self.withHub { endpoint, _, folder in
            let cache = folder.path("cache").path
            let offline = try await CLIRunner.run(["pull", "acme/tiny", "--offline", "--cache-dir", cache])
            #expect(offline.status == 1 && offline.stderr.contains("not in the cache"))
            let missing = try await CLIRunner.run(["pull", "acme/nope", "--endpoint", endpoint, "--cache-dir", cache])
            #expect(missing.status == 1 && missing.stderr.contains("was not found"))
            let badID = try await CLIRunner.run(["pull", "acme/../x", "--cache-dir", cache])
            #expect(badID.status == 1 && badID.stderr.contains("not a valid repository id"))
            let json = try await CLIRunner.run([
                "pull", "acme/nope", "--endpoint", endpoint, "--cache-dir", cache, "--json",
            ])
            #expect(json.stdout.contains(#""code":"repositoryNotFound""#))
        }
    }

    @Test func twoProcessesPullTheSameRepoOnce() async throws {
        try await Self.withHub(throttle: 16 << 20) { endpoint, cdn, folder in
            let arguments = [
                "pull", "acme/tiny", "--endpoint", endpoint, "--cache-dir", folder.path("cache").path, "--json",
            ]
            let first = try CLIRunner.start(arguments)
            let second = try CLIRunner.start(arguments)
            let (a, b) = await (CLIRunner.wait(first.0, first.1, first.2), CLIRunner.wait(second.0, second.1, second.2))
            #expect(a.status == 0 && b.status == 0, "\(a.stderr)\(b.stderr)")
            let received = try [a, b].map { output -> Int in
                let last = try #require(output.lastLine)
                let parsed = try? JSONSerialization.jsonObject(with: Data(last.utf8))
                let event = try #require(parsed as? [String: Any], "not a JSON event: \(last)\n\(output.stderr)")
                return try #require(event["bytesReceived"] as? Int)
            }
            // One process fetched the big file; the other waited on the shared lock and found it done.
            #expect(received.filter { $0 >= Self.weights.count }.count == 1, "\(received)")
            #expect(cdn.bodyBytesSent < Int64(Self.weights.count) * 2, "the big file was downloaded twice")
        }
    }

    @Test func killNineMidPullThenResume() async throws {
        // The server holds every body once half the file is sent, so the kill lands mid-download however long
        // a loaded machine keeps this test from looking (a throttle alone let the pull finish first).
        try await Self.withHub { endpoint, cdn, folder in
            cdn.holdBodies(afterTotalBytes: Int64(Self.weights.count / 2))
            let cache = folder.path("cache").path
            let arguments = [
                "pull", "acme/tiny", "--endpoint", endpoint, "--cache-dir", cache, "-q", "--connections", "2",
            ]
            let sidecar = cache + "/models--acme--tiny/blobs/\(SampleData.sha256(Self.weights)).incomplete.json"
            let (process, out, err) = try CLIRunner.start(arguments)
            #expect(
                await waitUntil(timeout: .seconds(60)) {
                    (try? Data(contentsOf: URL(fileURLWithPath: sidecar))).map { $0.count > 0 } ?? false
                        && cdn.bodyBytesSent > Int64(Self.weights.count / 3)
                })
            kill(process.processIdentifier, SIGKILL)
            _ = await CLIRunner.wait(process, out, err)
            #expect(await waitUntil { cdn.openConnections == 0 })
            // What the killed run saved, read through the engine's public API as any app would.
            let repository = HubCache(root: URL(fileURLWithPath: cache)).repository(try RepoID("acme/tiny"))
            let commit = try #require(repository.commit(forRevision: "main"))
            let sha = SampleData.sha256(Self.weights)
            let saved = Downloader().resumableBytes(
                for: DownloadRequest(
                    url: URL(string: "\(endpoint)/acme/tiny/resolve/\(commit)/model.gguf")!,
                    destination: repository.blob(sha)
                ).placingWorkFiles(
                    partial: repository.partialBlob(sha).path, resumeRecord: repository.partialBlob(sha).path + ".json",
                    sharedLock: repository.lockFile(sha).path))
            #expect(saved > 0, "the killed run saved nothing to resume from")
            let sentBefore = cdn.bodyBytesSent
            cdn.clearFaults()
            let again = try await CLIRunner.run(arguments)
            #expect(again.status == 0, "\(again.stderr)")
            let file = try #require(again.lastLine) + "/model.gguf"
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data(Self.weights))
            // The rerun fetches what the sidecar lacked, plus what the server pushes into socket buffers past the
            // point where a range was split for an idle connection (counted as sent, never used: a few MiB on a
            // loaded machine's loopback, up to 4 MiB measured while a build shared the two cores). Without a
            // resume the rerun would send all 24 MiB, which the second bound catches.
            let resent = cdn.bodyBytesSent - sentBefore
            #expect(resent <= Int64(Self.weights.count) - saved + (5 << 20), "the rerun did not resume")
            #expect(resent < Int64(Self.weights.count), "the rerun downloaded the whole file again")
        }
    }

    /// Ctrl-C (SIGINT) mid-pull cancels the manager's task: exit 130 with a message, no file where it looks
    /// finished, the partial blob kept, and the next run finishes the file.
    @Test func interruptMidPullStopsCleanlyAndTheNextRunFinishes() async throws {
        try await Self.withHub { endpoint, cdn, folder in
            cdn.holdBodies(afterTotalBytes: Int64(Self.weights.count / 2))
            let cache = folder.path("cache").path
            let arguments = [
                "pull", "acme/tiny", "--endpoint", endpoint, "--cache-dir", cache, "--json", "--connections", "2",
            ]
            let sha = SampleData.sha256(Self.weights)
            let partial = cache + "/models--acme--tiny/blobs/\(sha).incomplete"
            let (process, out, err) = try CLIRunner.start(arguments)
            #expect(
                await waitUntil(timeout: .seconds(60)) {
                    FileManager.default.fileExists(atPath: partial) && cdn.bodyBytesSent > Int64(Self.weights.count / 4)
                })
            kill(process.processIdentifier, SIGINT)
            let interrupted = await CLIRunner.wait(process, out, err)
            #expect(interrupted.status == 130, "\(interrupted.stderr)")
            #expect(interrupted.stderr.contains("error:"))
            #expect(interrupted.stdout.contains(#""event":"failed""#) && interrupted.stdout.contains(#""cancelled""#))
            #expect(!FileManager.default.fileExists(atPath: cache + "/models--acme--tiny/blobs/\(sha)"))
            #expect(FileManager.default.fileExists(atPath: partial), "the bytes that arrived are kept")
            cdn.clearFaults()
            let again = try await CLIRunner.run(arguments)
            #expect(again.status == 0, "\(again.stderr)")
            let folderLine = try #require(
                again.stdout.split(separator: "\n").last.flatMap { line in
                    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["path"] as? String
                })
            #expect(try Data(contentsOf: URL(fileURLWithPath: folderLine + "/model.gguf")) == Data(Self.weights))
        }
    }

    @Test func catalogStatusPinAndPrune() async throws {
        let catalog = try await CLIRunner.run(["catalog", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(catalog.stdout.utf8)) as? [String: Any])
        let models = try #require(object["models"] as? [[String: Any]])
        #expect(models.count >= 9)
        for key in ["name", "repo", "files", "format", "capabilities", "sizeBytes"] {
            #expect(models.allSatisfy { $0[key] != nil }, "every entry has \(key)")
        }
        #expect((object["presets"] as? [String: [String]])?["minimal"] == ["gte-small"])
        // Which embedding models run in-process, and plainly why bge-m3 does not.
        let inProcess = try #require(object["inProcessEmbeddings"] as? [String: Any])
        #expect(inProcess["all-minilm-l6-v2"] is NSNull && inProcess["gte-small"] is NSNull)
        #expect((inProcess["bge-m3"] as? String)?.contains("SentencePiece") == true)
        let bge = try await CLIRunner.run(["embed", "--local", "bge-m3", "hello"])
        #expect(bge.status == 1 && bge.stderr.contains("cannot be embedded in this process"), "\(bge.stderr)")
        let embeddings = try await CLIRunner.run(["catalog", "--capability", "embeddings"])
        #expect(embeddings.stdout.contains("all-minilm-l6-v2") && !embeddings.stdout.contains("whisper"))
        let badCapability = try await CLIRunner.run(["catalog", "--capability", "telepathy"])
        #expect(badCapability.status == 1 && badCapability.stderr.contains("not a capability"))

        try await Self.withHub { endpoint, _, folder in
            let cache = folder.path("cache").path
            let missing = try await CLIRunner.run(["status", "acme/tiny", "--cache-dir", cache])
            #expect(missing.status == 1 && missing.stdout.contains("not downloaded"))
            #expect(
                try await CLIRunner.run(["pull", "acme/tiny", "--endpoint", endpoint, "--cache-dir", cache]).status == 0
            )
            // The JSON files were verified while downloading; the random bytes named .gguf are not a GGUF file.
            let json = try await CLIRunner.run(["status", "acme/tiny", "--include", "*.json", "--cache-dir", cache])
            #expect(json.status == 0, "\(json.stdout)")
            // A cache Python downloaded has none of our records: loadable and reported as not hashed yet, which
            // is not a failure; --verify hashes.
            try FileManager.default.removeItem(atPath: cache + "/models--acme--tiny/.modeldepot")
            let unhashed = try await CLIRunner.run([
                "status", "acme/tiny", "--include", "*.json", "--cache-dir", cache, "--json",
            ])
            #expect(unhashed.status == 0, "\(unhashed.stdout)")
            #expect(try Self.statuses(unhashed) == ["unverified"])
            let hashed = try await CLIRunner.run([
                "status", "acme/tiny", "--include", "*.json", "--cache-dir", cache, "--json", "--verify",
            ])
            #expect(hashed.status == 0, "\(hashed.stdout)")
            #expect(try Self.statuses(hashed) == ["ready"], "\(hashed.stdout)")
            let whole = try await CLIRunner.run(["status", "acme/tiny", "--cache-dir", cache, "--json"])
            #expect(whole.status == 1)
            let reports = try #require(
                try JSONSerialization.jsonObject(with: Data(whole.stdout.utf8)) as? [[String: Any]])
            #expect(reports.first?["status"] as? String == "corrupt")
            #expect((reports.first?["corrupt"] as? [String: String])?["model.gguf"]?.contains("wrong magic") == true)

            #expect(try await CLIRunner.run(["pin", "acme/tiny", "--cache-dir", cache]).status == 0)
            let pinned = try await CLIRunner.run(["prune", "--max-size", "1KB", "--cache-dir", cache])
            #expect(pinned.status == 0 && pinned.stdout.contains("Still over the limit"))
            #expect(try await CLIRunner.run(["pin", "acme/tiny", "--remove", "--cache-dir", cache]).status == 0)
            let pruned = try await CLIRunner.run(["prune", "--max-size", "1KB", "--cache-dir", cache])
            #expect(pruned.stdout.contains("evicted  acme/tiny"))
            #expect(!FileManager.default.fileExists(atPath: cache + "/models--acme--tiny"))
        }
    }
}
