import ModelDepot

/// Something that writes replies and computes embeddings: a cloud API, a local server, an on-device runtime.
///
/// ```swift
/// let provider = try OpenAICompatibleProvider(baseURL: URL(string: "http://127.0.0.1:8080/v1")!)
/// for try await chunk in provider.stream(messages: [.user("Hello")], config: .precise) {
///     print(chunk.text, terminator: "")
/// }
/// ```
public protocol InferenceProvider: TextEmbedder {
    /// The whole reply at once.
    func generate(messages: [ChatMessage], config: GenerationConfig) async throws -> Generation
    /// The reply as it is generated. Cancelling the task that iterates it stops the generation and closes the
    /// connection; the chunks that arrived before stay with the caller.
    func stream(messages: [ChatMessage], config: GenerationConfig) -> GenerationStream
}

extension InferenceProvider {
    public func generate(_ prompt: String, config: GenerationConfig = .default) async throws -> Generation {
        try await generate(messages: [.user(prompt)], config: config)
    }

    public func stream(_ prompt: String, config: GenerationConfig = .default) -> GenerationStream {
        stream(messages: [.user(prompt)], config: config)
    }
}
