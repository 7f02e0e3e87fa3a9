import Foundation
import ModelDepot
import ModelDepotTesting
import Testing

/// A multi-part Core ML model (the transcription app's case): ready only when every `.mlmodelc` part is
/// there and none of its files is empty.
@Suite struct CoreMLReadinessTests {
    static let parts = ["Encoder.mlmodelc", "Decoder.mlmodelc"]

    static func entry() throws -> CatalogEntry {
        CatalogEntry(
            name: "two-part-coreml", repo: try RepoID("acme/speech"), files: parts.map { $0 + "/" }, required: parts,
            format: .coreml, capabilities: [.transcription], sizeBytes: 1, description: "test")
    }

    /// Writes a snapshot whose parts have `coremldata.bin`, `model.mil` and `weights/weight.bin`.
    static func makeCache(emptying: String? = nil, leavingOut: String? = nil) throws -> (TemporaryDirectory, HubCache) {
        let folder = try TemporaryDirectory(prefix: "modeldepot-coreml")
        let cache = HubCache(root: folder.path("cache"))
        let repository = cache.repository(try RepoID("acme/speech"))
        try FileManager.default.createDirectory(at: repository.blobsFolder, withIntermediateDirectories: true)
        let commit = String(repeating: "c", count: 40)
        for (index, part) in parts.enumerated() where part != leavingOut {
            for (fileIndex, file) in ["coremldata.bin", "model.mil", "weights/weight.bin"].enumerated() {
                let path = "\(part)/\(file)"
                let bytes = path == emptying ? [] : SampleData.bytes(count: 100 + index * 10 + fileIndex, seed: 5)
                let name = SampleData.sha256(bytes)
                try Data(bytes).write(to: repository.blob(name))
                try repository.link(try RepoFilePath(path), commit: commit, toBlob: name)
            }
        }
        try repository.setRef("main", to: commit)
        return (folder, cache)
    }

    @Test func everyPartPresentAndNonEmptyIsReadyOnceVerified() throws {
        let (folder, cache) = try Self.makeCache()
        defer { folder.remove() }
        let checker = ReadinessChecker(cache: cache)
        #expect(
            try checker.check(try Self.entry()).readiness
                == .unverified([
                    "Decoder.mlmodelc/coremldata.bin", "Decoder.mlmodelc/model.mil",
                    "Decoder.mlmodelc/weights/weight.bin",
                    "Encoder.mlmodelc/coremldata.bin", "Encoder.mlmodelc/model.mil",
                    "Encoder.mlmodelc/weights/weight.bin",
                ]))
        let verified = try checker.check(try Self.entry(), verifying: true)
        #expect(verified.readiness == .ready)
        #expect(verified.details["Encoder.mlmodelc"] == "Core ML model, 3 files")
        // Remembered: the next check is ready without hashing.
        #expect(try checker.check(try Self.entry()).readiness == .ready)
    }

    @Test func anEmptyPartFileIsCorrupt() throws {
        let (folder, cache) = try Self.makeCache(emptying: "Decoder.mlmodelc/weights/weight.bin")
        defer { folder.remove() }
        guard case .corrupt(let files) = try ReadinessChecker(cache: cache).check(try Self.entry()).readiness else {
            Issue.record("an empty weight file should make the model corrupt")
            return
        }
        #expect(files["Decoder.mlmodelc"] == "Decoder.mlmodelc/weights/weight.bin is empty")
    }

    @Test func aMissingPartIsPartial() throws {
        let (folder, cache) = try Self.makeCache(leavingOut: "Decoder.mlmodelc")
        defer { folder.remove() }
        #expect(
            try ReadinessChecker(cache: cache).check(try Self.entry()).readiness
                == .partial(missing: ["Decoder.mlmodelc"]))
    }
}
