import Foundation
import Logging
import ModelDepot
import ModelDepotInference
import ModelDepotServer
import ModelDepotTesting
import Testing

/// The real llama.cpp server (llama-cpp-python from PyPI, in the venv `scripts/test` creates) and a tiny chat
/// model the tests write with the `gguf` package, served by our mirror and pulled into a ModelDepot cache.
enum LlamaPeer {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let python = packageRoot.appendingPathComponent(".venv/bin/python")
    static let repo = try! RepoID("modeldepot/tiny-chat-GGUF")

    /// True when the venv has llama-cpp-python's server (CI installs it; a bare checkout may not).
    static let isInstalled: Bool = {
        let site = packageRoot.appendingPathComponent(".venv/lib")
        guard let versions = try? FileManager.default.contentsOfDirectory(atPath: site.path) else { return false }
        return versions.contains { version in
            ["llama_cpp/server", "uvicorn", "sse_starlette"].allSatisfy {
                FileManager.default.fileExists(
                    atPath: site.appendingPathComponent("\(version)/site-packages/\($0)").path)
            }
        }
    }()

    static let runtime = LocalServerRuntime.llamaCppPython(python)

    static let entry = CatalogEntry(
        name: "tiny-chat", repo: repo, files: ["tiny-chat.gguf"], required: ["tiny-chat.gguf"], format: .gguf,
        capabilities: [.textGeneration, .embeddings], contextLength: 2048, sizeBytes: 700_000,
        description: "A tiny random llama for tests")

    /// Writes the model, serves it from a mirror, pulls it through ModelDepot into `cache`, and returns the
    /// manager and catalog that find it.
    static func pulledModel(into folder: TemporaryDirectory) async throws -> (ModelManager, ModelCatalog) {
        let repoFolder = folder.path("mirror/\(repo)")
        try FileManager.default.createDirectory(at: repoFolder, withIntermediateDirectories: true)
        try await run(
            python,
            [
                packageRoot.appendingPathComponent("Tests/PythonPeers/write_chat_model.py").path,
                repoFolder.appendingPathComponent("tiny-chat.gguf").path,
            ])
        let mirror = MirrorServer(
            root: folder.path("mirror"), logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let (addresses, announce) = AsyncStream<URL>.makeStream()
        let serving = Task { try await mirror.run(host: "127.0.0.1", port: 0) { url in announce.yield(url) } }
        defer { serving.cancel() }
        let endpoint = await addresses.first { _ in true }
        let environment = HubEnvironment(variables: [
            "HF_ENDPOINT": try #require(endpoint, "the mirror did not start").absoluteString,
            "HF_HUB_CACHE": folder.path("cache").path, "HF_HOME": folder.path("home").path,
        ])
        let manager = try ModelManager(configuration: .init(environment: environment))
        _ = try await manager.download(entry).result()
        return (manager, try ModelCatalog(models: [entry]))
    }

    /// Runs a program to its end without blocking a thread of the cooperative pool; throws on a non-zero exit.
    static func run(_ executable: URL, _ arguments: [String]) async throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        // stderr goes to a file: a pipe read only after the exit would hang a child that writes more than
        // the pipe holds (64 KiB).
        let outputs = try TemporaryDirectory(prefix: "modeldepot-peer-output")
        defer { outputs.remove() }
        FileManager.default.createFile(atPath: outputs.path("err").path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: outputs.path("err"))
        let started = await process.runToEnd()
        let message = String(decoding: (try? Data(contentsOf: outputs.path("err"))) ?? Data(), as: UTF8.self)
        try #require(started && process.terminationStatus == 0, "\(executable.lastPathComponent) failed: \(message)")
    }
}
