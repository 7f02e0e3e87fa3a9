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
public final class SentenceEmbedder: Sendable {
    /// The tokenizer, whose ``WordPieceTokenizer/maxSequenceLength`` is where texts are cut.
    public let tokenizer: WordPieceTokenizer
    let encoder: BertEncoder
    let pooling: SentencePooling
    private let queue = BlockingWorkQueue(label: "ModelDepot.embeddings")

    /// Loads the model in `folder`: `config.json`, `model.safetensors`, the tokenizer files, and the
    /// sentence-transformers files (`modules.json`, `1_Pooling/config.json`, `sentence_bert_config.json`).
    ///
    /// - Throws: `invalidModelFile` when a file is missing, truncated, or describes something other than a
    ///   BERT model, with what to do.
    public init(folder: URL) throws {
        tokenizer = try WordPieceTokenizer(folder: folder)
        let configuration = try BertConfiguration(url: folder.appendingPathComponent("config.json"))
        let weights = try SafetensorsWeights(url: folder.appendingPathComponent("model.safetensors"))
        encoder = try BertEncoder(configuration: configuration, weights: weights, multiplier: PortableMultiplier())
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
    public convenience init(_ entry: CatalogEntry, in models: ModelManager) throws {
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
        try self.init(folder: folder)
    }

    /// The length of every vector.
    public var dimensions: Int { encoder.configuration.hiddenSize }

    /// The most tokens a text is encoded into; longer texts are cut (``embed(_:)`` does not fail).
    public var maxSequenceLength: Int { tokenizer.maxSequenceLength }

    /// What does the matrix arithmetic.
    public var arithmetic: String { encoder.multiplier.name }

    /// The vector of `text`. Runs on its own thread, not the cooperative pool.
    public func embed(_ text: String) async throws -> [Float] {
        try await embed(batch: [text])[0]
    }

    /// The vectors of `texts`, in order. Each text is encoded alone, so padding never changes a vector;
    /// cancelling stops between texts.
    public func embed(batch texts: [String]) async throws -> [[Float]] {
        var vectors: [[Float]] = []
        vectors.reserveCapacity(texts.count)
        for text in texts {
            try Task.checkCancellation()
            let encoding = tokenizer.encode(text)
            let encoder = self.encoder
            let pooling = self.pooling
            vectors.append(
                try await queue.run {
                    let tokens = try encoder.encode(ids: encoding.ids, mask: encoding.attentionMask)
                    return pooling.pool(tokens, mask: encoding.attentionMask, width: encoder.configuration.hiddenSize)
                })
        }
        return vectors
    }
}
