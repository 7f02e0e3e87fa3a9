import Foundation
import Logging
import ModelDepot
import ModelDepotServer
import ModelDepotTesting
import Testing

/// Python's `huggingface_hub` 2.4.0 (the venv `scripts/test` creates) pulling from our mirror.
@Suite struct PythonInteropTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let python = packageRoot.appendingPathComponent(".venv/bin/python")

    @Test func huggingFaceHubDownloadsFromTheMirror() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.python.path),
            "the Python peer is missing: python3 -m venv .venv && .venv/bin/pip install huggingface-hub==2.4.0 (scripts/test does this)"
        )
        let weights = SampleData.bytes(count: 3 << 20, seed: 51)
        let config = Array(#"{"model_type": "demo"}"#.utf8)
        let layout: [String: [UInt8]] = [
            "acme/tiny/model.gguf": weights, "acme/tiny/config.json": config,
            "acme/tiny/tokenizer/vocab.txt": Array("a b\n".utf8),
        ]
        try await MirrorFixture.with(layout) { mirror in
            let home = try TemporaryDirectory(prefix: "modeldepot-pyhome")
            defer { home.remove() }
            let cache = home.path("hub")
            let result = try await Self.runPeer(endpoint: mirror.baseURL, cache: cache, home: home.url)

            let commit = try #require(result["sha"] as? String)
            #expect(result["files"] as? [String] == ["config.json", "model.gguf", "tokenizer/vocab.txt"])
            #expect(result["tree"] as? [String] == ["config.json", "model.gguf", "tokenizer", "tokenizer/vocab.txt"])
            #expect((result["siblings"] as? [String: Int])?["model.gguf"] == weights.count)
            #expect(result["missingRepo"] as? String == "RepositoryNotFoundError")
            #expect(result["missingFile"] as? String == "RemoteEntryNotFoundError")
            #expect(result["missingRevision"] as? String == "RevisionNotFoundError")

            // What Python wrote: blobs named by our ETags, snapshot links, the ref without a newline.
            let repo = cache.appendingPathComponent("models--acme--tiny")
            let gguf = try Data(contentsOf: repo.appendingPathComponent("blobs/\(SampleData.sha256(weights))"))
            #expect(gguf == Data(weights))
            let configBlob = try Data(contentsOf: repo.appendingPathComponent("blobs/\(GitBlob.id(of: config))"))
            #expect(configBlob == Data(config))
            #expect(try String(contentsOf: repo.appendingPathComponent("refs/main"), encoding: .utf8) == commit)
            let byBranch = try #require(result["byBranch"] as? String)
            #expect(try Data(contentsOf: URL(fileURLWithPath: byBranch)) == Data(weights))

            // A second machine pulls from a mirror of the cache Python just wrote: same commit, same bytes.
            let cacheMirror = MirrorServer(
                roots: [], caches: [cache], stateFolder: home.path("state"),
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            try await MirrorFixture.serving(cacheMirror, root: home) { second in
                let again = try await Self.runPeer(
                    endpoint: second.baseURL, cache: home.path("second-hub"), home: home.url)
                #expect(again["sha"] as? String == commit)
                #expect(again["files"] as? [String] == ["config.json", "model.gguf", "tokenizer/vocab.txt"])
                let copy = home.path("second-hub/models--acme--tiny/blobs/\(SampleData.sha256(weights))")
                #expect(try Data(contentsOf: copy) == Data(weights))
            }
        }
    }

    /// Runs the Python peer script against `endpoint` and returns what it printed.
    static func runPeer(endpoint: URL, cache: URL, home: URL) async throws -> [String: Any] {
        try await runPython(script: "hub_client.py", [cache.path], endpoint: endpoint, home: home)
    }

    /// Runs a script of `Tests/PythonPeers` with the venv's Python and returns the JSON object it printed.
    static func runPython(
        script: String, _ arguments: [String], endpoint: URL?, home: URL, environment: [String: String] = [:],
        interpreter: URL = python
    ) async throws -> [String: Any] {
        try #require(
            FileManager.default.isExecutableFile(atPath: interpreter.path),
            "the Python peer is missing: python3 -m venv .venv && .venv/bin/pip install huggingface-hub==2.4.0 (scripts/test does this)"
        )
        let process = Process()
        process.executableURL = interpreter
        process.arguments = [packageRoot.appendingPathComponent("Tests/PythonPeers/\(script)").path] + arguments
        process.environment = [
            "HF_ENDPOINT": endpoint?.absoluteString ?? "http://127.0.0.1:9", "HF_HOME": home.path,
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1", "PATH": "/usr/bin:/bin",
        ].merging(environment) { _, given in given }
        // Output goes to files and the exit is awaited through the termination handler: blocking reads or
        // waits on the cooperative pool could starve the in-process mirror the script is talking to.
        let outputs = try TemporaryDirectory(prefix: "modeldepot-python-output")
        defer { outputs.remove() }
        FileManager.default.createFile(atPath: outputs.path("out").path, contents: nil)
        FileManager.default.createFile(atPath: outputs.path("err").path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: outputs.path("out"))
        process.standardError = try FileHandle(forWritingTo: outputs.path("err"))
        let started = await process.runToEnd()
        let outData = try Data(contentsOf: outputs.path("out"))
        let errData = try Data(contentsOf: outputs.path("err"))
        try #require(
            started && process.terminationStatus == 0, "python failed: \(String(decoding: errData, as: UTF8.self))")
        return try #require(try JSONSerialization.jsonObject(with: outData) as? [String: Any])
    }
}
