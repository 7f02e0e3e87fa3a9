import Foundation
import Logging
import ModelDepot
import ModelDepotEmbeddings
import ModelDepotServer
import ModelDepotTesting
import Testing

/// Format checks against files the reference writers produced (llama.cpp's `gguf`, `safetensors`), and
/// readiness of the real all-MiniLM-L6-v2 pulled through our mirror by its catalog name.
@Suite struct FormatInteropTests {
    static func writeModels(into folder: TemporaryDirectory) async throws -> [String: Any] {
        try await PythonInteropTests.runPython(
            script: "write_models.py", [folder.url.path], endpoint: nil, home: folder.url)
    }

    /// A copy of `source` cut to `size` bytes.
    static func truncated(_ source: String, to size: Int, in folder: TemporaryDirectory) throws -> String {
        let copy = folder.path("cut-" + (source as NSString).lastPathComponent).path
        try Data(try Data(contentsOf: URL(fileURLWithPath: source)).prefix(size)).write(to: URL(fileURLWithPath: copy))
        return copy
    }

    @Test func ggufWrittenByLlamaCppsWriterParses() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-formats")
        defer { folder.remove() }
        let models = try await Self.writeModels(into: folder)
        let written = try #require(models["gguf"] as? [String: Any])
        let path = try #require(written["path"] as? String)
        let header = try GGUFHeader.read(path: path)
        #expect(header.version == 3)
        #expect(header.architecture == "llama" && header.name == "tiny-test")
        #expect(header.contextLength == 2048)
        #expect(header.quantization == "Q4_K_M")
        #expect(header.tensorCount == 2)
        #expect(header.parameterCount == (written["parameters"] as? NSNumber)?.uint64Value)
        #expect(header.requiredFileSize == (written["size"] as? NSNumber)?.int64Value)
        // The KV cache at the declared context: 2 × 4 layers × 2048 × 2 KV heads × (64 / 8) × 2 bytes.
        #expect(header.blockCount == 4 && header.headCount == 8 && header.headCountKV == 2)
        #expect(header.kvCacheBytes(context: 2048) == 2 * 4 * 2048 * 2 * 8 * 2)
        // Per-layer KV heads (1, 0, 2) and keys 48 wide, values 32: 1024 × 2 bytes × (1 + 0 + 2) × (48 + 32).
        let layeredPath = try #require((models["layered"] as? [String: Any])?["path"])
        let layered = try GGUFHeader.read(path: try #require(layeredPath as? String))
        #expect(layered.headCountKVPerLayer == [1, 0, 2] && layered.headCount == 8, "\(layered)")
        #expect(layered.keyLength == 48 && layered.valueLength == 32)
        #expect(layered.kvCacheBytes(context: 1024) == 1024 * 2 * 3 * (48 + 32))

        let size = try #require(written["size"] as? Int)
        for cut in [size - 1, size / 2, 100, 3] {
            #expect("cut to \(cut) bytes") {
                try GGUFHeader.read(path: try Self.truncated(path, to: cut, in: folder))
            } throws: { ($0 as? ModelDepotError)?.code == .invalidModelFile }
        }
        let notGGUF = folder.path("fake.gguf")
        try Data("GGML not really".utf8).write(to: notGGUF)
        #expect {
            try GGUFHeader.read(path: notGGUF.path)
        } throws: { error in
            let failure = error as? ModelDepotError
            return failure?.code == .invalidModelFile && failure?.message == "not a GGUF file (wrong magic bytes)"
        }
    }

    /// `info --json`'s fields come from these summaries: the header's facts as fields, the line only for people.
    @Test func summariesGiveTheHeadersFacts() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-formats")
        defer { folder.remove() }
        let written = try await Self.writeModels(into: folder)
        let gguf = try #require(written["gguf"] as? [String: Any])
        let ggufPath = try #require(gguf["path"] as? String)
        let ggufSummary = try #require(try ModelFileSummary.read(path: ggufPath))
        #expect(ggufSummary.format == "gguf" && ggufSummary.version == 3 && ggufSummary.architecture == "llama")
        #expect(ggufSummary.quantization == "Q4_K_M" && ggufSummary.contextLength == 2048)
        #expect(ggufSummary.tensorCount == 2 && ggufSummary.dtypes == nil)
        #expect(ggufSummary.parameters == (gguf["parameters"] as? NSNumber)?.uint64Value)
        #expect(ggufSummary.description.hasPrefix("GGUF v3 · 2 tensors · llama · Q4_K_M"))
        let safetensors = try #require(written["safetensors"] as? [String: Any])
        let path = try #require(safetensors["path"] as? String)
        let summary = try #require(try ModelFileSummary.read(path: path))
        #expect(summary.format == "safetensors" && summary.tensorCount == 2 && summary.parameters == 205)
        #expect(summary.dtypes == ["F16", "F32"] && summary.architecture == nil)
        #expect(summary.description == "safetensors · 2 tensors · F16/F32 · 205 parameters")
        // As JSON: the fields, nothing but them.
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(summary)) as? [String: Any])
        #expect(Set(object.keys) == ["format", "parameters", "tensorCount", "dtypes"])
        #expect(try ModelFileSummary.read(path: folder.path("notes.txt").path) == nil)
    }

    @Test func safetensorsWrittenByTheReferenceLibraryParses() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-formats")
        defer { folder.remove() }
        let written = try #require(try await Self.writeModels(into: folder)["safetensors"] as? [String: Any])
        let path = try #require(written["path"] as? String)
        let header = try SafetensorsHeader.read(path: path)
        #expect(header.tensorCount == 2 && header.parameterCount == 205)
        #expect(header.dtypes == ["F32": 1, "F16": 1])
        #expect(header.metadata["format"] == "pt")
        let size = try #require(written["size"] as? Int)
        for cut in [size - 1, 12, 4] {
            #expect("cut to \(cut) bytes") {
                try SafetensorsHeader.read(path: try Self.truncated(path, to: cut, in: folder))
            } throws: { ($0 as? ModelDepotError)?.code == .invalidModelFile }
        }
    }

    @Test func theRealMiniLMIsReadyAfterAPullByCatalogName() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-minilm")
        defer { folder.remove() }
        let model = try #require(try await Self.writeModels(into: folder)["minilm"] as? String)
        // The package's files, served as the Hub repository the catalog names.
        let catalog = try ModelCatalog.builtIn()
        let entry = try #require(catalog.entry(named: "all-minilm-l6-v2"))
        let repoFolder = folder.path("repos/\(entry.repo)")
        try FileManager.default.createDirectory(
            at: repoFolder.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: URL(fileURLWithPath: model), to: repoFolder)
        let server = MirrorServer(
            roots: [folder.path("repos")], caches: [], stateFolder: folder.path("state"),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await MirrorFixture.serving(server, root: folder) { mirror in
            let cache = HubCache(root: folder.path("cache"))
            let models = ModelManager(pull: SnapshotDownloader(hub: HubClient(endpoint: mirror.baseURL), cache: cache))
            let checker = ReadinessChecker(cache: cache)
            #expect(try checker.check(entry).readiness == .notDownloaded)
            #expect(!models.isComplete(entry))
            #expect {
                try SentenceEmbedder(entry, in: models, arithmetic: .portable)
            } throws: { error in
                let failure = error as? ModelDepotError
                return failure?.code == .notCached && failure?.message.contains("Download it first") == true
            }

            let snapshot = try await models.download(entry).result()
            #expect(snapshot.files.contains(try RepoFilePath("model.safetensors")))
            #expect(!snapshot.files.contains(try RepoFilePath("README.md")), "only the entry's files are pulled")
            #expect(models.isComplete(entry))
            let report = try checker.check(entry)
            #expect(report.readiness == .ready, "\(report.readiness)")
            let detail = try #require(report.details["model.safetensors"])
            #expect(detail.contains("23M parameters"), "\(detail)")
            // Ready means usable: the entry loads in-process and embeds.
            let embedder = try SentenceEmbedder(entry, in: models, arithmetic: .portable)
            #expect(try await embedder.embed("Hello world").count == 384)

            // Damage one required file: readiness names it.
            let vocab = snapshot.url(of: try RepoFilePath("vocab.txt")).resolvingSymlinksInPath()
            try Data("short".utf8).write(to: vocab)
            guard case .corrupt(let files) = try checker.check(entry).readiness else {
                Issue.record("a damaged vocab.txt should make the model corrupt")
                return
            }
            #expect(files.keys.contains("vocab.txt"))
            // And a missing one.
            try FileManager.default.removeItem(at: snapshot.url(of: try RepoFilePath("tokenizer.json")))
            #expect(try checker.check(entry).readiness == .partial(missing: ["tokenizer.json"]))
        }
    }
}
