/// A piece of a streamed reply, with the stream's running measurements.
///
/// Every chunk but the last carries text (usually one token's worth). The last one has ``isComplete`` set,
/// the ``finishReason`` and the ``usage`` when the server sent them, and may carry no text.
public struct GenerationChunk: Sendable, Hashable {
    /// The text this chunk adds to the reply.
    public var text: String
    /// Tokens generated so far, this chunk included: the server's count when it reported usage, otherwise one
    /// per content event (OpenAI-compatible servers send one event per token).
    public var tokenCount: Int
    /// Decoding speed: tokens after the first divided by the time since the first arrived. Nil until two
    /// tokens have arrived.
    public var tokensPerSecond: Double?
    /// From sending the request to the first text, for the whole stream (retries included).
    public var timeToFirstToken: Duration?
    /// From sending the request to this chunk.
    public var elapsed: Duration
    /// Set on the last chunk.
    public var isComplete: Bool
    public var finishReason: FinishReason?
    public var usage: TokenUsage?

    public init(
        text: String, tokenCount: Int, tokensPerSecond: Double? = nil, timeToFirstToken: Duration? = nil,
        elapsed: Duration = .zero, isComplete: Bool = false, finishReason: FinishReason? = nil,
        usage: TokenUsage? = nil
    ) {
        self.text = text
        self.tokenCount = tokenCount
        self.tokensPerSecond = tokensPerSecond
        self.timeToFirstToken = timeToFirstToken
        self.elapsed = elapsed
        self.isComplete = isComplete
        self.finishReason = finishReason
        self.usage = usage
    }
}
