/// Something that turns texts into vectors: a model in this process (`SentenceEmbedder`), a local server or a
/// cloud API (`OpenAICompatibleProvider`). Code written against it works with either.
///
/// ```swift
/// func index(_ documents: [String], with embedder: any TextEmbedder) async throws -> [[Float]] {
///     try await embedder.embed(documents)
/// }
/// ```
public protocol TextEmbedder: Sendable {
    /// One vector per text, in order.
    func embed(_ texts: [String]) async throws -> [[Float]]
}

extension TextEmbedder {
    /// The vector of one text.
    public func embed(_ text: String) async throws -> [Float] {
        try await embed([text])[0]
    }
}
