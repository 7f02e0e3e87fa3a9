/// A whole reply: its text, why it ended and what it cost.
public struct Generation: Sendable, Hashable {
    public var text: String
    public var finishReason: FinishReason?
    /// The server's token counts, when it sent them (non-streaming replies always do on OpenAI-compatible
    /// servers).
    public var usage: TokenUsage?
    /// Tokens in the reply: the server's count when known, else the number of streamed content events.
    public var tokenCount: Int
    /// For streamed replies, from the request to the first text.
    public var timeToFirstToken: Duration?
    /// From the request to the end of the reply.
    public var duration: Duration
    /// For streamed replies, the decoding speed at the end (see ``GenerationChunk/tokensPerSecond``).
    public var tokensPerSecond: Double?

    public init(
        text: String, finishReason: FinishReason?, usage: TokenUsage?, tokenCount: Int,
        timeToFirstToken: Duration?, duration: Duration, tokensPerSecond: Double?
    ) {
        self.text = text
        self.finishReason = finishReason
        self.usage = usage
        self.tokenCount = tokenCount
        self.timeToFirstToken = timeToFirstToken
        self.duration = duration
        self.tokensPerSecond = tokensPerSecond
    }

    /// The reply made of `text`, measured as of the stream's `last` chunk (nil when none arrived).
    public init(text: String, last: GenerationChunk?) {
        self.init(
            text: text, finishReason: last?.finishReason, usage: last?.usage, tokenCount: last?.tokenCount ?? 0,
            timeToFirstToken: last?.timeToFirstToken, duration: last?.elapsed ?? .zero,
            tokensPerSecond: last?.tokensPerSecond)
    }

    /// True when the reply was cut short by the token limit rather than ended by the model.
    public var isTruncated: Bool { finishReason == .length }
}
