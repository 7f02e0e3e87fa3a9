import Foundation
import ModelDepot
import ModelDepotInference
import ModelDepotTesting
import Testing

/// Our client against the real llama.cpp server running a model ModelDepot pulled through its own mirror.
@Suite(.enabled(if: LlamaPeer.isInstalled, "llama-cpp-python is not in ./.venv (scripts/test installs it)"))
struct LlamaServerTests {
    static let apiKey = "test-key-123"

    @Test func chatStopsMaxTokensEmbeddingsOverflowAndKeys() async throws {
        let folder = try TemporaryDirectory(prefix: "modeldepot-llama")
        defer { folder.remove() }
        let (manager, catalog) = try await LlamaPeer.pulledModel(into: folder)
        let model = try LocalModel.resolve("tiny-chat", catalog: catalog, manager: manager)
        #expect(model.file.lastPathComponent == "tiny-chat.gguf")
        let withoutRuntime = InferenceSelector(
            manager: manager, catalog: catalog, transport: OpenAICompatibleProvider.sharedTransport,
            findRuntime: { nil })
        #expect(
            withoutRuntime.localAvailability(model: "tiny-chat") == .unavailable(reason: LocalServerRuntime.installHint)
        )
        let withRuntime = InferenceSelector(
            manager: manager, catalog: catalog, transport: OpenAICompatibleProvider.sharedTransport,
            findRuntime: { LlamaPeer.runtime })
        #expect(withRuntime.localAvailability(model: "tiny-chat") == .available)
        let server = try await LocalModelServer.start(
            model: model.file, alias: "tiny", runtime: LlamaPeer.runtime, contextLength: 2048,
            extraArguments: ["--api_key", Self.apiKey])
        #if os(Linux)
            // Started from a task, whose thread blocks signals: the child must still get SIGTERM.
            let status = try String(contentsOfFile: "/proc/\(server.processIdentifier)/status", encoding: .utf8)
            #expect(status.split(separator: "\n").contains("SigBlk:\t0000000000000000"))
        #endif
        do {
            try await exercise(server.baseURL)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    private func exercise(_ baseURL: URL) async throws {
        let provider = try OpenAICompatibleProvider(baseURL: baseURL, model: "tiny", credentials: .apiKey(Self.apiKey))
        #expect(try await provider.models() == ["tiny"])
        let messages: [ChatMessage] = [.system("You are terse."), .user("Tell me about the model cache")]
        let greedy = GenerationConfig(temperature: 0, maxTokens: 12, seed: 7)

        // Non-streamed: the server counts the tokens; the tiny model never ends on its own.
        let whole = try await provider.generate(messages: messages, config: greedy)
        #expect(whole.finishReason == .length)
        #expect(whole.usage?.completionTokens == 12)
        #expect(!whole.text.isEmpty)

        // Streamed: one chunk per token, the same greedy text, measurements on every chunk.
        var chunks: [GenerationChunk] = []
        for try await chunk in provider.stream(messages: messages, config: greedy) { chunks.append(chunk) }
        let final = try #require(chunks.last)
        #expect(final.isComplete && final.finishReason == .length)
        #expect(final.tokenCount == 12)
        #expect(chunks.dropLast().count == 12)
        #expect(chunks.map(\.text).joined() == whole.text)
        #expect(final.timeToFirstToken != nil && (final.tokensPerSecond ?? 0) > 0)

        // A stop string: the reply ends before it, with finish reason `stop`.
        let words = whole.text.split(separator: " ")
        try #require(words.count >= 3, "the reply '\(whole.text)' is too short to pick a stop word")
        let stopWord = " " + words[2]
        let stopped = try await provider.stream(messages: messages, config: greedy.stopSequences([stopWord])).collect()
        #expect(stopped.finishReason == .stop)
        #expect(whole.text.hasPrefix(stopped.text) && !stopped.text.contains(stopWord))
        #expect(stopped.text.count < whole.text.count)

        // Embeddings: one mean-pooled vector per text, in order.
        let vectors = try await provider.embed(["the cat", "a river of stars", "the cat"])
        #expect(vectors.count == 3 && vectors.allSatisfy { $0.count == 64 })
        #expect(abs((cosineSimilarity(vectors[0], vectors[2]) ?? 0) - 1) < 1e-5)
        #expect((cosineSimilarity(vectors[0], vectors[1]) ?? 1) < 0.9999)

        // A prompt over the context: the stream ends with no data and no [DONE]; non-streamed it is a 400.
        let tooLong: [ChatMessage] = [.user(String(repeating: "cat ", count: 2500))]
        let (overflowChunks, overflowError) = await drain(provider.stream(messages: tooLong, config: greedy))
        #expect(overflowChunks.isEmpty)
        #expect(overflowError?.code == .incompleteStream)
        do {
            _ = try await provider.generate(messages: tooLong, config: greedy)
            Issue.record("a prompt over the context was answered")
        } catch let error as ModelDepotError {
            #expect(error.code == .contextLengthExceeded, "\(error)")
        }

        // A wrong key: refused at once, with the server's words, not retried.
        let wrongKey = try OpenAICompatibleProvider(
            baseURL: baseURL, model: "tiny", credentials: .apiKey("wrong"),
            transport: OpenAICompatibleProvider.sharedTransport, clock: ImmediateClock())
        let (_, keyError) = await drain(wrongKey.stream(messages: messages, config: greedy))
        #expect(keyError?.code == .unauthorized)
        #expect(keyError?.message.contains("Invalid API key") == true)
        #expect(keyError?.isRetryable == false)

        // Leaving a long reply early ends it at once, and the server is free for the next request.
        var seen = 0
        for try await _ in provider.stream(
            messages: messages, config: GenerationConfig(temperature: 0, maxTokens: 1500))
        {
            seen += 1
            if seen == 3 { break }
        }
        #expect(seen == 3)
        let after = try await withTimeLimit(60) { try await provider.generate(messages: messages, config: greedy) }
        #expect(after.text == whole.text)
    }
}
