/// Cosine similarity of two vectors of the same length: 1 for the same direction, 0 for unrelated, -1 for
/// opposite. Nil when the lengths differ or a vector is all zeros.
public func cosineSimilarity(_ a: [Float], _ b: [Float]) -> Double? {
    guard a.count == b.count, !a.isEmpty else { return nil }
    var dot = 0.0
    var normA = 0.0
    var normB = 0.0
    for index in a.indices {
        let x = Double(a[index])
        let y = Double(b[index])
        dot += x * y
        normA += x * x
        normB += y * y
    }
    guard normA > 0, normB > 0 else { return nil }
    return dot / (normA.squareRoot() * normB.squareRoot())
}

/// One result of a vector search: where it is in the searched list, and how similar it is to the query.
public struct VectorMatch: Sendable, Equatable {
    /// The position in the vectors searched.
    public var index: Int
    /// The cosine similarity to the query.
    public var similarity: Double

    /// A match; searches make these.
    public init(index: Int, similarity: Double) {
        self.index = index
        self.similarity = similarity
    }
}

/// The `count` vectors most similar to `query`, most similar first (ties: the earlier vector first).
/// Vectors of another length, or all zeros, never match. A semantic search over a few thousand documents:
///
/// ```swift
/// let documentVectors = try await embedder.embed(documents)
/// let query = try await embedder.embed("How do I resume a download?")
/// for match in nearest(to: query, in: documentVectors, count: 3) { print(documents[match.index]) }
/// ```
public func nearest(to query: [Float], in vectors: [[Float]], count: Int) -> [VectorMatch] {
    guard count > 0 else { return [] }
    let scored = vectors.enumerated().compactMap { index, vector in
        cosineSimilarity(query, vector).map { VectorMatch(index: index, similarity: $0) }
    }
    return Array(
        scored.sorted { ($0.similarity, -$0.index) > ($1.similarity, -$1.index) }.prefix(count))
}
