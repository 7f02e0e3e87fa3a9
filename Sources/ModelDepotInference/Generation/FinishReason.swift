/// Why a reply ended, as the server reported it.
public enum FinishReason: Sendable, Hashable, CustomStringConvertible {
    /// The model ended its reply, or generated a stop sequence.
    case stop
    /// The reply reached `maxTokens` (or the context filled up): it is cut short.
    case length
    /// The server's content filter removed or stopped the reply.
    case contentFilter
    /// The model asked to call tools.
    case toolCalls
    /// A reason this library does not know, kept verbatim.
    case other(String)

    public init(rawValue: String) {
        switch rawValue {
        case "stop", "eos", "stop_sequence", "end_turn": self = .stop
        case "length", "max_tokens": self = .length
        case "content_filter": self = .contentFilter
        case "tool_calls", "function_call": self = .toolCalls
        default: self = .other(rawValue)
        }
    }

    public var rawValue: String {
        switch self {
        case .stop: "stop"
        case .length: "length"
        case .contentFilter: "content_filter"
        case .toolCalls: "tool_calls"
        case .other(let value): value
        }
    }

    public var description: String { rawValue }
}
