import Foundation
import ModelDepot
import ModelDepotInference
import ModelDepotTesting

/// Bytes of OpenAI-style stream events, as servers send them.
enum StreamEvents {
    static func role(_ newline: String = "\n") -> String {
        #"data: {"choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}"# + newline + newline
    }

    static func content(_ text: String, _ newline: String = "\n") -> String {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return #"data: {"choices":[{"index":0,"delta":{"content":"\#(escaped)"},"finish_reason":null}]}"# + newline
            + newline
    }

    static func finish(_ reason: String, _ newline: String = "\n") -> String {
        #"data: {"choices":[{"index":0,"delta":{},"finish_reason":"\#(reason)"}]}"# + newline + newline
    }

    static func usage(prompt: Int, completion: Int) -> String {
        #"data: {"choices":[],"usage":{"prompt_tokens":\#(prompt),"completion_tokens":\#(completion),"total_tokens":\#(prompt + completion)}}"#
            + "\n\n"
    }

    static let done = "data: [DONE]\n\n"
}

/// A provider for a scripted server that retries at once (the clock records the waits).
func scriptedProvider(
    _ server: ScriptedHTTPServer, clock: ImmediateClock = ImmediateClock(), credentials: InferenceCredentials = .none,
    attempts: Int = 3
) throws -> OpenAICompatibleProvider {
    try OpenAICompatibleProvider(
        baseURL: server.baseURL.appendingPathComponent("v1"), model: "tiny", credentials: credentials,
        transport: OpenAICompatibleProvider.sharedTransport, clock: clock,
        retryPolicy: RetryPolicy(maxAttempts: attempts, baseDelay: .milliseconds(100), jitter: 0), random: { 0 })
}

/// Collects the chunks of a stream until it ends or fails; the failure is returned, not thrown.
func drain(_ stream: GenerationStream) async -> (chunks: [GenerationChunk], error: ModelDepotError?) {
    var chunks: [GenerationChunk] = []
    do {
        for try await chunk in stream { chunks.append(chunk) }
        return (chunks, nil)
    } catch let error as ModelDepotError {
        return (chunks, error)
    } catch {
        return (chunks, ModelDepotError(.network, "unexpected error type: \(error)"))
    }
}
