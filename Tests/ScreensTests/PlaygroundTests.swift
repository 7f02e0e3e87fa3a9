import Foundation
import ModelDepot
import ModelDepotInference
import ModelDepotScreens
import Testing

/// The playgrounds' rules without a model: what a chat request may carry, and how similarity is worded.
@Suite struct PlaygroundTests {
    @Test func chatRequestsAreCheckedBeforeAnythingIsSent() throws {
        let (messages, config) = try ChatPlayground.validated(
            .init(messages: [.user("hi")], system: "  Be brief. ", preset: "precise", maxTokens: 12))
        #expect(messages == [.system("Be brief."), .user("hi")])
        #expect(config.maxTokens == 12 && config.temperature == GenerationConfig.precise.temperature)
        #expect(try ChatPlayground.validated(.init(messages: [.user("hi")], system: " ")).0 == [.user("hi")])
        let bad: [(ChatPlayground.Request, String)] = [
            (.init(messages: []), "Write a message first"),
            (.init(messages: [.user("hi"), .assistant("hello")]), "Write a message first"),
            (.init(messages: [.user("  ")]), "Write a message first"),
            (.init(messages: [.system("x"), .user("hi")]), "system prompt"),
            (.init(messages: [.user("hi")], preset: "wild"), "'wild' is not a preset"),
            (.init(messages: [.user("hi")], maxTokens: 0), "token limit"),
            (.init(messages: Array(repeating: .user("hi"), count: 201)), "too long"),
        ]
        for (request, words) in bad {
            #expect {
                _ = try ChatPlayground.validated(request)
            } throws: { error in
                (error as? ModelDepotError)?.code == .invalidArgument
                    && (error as? ModelDepotError)?.message.contains(words) == true
            }
        }
    }

    @Test func summariesSayHowTheReplyEnded() {
        let cut = ChatPlayground.summary(
            of: GenerationChunk(
                text: "", tokenCount: 8, tokensPerSecond: 31.25, timeToFirstToken: .milliseconds(120),
                isComplete: true, finishReason: .length, usage: TokenUsage(promptTokens: 5, completionTokens: 8)))
        #expect(cut.finishReason == "length" && cut.finishText == "Cut off at the token limit.")
        #expect(cut.usageText == "5 prompt tokens, 8 in the reply · 31.2 tokens/s · first token after 120 ms")
        let bare = ChatPlayground.summary(of: GenerationChunk(text: "", tokenCount: 1, isComplete: true))
        #expect(bare.finishReason == nil && bare.finishText == "Ended." && bare.usageText == "1 token")
    }

    struct FixedEmbedder: TextEmbedder {
        func embed(_ texts: [String]) async throws -> [[Float]] {
            texts.map { $0.contains("cat") ? [1, 0.1] : $0.contains("dog") ? [0.9, 0.3] : [-1, 0] }
        }
    }

    @Test func similarityBetweenSentences() async throws {
        let playground = EmbeddingsPlayground(embedder: FixedEmbedder(), source: "test")
        let result = try await playground.compare(["a cat", "", "a dog", " stocks fell "])
        #expect(result.sentences == ["a cat", "a dog", "stocks fell"] && result.dimensions == 2)
        #expect(result.similarityTexts[0][0] == "1.00" && result.similarityTexts[0][2] == "-1.00")
        #expect(result.closestText == "Most alike: “a cat” and “a dog” (0.98).")
        await #expect(throws: ModelDepotError.self) { try await playground.compare(["only one"]) }
        await #expect(throws: ModelDepotError.self) {
            try await playground.compare(Array(repeating: "x", count: 33))
        }
    }
}
