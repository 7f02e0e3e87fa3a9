import Foundation
import ModelDepot
import ModelDepotCore

/// Sentence embeddings computed in-process from a sentence-transformers BERT model (all-MiniLM-L6-v2,
/// gte-small): WordPiece tokens, the BERT encoder over the model's safetensors weights, then the pooling
/// and normalisation the model's files name.
///
/// ```swift
/// let embedder = try SentenceEmbedder(catalogEntry, in: models)
/// let vector = try await embedder.embed("Hello world")   // 384 floats for all-MiniLM-L6-v2
/// ```
public final class SentenceEmbedder: TextEmbedder {
    /// The tokenizer, whose ``WordPieceTokenizer/maxSequenceLength`` is where texts are cut.
    public let tokenizer: WordPieceTokenizer
    let encoder: BertEncoder
    let pooling: SentencePooling
    private let queue = BlockingWorkQueue(label: "ModelDepot.embeddings")

    /// Loads the model in `folder`: `config.json`, `model.safetensors`, the tokenizer files, and the
    /// sentence-transformers files (`modules.json`, `1_Pooling/config.json`, `sentence_bert_config.json`).
    /// The matrix arithmetic is the system's BLAS when one loads (OpenBLAS on Linux, Accelerate on Apple
    /// platforms), else portable Swift; ``arithmetic`` says which.
    ///
    /// - Throws: `invalidModelFile` when a file is missing, truncated, or describes something other than a
    ///   BERT model, with what to do.
    public init(folder: URL, arithmetic: EmbeddingArithmetic = .automatic) throws {
        tokenizer = try WordPieceTokenizer(folder: folder)
        let configuration = try BertConfiguration(url: folder.appendingPathComponent("config.json"))
        let weights = try SafetensorsWeights(url: folder.appendingPathComponent("model.safetensors"))
        encoder = try BertEncoder(
            configuration: configuration, weights: weights, multiplier: arithmetic.multiplier())
        pooling = try SentencePooling(folder: folder)
        guard tokenizer.maxSequenceLength <= configuration.maxPositions else {
            throw ModelDepotError(
                .invalidModelFile,
                "The tokenizer allows \(tokenizer.maxSequenceLength) tokens but the model has \(configuration.maxPositions) positions."
            )
        }
    }

    /// Loads a catalog model that `models` reports ready.
    ///
    /// - Throws: `notCached` when the model is not downloaded, only partly, or damaged — the message says
    ///   what to pull.
    public convenience init(
        _ entry: CatalogEntry, in models: ModelManager, arithmetic: EmbeddingArithmetic = .automatic
    ) throws {
        let report = try models.readiness(of: entry)
        // Unverified: every file is there, only not re-hashed since the pull (the pull hashed each one).
        let loadable: Bool
        switch report.readiness {
        case .ready, .unverified: loadable = true
        default: loadable = false
        }
        guard loadable,
            let folder = models.localPath(entry.repo, type: entry.repoType, revision: entry.revision ?? "main")
        else {
            throw ModelDepotError(
                .notCached,
                "\(entry.name) is not ready to load (\(report.readiness.name)). Download it first: ModelManager.download(entry) for '\(entry.name)'."
            )
        }
        try self.init(folder: folder, arithmetic: arithmetic)
    }

    /// The length of every vector.
    public var dimensions: Int { encoder.configuration.hiddenSize }

    /// The most tokens a text is encoded into; longer texts are cut (embedding them does not fail).
    public var maxSequenceLength: Int { tokenizer.maxSequenceLength }

    /// What does the matrix arithmetic.
    public var arithmetic: String { encoder.multiplier.name }

    /// How many encoder layers the model has.
    public var layerCount: Int { encoder.configuration.layers }

    /// The multiply's own speed here, in GFLOP/s: a 512 × hidden by hidden × 4·hidden product, best of three
    /// (for benchmarks, beside the speed the whole encoder achieves).
    public func multiplyGFLOPS() -> Double {
        let h = dimensions
        let a = [Float](repeating: 0.5, count: 512 * h)
        let b = [Float](repeating: 0.25, count: 4 * h * h)
        let clock = ContinuousClock()
        var best = Duration.seconds(1000)
        for _ in 0..<3 {
            let start = clock.now
            _ = encoder.multiplier.multiply(a, rows: 512, inner: h, transposed: b, columns: 4 * h)
            best = min(best, clock.now - start)
        }
        let seconds = Double(best.components.seconds) + Double(best.components.attoseconds) / 1e18
        return 2 * 512 * Double(h) * Double(4 * h) / seconds / 1e9
    }

    /// The vector of `text`. Runs on its own thread, not the cooperative pool.
    public func embed(_ text: String) async throws -> [Float] {
        try await embed(batch: [text])[0]
    }

    /// The vectors of `texts`, in order: `embed(batch:progress:)`, as every `TextEmbedder` spells it.
    public func embed(_ texts: [String]) async throws -> [[Float]] {
        try await embed(batch: texts)
    }

    /// The vectors of `texts`, in order. Tokenizing and encoding run on the embedder's own thread, never on the
    /// cooperative pool. Texts are sorted by length and encoded in groups of similar length,
    /// each group as one padded matrix; padding never reaches a text's vector (attention stays within each
    /// text). Cancelling stops between groups.
    ///
    /// - Parameters:
    ///   - texts: the texts, in the order their vectors are returned.
    ///   - progress: told how many texts are done, and of how many, after each group.
    public func embed(
        batch texts: [String], progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) async throws -> [[Float]] {
        // Tokenizing a long batch is real work too: on the encoder's thread, not the cooperative pool.
        let tokenizer = self.tokenizer
        let encodings = try await queue.run { texts.map { tokenizer.encode($0) } }
        let order = encodings.indices.sorted { encodings[$0].ids.count < encodings[$1].ids.count }
        var vectors = [[Float]](repeating: [], count: texts.count)
        var start = 0
        while start < order.count {
            try Task.checkCancellation()
            // Up to 32 texts of similar length (at most twice the shortest, plus a few tokens, so padding wastes
            // little), within 8192 token rows.
            let shortest = encodings[order[start]].ids.count
            var end = start + 1
            while end < order.count, end - start < 32 {
                let length = encodings[order[end]].ids.count
                guard length <= 2 * shortest + 8, (end - start + 1) * length <= 8192 else { break }
                end += 1
            }
            let group = Array(order[start..<end])
            let sequences = group.map { encodings[$0].ids }
            let encoder = self.encoder
            let pooling = self.pooling
            let pooled = try await queue.run {
                try encoder.encode(sequences).map { tokens in
                    pooling.pool(
                        tokens, mask: Array(repeating: 1, count: tokens.count / encoder.configuration.hiddenSize),
                        width: encoder.configuration.hiddenSize)
                }
            }
            for (index, vector) in zip(group, pooled) { vectors[index] = vector }
            start = end
            progress?(start, order.count)
        }
        return vectors
    }
}
