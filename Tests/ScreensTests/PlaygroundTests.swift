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

    /// Answers every recording with the same two segments; refuses bytes that are no audio, as servers do.
    struct FixedTranscriber: Transcriber {
        func transcribe(_ audio: AudioInput, options: TranscriptionOptions) async throws -> Transcript {
            guard audio.format != nil else { throw ModelDepotError(.invalidArgument, "\(audio.name) is not audio.") }
            return Transcript(
                text: " Hello there. General Kenobi.", language: options.translate ? "english" : "en",
                duration: 3725.5,
                segments: [
                    .init(start: 0, end: 1.24, text: " Hello there."),
                    .init(start: 3723, end: 3725.5, text: " General Kenobi."),
                ], wordTimestampsMissing: options.wordTimestamps)
        }
    }

    /// A tiny WAV header: enough for the bytes to be known as WAV.
    static let wavBase64 = Data("RIFF\u{24}\u{0}\u{0}\u{0}WAVEfmt ".utf8 + [UInt8](repeating: 0, count: 28))
        .base64EncodedString()

    @Test func aRecordingBecomesRowsAndSubtitles() async throws {
        let playground = TranscribePlayground(transcriber: FixedTranscriber(), source: "test")
        let result = try await playground.transcribe(
            .init(name: "talk.wav", audio: Self.wavBase64, language: " EN ", translate: false, wordTimestamps: true))
        #expect(result.text == "Hello there. General Kenobi.")
        #expect(result.summaryText == "English, 3725.5 s of audio, 2 segments.")
        #expect(result.rows.map(\.timeText) == ["0:00.0–0:01.2", "1:02:03.0–1:02:05.5"])
        #expect(result.rows.map(\.text) == ["Hello there.", "General Kenobi."])
        #expect(result.srt.hasPrefix("1\n00:00:00,000 --> 00:00:01,240\nHello there.\n"))
        #expect(result.vtt.hasPrefix("WEBVTT\n\n00:00:00.000 --> 00:00:01.240\n"))
        #expect(result.notes == ["The server gave no word timings; the times are per segment."])
        let notBase64 = await #expect(throws: ModelDepotError.self) {
            try await playground.transcribe(
                .init(name: "x.wav", audio: "%%%", language: nil, translate: nil, wordTimestamps: nil))
        }
        #expect(notBase64?.message.contains("base64") == true)
        let tooBig = Data(count: TranscribePlayground.maximumAudioBytes + 1).base64EncodedString()
        let big = await #expect(throws: ModelDepotError.self) {
            try await playground.transcribe(
                .init(name: "x.wav", audio: tooBig, language: nil, translate: nil, wordTimestamps: nil))
        }
        #expect(big?.message.contains("modeldepot transcribe") == true)
    }
}
