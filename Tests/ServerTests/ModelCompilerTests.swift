import Foundation
import ModelDepot
import ModelDepotTesting
import Synchronization
import Testing

/// A compiler that writes a `.mlmodelc` folder naming its source, and counts its calls.
final class FakeCompiler: ModelCompiler {
    let platformKey: String
    private let calls = Mutex<[String]>([])
    private let failing: Bool

    init(platformKey: String = "test-1.0", failing: Bool = false) {
        self.platformKey = platformKey
        self.failing = failing
    }

    var compiled: [String] { calls.withLock { $0 } }

    func compile(_ model: URL) async throws -> URL {
        calls.withLock { $0.append(model.lastPathComponent) }
        if failing { throw CocoaError(.fileReadCorruptFile) }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: model.path, isDirectory: &isFolder) else {
            throw CocoaError(.fileNoSuchFile)
        }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("fake-\(UUID().uuidString).mlmodelc")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        try Data(model.lastPathComponent.utf8).write(to: output.appendingPathComponent("coremldata.bin"))
        return output
    }
}

/// The Core ML compile phase through its seam: once per model and OS version, shown as `compiling`, kept beside
/// the snapshot; readiness tells "downloaded" from "compiled". (Core ML itself exists only on Apple platforms.)
@Suite struct ModelCompilerTests {
    static let layout: [String: [UInt8]] = [
        "acme/vision/Classifier.mlpackage/Manifest.json": Array("{}".utf8),
        "acme/vision/Classifier.mlpackage/Data/com.apple.CoreML/model.mlmodel": SampleData.bytes(count: 4096, seed: 1),
        "acme/vision/Speech.mlmodel": SampleData.bytes(count: 2048, seed: 2),
        "acme/vision/README.md": Array("# vision\n".utf8),
    ]

    /// An app sets the compiler on the manager's configuration (the pull itself is the package's own).
    @Test func theConfigurationsCompilerCompilesWhatTheManagerDownloads() async throws {
        try await HubFixture.with(Self.layout) { hub in
            var configuration = ModelManager.Configuration(endpoint: hub.mirror.baseURL, token: nil, cache: hub.cache)
            let compiler = FakeCompiler()
            configuration.modelCompiler = compiler
            let models = try ModelManager(configuration: configuration)
            let snapshot = try await models.download(try RepoID("acme/vision")).result()
            #expect(compiler.compiled.sorted() == ["Classifier.mlpackage", "Speech.mlmodel"])
            #expect(Set(snapshot.compiledModels.keys) == ["Classifier.mlpackage", "Speech.mlmodel"])
        }
    }

    @Test func modelsCompileOncePerOSVersion() async throws {
        try await HubFixture.with(Self.layout) { hub in
            var pull = hub.downloader()
            let compiler = FakeCompiler()
            pull.modelCompiler = compiler
            let phases = Mutex<[SnapshotProgress]>([])
            let snapshot = try await pull.download(SnapshotRequest(repo: try RepoID("acme/vision"))) { progress in
                phases.withLock { $0.append(progress) }
            }
            #expect(compiler.compiled.sorted() == ["Classifier.mlpackage", "Speech.mlmodel"])
            #expect(Set(snapshot.compiledModels.keys) == ["Classifier.mlpackage", "Speech.mlmodel"])
            let classifier = try #require(snapshot.compiledModels["Classifier.mlpackage"])
            #expect(classifier.lastPathComponent == "Classifier.mlmodelc")
            #expect(
                try Data(contentsOf: classifier.appendingPathComponent("coremldata.bin"))
                    == Data("Classifier.mlpackage".utf8))
            #expect(!classifier.path.hasPrefix(snapshot.folder.path), "never inside the snapshot")
            let compiling = phases.withLock { $0 }.filter { $0.phase == .compiling }
            #expect(compiling.first?.modelsToCompile == 2 && compiling.last?.modelsCompiled == 2, "\(compiling)")
            #expect(phases.withLock { $0 }.last?.phase == .completed)

            // Again on the same OS: nothing to compile. After an OS update: compiled again.
            _ = try await pull.download(SnapshotRequest(repo: try RepoID("acme/vision")))
            #expect(compiler.compiled.count == 2)
            let checker = ReadinessChecker(cache: hub.cache)
            let report = try checker.check(try RepoID("acme/vision"))
            #expect(checker.uncompiledModels(in: report, platformKey: "test-1.0").isEmpty)
            #expect(
                checker.uncompiledModels(in: report, platformKey: "test-2.0").sorted() == [
                    "Classifier.mlpackage", "Speech.mlmodel",
                ])
            let updated = FakeCompiler(platformKey: "test-2.0")
            pull.modelCompiler = updated
            _ = try await pull.download(SnapshotRequest(repo: try RepoID("acme/vision")))
            #expect(updated.compiled.count == 2)
        }
    }

    @Test func aModelThatDoesNotCompileSaysSoAndKeepsItsFiles() async throws {
        try await HubFixture.with(Self.layout) { hub in
            var pull = hub.downloader()
            pull.modelCompiler = FakeCompiler(failing: true)
            let error = await #expect(throws: ModelDepotError.self) {
                _ = try await pull.download(SnapshotRequest(repo: try RepoID("acme/vision")))
            }
            #expect(error?.code == .invalidModelFile && error?.message.contains("Core ML could not compile") == true)
            // The download itself stands: without a compiler the pull is complete from the cache.
            pull.modelCompiler = nil
            let snapshot = try await pull.download(SnapshotRequest(repo: try RepoID("acme/vision")))
            #expect(snapshot.filesDownloaded == 0 && snapshot.compiledModels.isEmpty)
        }
    }
}
