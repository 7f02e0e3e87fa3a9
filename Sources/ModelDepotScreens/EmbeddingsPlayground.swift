import Foundation
import ModelDepot
import ModelDepotInference

/// The Embeddings playground: how alike sentences are, by the cosine similarity of their vectors from any
/// ``TextEmbedder`` (the in-process BERT encoder, an endpoint).
public struct EmbeddingsPlayground: Sendable {
    /// The comparison, ready for the page.
    public struct Result: Sendable, Equatable, Encodable {
        public var sentences: [String]
        /// `similarities[i][j]`: the cosine similarity of sentences i and j, -1 to 1.
        public var similarities: [[Double]]
        /// The same, written with two decimals.
        public var similarityTexts: [[String]]
        public var dimensions: Int
        /// "Most alike: “a cat sat” and “a cat was sitting” (0.91)."
        public var closestText: String
    }

    public let embedder: any TextEmbedder
    /// Where vectors come from, for the page.
    public let source: String

    /// The use of a loaded model this playground holds (nil for an endpoint): the idle unload leaves the model
    /// loaded while a request works with it.
    public var use: RuntimeUse?

    public init(embedder: any TextEmbedder, source: String) {
        self.embedder = embedder
        self.source = source
    }

    /// Compares 2 to 32 sentences (blank lines dropped).
    ///
    /// - Throws: `invalidArgument` for fewer than two sentences, more than 32, or one over 2,000 characters.
    public func compare(_ sentences: [String]) async throws -> Result {
        let sentences = sentences.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        guard (2...32).contains(sentences.count) else {
            throw ModelDepotError(.invalidArgument, "Give 2 to 32 sentences, one a line.")
        }
        guard sentences.allSatisfy({ $0.count <= 2000 }) else {
            throw ModelDepotError(.invalidArgument, "A sentence may have at most 2,000 characters.")
        }
        let vectors = try await embedder.embed(sentences)
        guard vectors.count == sentences.count, let dimensions = vectors.first?.count,
            vectors.allSatisfy({ $0.count == dimensions && dimensions > 0 })
        else {
            throw ModelDepotError(
                .invalidArgument, "The embedder answered with vectors that do not match the sentences.")
        }
        let similarities = vectors.map { a in vectors.map { b in Self.cosine(a, b) } }
        var best: (Int, Int, Double)?
        for i in sentences.indices {
            for j in sentences.indices where j > i {
                if best == nil || similarities[i][j] > best!.2 { best = (i, j, similarities[i][j]) }
            }
        }
        let closest = best.map {
            "Most alike: “\(sentences[$0.0])” and “\(sentences[$0.1])” (\(String(format: "%.2f", $0.2)))."
        }
        return Result(
            sentences: sentences, similarities: similarities,
            similarityTexts: similarities.map { $0.map { String(format: "%.2f", $0) } }, dimensions: dimensions,
            closestText: closest ?? "")
    }

    static func cosine(_ a: [Float], _ b: [Float]) -> Double {
        var dot = 0.0
        var normA = 0.0
        var normB = 0.0
        for (x, y) in zip(a, b) {
            dot += Double(x) * Double(y)
            normA += Double(x) * Double(x)
            normB += Double(y) * Double(y)
        }
        guard normA > 0, normB > 0 else { return 0 }
        return max(-1, min(1, dot / (normA.squareRoot() * normB.squareRoot())))
    }
}
