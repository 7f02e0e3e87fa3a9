import Foundation
import Testing

@testable import ModelDepotInference

/// The fast chunk reader agrees with JSONDecoder, or declines.
@Suite struct ChatChunkReaderTests {
    private func decoded(_ text: String) -> ChatChunkReader.Fields? {
        guard let chunk = try? JSONDecoder().decode(OpenAIWireFormat.ChatChunk.self, from: Data(text.utf8)) else {
            return nil
        }
        let choice = chunk.choices?.first
        return ChatChunkReader.Fields(
            content: choice?.delta?.content, finishReason: choice?.finishReason,
            needsFullDecode: chunk.usage != nil || chunk.error != nil)
    }

    static let samples = [
        #"{"id": "chatcmpl-1", "created": 1795335141, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": " disk"}, "logprobs": null, "finish_reason": null}]}"#,
        #"{"choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}"#,
        #"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
        #"{"choices":[{"delta":{"content":"a \"quoted\" \\ back\/slash\n\t\r\b\f"}}]}"#,
        #"{"choices":[{"delta":{"content":"caf\u00e9 \u65e5\u672c \ud83d\ude00 naïve 🙂"}}]}"#,
        #"{"choices":[{"delta":{"content":""},"finish_reason":"stop"},{"delta":{"content":"second"}}]}"#,
        #"  { "choices" : [ { "delta" : { "content" : "x" , "tool_calls" : [ { "a" : [ 1 , -2.5e3 , true , false , null ] } ] } } ] , "extra" : { } }  "#,
        #"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#,
        #"{"choices":[{"delta":{"content":"x"}}],"usage":null}"#,
        #"{"error":{"message":"boom","type":"server_error"}}"#,
        #"{"choices":null}"#,
        #"{"choices":[{"delta":null,"finish_reason":"stop"}]}"#,
        #"{}"#,
    ]

    @Test(arguments: samples) func agreesWithJSONDecoder(_ text: String) throws {
        let fast = try #require(ChatChunkReader.read(Array(text.utf8)), "the reader declined valid JSON")
        #expect(fast == decoded(text))
    }

    static let malformed = [
        #"{"choices":[{"delta":{"content":"unterminated}}]}"#, #"{"choices":[{"delta":{"content":"x"}}]"#,
        #"{"choices":[{"delta":{"content":"bad \q escape"}}]}"#, #"{"choices":[{"delta":{"content":"\ud83d"}}]}"#,
        #"{"choices":[{"delta":{"content":"x"}}]} trailing"#, "[1,2]", "", "{\"a\":tru}",
        "{\"choices\":[{\"delta\":{\"content\":\"raw\ncontrol\"}}]}",
    ]

    @Test(arguments: malformed) func declinesWhatItCannotRead(_ text: String) {
        #expect(ChatChunkReader.read(Array(text.utf8)) == nil)
    }
}
