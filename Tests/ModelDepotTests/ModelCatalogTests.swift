import Foundation
import ModelDepot
import Testing

@Suite struct ModelCatalogTests {
    @Test func theBuiltInCatalogHasEveryModelTheSeedsName() throws {
        let catalog = try ModelCatalog.builtIn()
        let repos = Set(catalog.models.map(\.repo.description))
        for repo in [
            "sentence-transformers/all-MiniLM-L6-v2", "thenlper/gte-small", "BAAI/bge-m3",
            "Qwen/Qwen2.5-0.5B-Instruct-GGUF", "microsoft/Phi-3-mini-4k-instruct-gguf", "TheBloke/Llama-2-7B-Chat-GGUF",
            "FluidInference/parakeet-tdt-0.6b-v3-coreml", "mlx-community/Llama-3.2-1B-Instruct-4bit",
            "openai/whisper-large-v3",
        ] {
            #expect(repos.contains(repo), "\(repo) is missing")
        }
        #expect(Set(catalog.presets.keys) == ["minimal", "standard", "full", "maximum"])
        #expect(catalog.preset("full")?.map(\.name) == ["all-minilm-l6-v2", "qwen2.5-0.5b-instruct-q4"])
        #expect(catalog.recommended(for: .embeddings)?.name == "all-minilm-l6-v2")
        #expect(catalog.entries(format: .gguf).allSatisfy { $0.format == .gguf })
        let parakeet = try #require(catalog.entry(named: "parakeet-tdt-0.6b-v3-coreml"))
        #expect(parakeet.required.count == 6 && parakeet.required.allSatisfy { $0.hasSuffix(".mlmodelc") })
        // Whisper for faster-whisper knows its CTranslate2 files; WhisperKit's needs every compiled part.
        for name in ["whisper-tiny-en-ct2", "whisper-small-ct2", "whisper-large-v3-ct2"] {
            let entry = try #require(catalog.entry(named: name))
            #expect(entry.format == .ctranslate2 && entry.has(.transcription))
            #expect(["config.json", "model.bin", "tokenizer.json"].allSatisfy(entry.required.contains))
            #expect(entry.required.contains { $0.hasPrefix("vocabulary.") })
        }
        for name in ["whisperkit-tiny-en-coreml", "whisperkit-large-v3-coreml"] {
            let parts = try #require(catalog.entry(named: name)).required.filter { $0.hasSuffix(".mlmodelc") }
            #expect(
                parts.map { $0.split(separator: "/").last ?? "" }.sorted() == [
                    "AudioEncoder.mlmodelc", "MelSpectrogram.mlmodelc", "TextDecoder.mlmodelc",
                ])
        }
        // One quantization, not the whole repository.
        #expect(catalog.entry(named: "qwen2.5-0.5b-instruct-q4")?.files == ["qwen2.5-0.5b-instruct-q4_k_m.gguf"])
    }

    @Test func aUserCatalogAddsAndReplacesEntries() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("md-catalog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("catalog.json")
        try Data(
            #"""
            {"version": 1, "models": [
              {"name": "gte-small", "repo": "acme/gte-fork", "files": ["*.safetensors"], "format": "safetensors",
               "capabilities": ["embeddings"], "sizeBytes": 1},
              {"name": "my-model", "repo": "acme/mine", "files": ["*.gguf"], "format": "gguf",
               "capabilities": ["textGeneration"], "sizeBytes": 2, "recommended": true}
            ], "presets": {"mine": ["my-model", "gte-small"]}}
            """#.utf8
        ).write(to: file)
        let catalog = try ModelCatalog.standard(userCatalog: file, environment: [:])
        #expect(catalog.entry(named: "gte-small")?.repo.description == "acme/gte-fork")
        #expect(catalog.entry(named: "my-model")?.format == .gguf)
        #expect(catalog.resolve("mine")?.map(\.name) == ["my-model", "gte-small"])
        #expect(catalog.entry(named: "bge-m3") != nil, "built-in entries stay")

        let viaEnvironment = try ModelCatalog.standard(environment: ["MODELDEPOT_CATALOG": file.path])
        #expect(viaEnvironment.entry(named: "my-model") != nil)
        #expect(throws: ModelDepotError.self) {
            try ModelCatalog.standard(environment: ["MODELDEPOT_CATALOG": folder.appendingPathComponent("nope").path])
        }
    }

    @Test func badCatalogsAreRefusedWithAReason() throws {
        let bad = [
            #"{"version": 2, "models": []}"#,
            #"{"version": 1, "models": [{"name": "Bad Name", "repo": "a/b", "files": ["x"], "format": "gguf", "capabilities": [], "sizeBytes": 1}]}"#,
            #"{"version": 1, "models": [{"name": "x", "repo": "a/../b", "files": ["x"], "format": "gguf", "capabilities": [], "sizeBytes": 1}]}"#,
            #"{"version": 1, "models": [{"name": "x", "repo": "a/b", "files": ["x"], "format": "gguf", "capabilities": [], "sizeBytes": 1}], "presets": {"p": ["y"]}}"#,
            #"{"version": 1, "models": [{"name": "x", "repo": "a/b", "files": [], "format": "gguf", "capabilities": [], "sizeBytes": 1}]}"#,
        ]
        for json in bad {
            #expect(throws: ModelDepotError.self, "\(json)") { try ModelCatalog(json: Data(json.utf8)) }
        }
    }
}
