/// Something that writes replies and computes embeddings: a cloud API, a local server, an on-device runtime.
///
/// ```swift
/// let provider = try OpenAICompatibleProvider(baseURL: URL(string: "http://127.0.0.1:8080/v1")!)
/// for try await chunk in provider.stream(messages: [.user("Hello")], config: .precise) {
///     print(chunk.text, terminator: "")
/// }
/// ```
public protocol InferenceProvider: Sendable {
    /// The whole reply at once.
    func generate(messages: [ChatMessage], config: GenerationConfig) async throws -> Generation
    /// The reply as it is generated. Cancelling the task that iterates it stops the generation and closes the
    /// connection; the chunks that arrived before stay with the caller.
    func stream(messages: [ChatMessage], config: GenerationConfig) -> GenerationStream
    /// One vector per text, in order.
    func embed(_ texts: [String]) async throws -> [[Float]]
}

extension InferenceProvider {
    public func generate(_ prompt: String, config: GenerationConfig = .default) async throws -> Generation {
        try await generate(messages: [.user(prompt)], config: config)
    }

    public func stream(_ prompt: String, config: GenerationConfig = .default) -> GenerationStream {
        stream(messages: [.user(prompt)], config: config)
    }

    public func embed(_ text: String) async throws -> [Float] {
        try await embed([text])[0]
    }
}

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
